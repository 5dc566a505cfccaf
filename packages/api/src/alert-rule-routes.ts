import { authenticatedKey } from '@monitor/auth';
import type { RuleStore } from '@monitor/db';
import { isId, notFound, validationError } from '@monitor/platform';
import type { AlertRuleFields, AlertRuleListResponse, AlertRuleResponse } from '@monitor/schemas';
import {
  alertRuleCreateSchema,
  alertRuleListResponseSchema,
  alertRuleSchema,
  alertRuleUpdateSchema,
  paginationQuerySchema,
  parseBody,
  parseQuery,
  recoveryThresholdProblem,
  toAlertRuleResponse,
} from '@monitor/schemas';
import { toAlertRuleChanges, toAlertRuleFields } from './alert-rule-requests.js';
import type { ApiRoute } from './api-route.js';
import { apiBasePath, created, idParams, json, noContent, problems } from './api-route.js';
import { bodyOrThrow } from './body-or-throw.js';
import { pageOf } from './page-of.js';
import { queryOrThrow } from './query-or-throw.js';

const alertRulesPath = `${apiBasePath}/alerts/rules`;
const alertRulePath = `${apiBasePath}/alerts/rules/:id`;

export type AlertRuleRouteDeps = {
  /** Alert rules: reads, and changes that evaluators pick up. */
  rules: RuleStore;
  /** The resolution time of the alerts a rule change resolves. */
  nowMs: () => number;
};

const ruleIdParams = idParams('rul', 'rule');

