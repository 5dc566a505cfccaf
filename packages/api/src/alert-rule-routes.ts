import type { RequestHandler, Router } from 'express';
import type { RuleStore } from '@monitor/db';
import { isId, methodNotAllowedHandler, notFound } from '@monitor/platform';
import type { AlertRuleListResponse, AlertRuleResponse, QueryInput } from '@monitor/schemas';
import {
  alertRuleCreateSchema,
  alertRuleUpdateSchema,
  paginationQuerySchema,
  parseBody,
  parseQuery,
  toAlertRuleResponse,
} from '@monitor/schemas';
import { toAlertRuleChanges, toAlertRuleFields } from './alert-rule-responses.js';
import { alertRulePath, alertRulesPath } from './api-operations.js';
import { bodyOrThrow } from './body-or-throw.js';
import { jsonBody } from './json-body.js';
import { pageOf } from './page-of.js';
import { queryOrThrow } from './query-or-throw.js';
import { authOf } from './require-scope.js';

export type AlertRuleRoutesDeps = {
  rules: RuleStore;
  /** Authenticates a key with the `read` scope. */
  read: RequestHandler;
  /** Authenticates a key with the `write` scope. */
  write: RequestHandler;
  nowMs: () => number;
};

/** `/api/v1/alerts/rules` and `/api/v1/alerts/rules/:id`, registered on `router`. */
export function addAlertRuleRoutes(router: Router, deps: AlertRuleRoutesDeps): void {
  const { rules, read, write, nowMs } = deps;

  router
    .route(alertRulesPath)
    .get(read, async (req, res) => {
      const query = queryOrThrow(parseQuery(paginationQuerySchema, req.query as QueryInput));
      const page = await rules.listRules({ orgId: authOf(res).orgId, ...query });
      const body: AlertRuleListResponse = {
        rules: page.rules.map(toAlertRuleResponse),
        pagination: pageOf(query, page.rules.length, page.total),
      };
      res.json(body);
    })
    .post(write, ...jsonBody, async (req, res) => {
      const request = bodyOrThrow(parseBody(alertRuleCreateSchema, req.body as unknown));
      const rule = await rules.createRule(authOf(res).orgId, toAlertRuleFields(request));
      const body: AlertRuleResponse = toAlertRuleResponse(rule);
      res.status(201).location(`${alertRulesPath}/${rule.id}`).json(body);
    })
    .all(methodNotAllowedHandler(['GET', 'POST']));

  router
    .route(alertRulePath)
    .get(read, async (req, res) => {
      const rule = await rules.getRule(authOf(res).orgId, ruleIdOf(req.params['id']));
      if (rule === undefined) throw ruleNotFound();
      const body: AlertRuleResponse = toAlertRuleResponse(rule);
      res.json(body);
    })
    .patch(write, ...jsonBody, async (req, res) => {
      const id = ruleIdOf(req.params['id']);
      const request = bodyOrThrow(parseBody(alertRuleUpdateSchema, req.body as unknown));
      const rule = await rules.updateRule(
        authOf(res).orgId,
        id,
        toAlertRuleChanges(request),
        new Date(nowMs()),
      );
      if (rule === undefined) throw ruleNotFound();
      const body: AlertRuleResponse = toAlertRuleResponse(rule);
      res.json(body);
    })
    .delete(write, async (req, res) => {
      const id = ruleIdOf(req.params['id']);
      const deleted = await rules.deleteRule(authOf(res).orgId, id, new Date(nowMs()));
      if (!deleted) throw ruleNotFound();
      res.status(204).end();
    })
    .all(methodNotAllowedHandler(['GET', 'PATCH', 'DELETE']));
}

function ruleNotFound() {
  return notFound('The alert rule');
}

/** A malformed id cannot name a rule: 404, exactly like an unknown one. */
function ruleIdOf(value: string | string[] | undefined): string {
  if (!isId('rul', value)) throw ruleNotFound();
  return value;
}