/** What fires an alert, and where it is notified, in document order. */
export const alertRuleRoutes: readonly ApiRoute<AlertRuleRouteDeps>[] = [
  {
    method: 'get',
    path: alertRulesPath,
    operationId: 'listAlertRules',
    summary: 'List the alert rules',
    description: 'The organization’s rules, newest first (by id). Deleted rules are not listed.',
    tags: ['alert rules'],
    scope: 'read',
    request: { query: paginationQuerySchema },
    responses: {
      200: json('One page of rules.', alertRuleListResponseSchema),
      ...problems(401, 403, 422, 503),
    },
    handle: async ({ query, res, deps }) => {
      const parsed = queryOrThrow(parseQuery(paginationQuerySchema, query));
      const page = await deps.rules.listRules({ orgId: authenticatedKey(res).orgId, ...parsed });
      const body: AlertRuleListResponse = {
        rules: page.rules.map(toAlertRuleResponse),
        pagination: pageOf(parsed, page.rules.length, page.total),
      };
      res.json(body);
    },
  },
  {
    method: 'post',
    path: alertRulesPath,
    operationId: 'createAlertRule',
    summary: 'Create an alert rule',
    description:
      'Required: `name`, `metric`, `condition`, `threshold`, `severity`. Defaults: ' +
      '`duration_minutes` 0, `channels` [], `scope` {}, `enabled` true, ' +
      '`keep_firing_for_minutes` 0, `no_data_state` `alerting`, and null (off) for ' +
      '`recovery_threshold`, `no_data_minutes`, `renotify_minutes`, `message_template` and ' +
      '`flapping`. An unknown or ' +
      'read-only field (`id`, `created_at`…) is 422. Evaluators apply the rule within seconds.',
    tags: ['alert rules'],
    scope: 'write',
    request: { body: { schema: alertRuleCreateSchema, description: 'The rule.' } },
    responses: {
      201: created('The stored rule.', alertRuleSchema),
      ...problems(401, 403, 413, 415, 422, 503),
    },
    handle: async ({ body, res, deps }) => {
      const request = bodyOrThrow(parseBody(alertRuleCreateSchema, body));
      const rule = await deps.rules.createRule(
        authenticatedKey(res).orgId,
        toAlertRuleFields(request),
      );
      const response: AlertRuleResponse = toAlertRuleResponse(rule);
      res.status(201).location(`${alertRulesPath}/${rule.id}`).json(response);
    },
  },
  {
    method: 'get',
    path: alertRulePath,
    operationId: 'getAlertRule',
    summary: 'Get an alert rule',
    tags: ['alert rules'],
    scope: 'read',
    request: { params: ruleIdParams },
    responses: {
      200: json('The rule.', alertRuleSchema),
      ...problems(401, 403, 404, 503),
    },
    handle: async ({ params, res, deps }) => {
      const rule = await deps.rules.getRule(authenticatedKey(res).orgId, ruleIdOf(params['id']));
      if (rule === undefined) throw ruleNotFound();
      const body: AlertRuleResponse = toAlertRuleResponse(rule);
      res.json(body);
    },
  },
  {
    method: 'patch',
    path: alertRulePath,
    operationId: 'updateAlertRule',
    summary: 'Change an alert rule',
    description:
      'Any non-empty subset of the writable fields; the others keep their value. `{}`, an ' +
      'unknown or a read-only field is 422. Changing what the rule evaluates (`metric`, ' +
      '`condition`, `threshold`, `duration_minutes`, `scope`) or `enabled` restarts its ' +
      'evaluation: its active alerts resolve (their channels are notified) and pending windows ' +
      'start afresh, in the same transaction; evaluators pick the change up within a second or ' +
      'two. `name`, `severity` and `channels` apply to alerts fired from then on; ' +
      '`recovery_threshold`, `keep_firing_for_minutes`, `no_data_minutes`, `no_data_state`, ' +
      '`renotify_minutes`, `message_template` and `flapping` to the evaluation under way. The ' +
      'rule as it would be stored is validated: a `recovery_threshold` on the breaching side ' +
      'of the new `condition` or `threshold` is 422 and changes nothing.',
    tags: ['alert rules'],
    scope: 'write',
    request: {
      params: ruleIdParams,
      body: { schema: alertRuleUpdateSchema, description: 'The fields to change.' },
    },
    responses: {
      200: json('The stored rule after the change.', alertRuleSchema),
      ...problems(401, 403, 404, 413, 415, 422, 503),
    },
    handle: async ({ params, body, res, deps }) => {
      const id = ruleIdOf(params['id']);
      const request = bodyOrThrow(parseBody(alertRuleUpdateSchema, body));
      const rule = await deps.rules.updateRule(
        authenticatedKey(res).orgId,
        id,
        toAlertRuleChanges(request),
        new Date(deps.nowMs()),
        refuseInvalidRule,
      );
      if (rule === undefined) throw ruleNotFound();
      const response: AlertRuleResponse = toAlertRuleResponse(rule);
      res.json(response);
    },
  },
  {
    method: 'delete',
    path: alertRulePath,
    operationId: 'deleteAlertRule',
    summary: 'Delete an alert rule',
    description:
      'Resolves the rule’s active alerts (notifying their channels); the rule is 404 from ' +
      'then on. Its alerts stay listed with their `rule_name`.',
    tags: ['alert rules'],
    scope: 'write',
    request: { params: ruleIdParams },
    responses: {
      204: noContent('Deleted.'),
      ...problems(401, 403, 404, 503),
    },
    handle: async ({ params, res, deps }) => {
      const id = ruleIdOf(params['id']);
      const deleted = await deps.rules.deleteRule(
        authenticatedKey(res).orgId,
        id,
        new Date(deps.nowMs()),
      );
      if (!deleted) throw ruleNotFound();
      res.status(204).end();
    },
  },
];

/** The rule a PATCH would store, checked across fields: 422 (and nothing changes) when invalid. */
function refuseInvalidRule(rule: AlertRuleFields): void {
  const problem = recoveryThresholdProblem(rule);
  if (problem !== undefined)
    throw validationError([{ path: 'recovery_threshold', message: problem }]);
}

function ruleNotFound() {
  return notFound('The alert rule');
}

/** A malformed id cannot name a rule: 404, exactly like an unknown one. */
function ruleIdOf(value: string | string[] | undefined): string {
  if (!isId('rul', value)) throw ruleNotFound();
  return value;
}
