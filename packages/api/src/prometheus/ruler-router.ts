import express, { Router } from 'express';
import type { Router as ExpressRouter } from 'express';
import { parse, stringify } from 'yaml';
import type { ApiKeyAuthenticator, Scope } from '@monitor/auth';
import { authenticatedKey, requireScope } from '@monitor/auth';
import type { RuleGroupStore, StoredRuleGroup } from '@monitor/db';
import type { Logger } from '@monitor/platform';
import { AppError } from '@monitor/platform';
import { parseRuleGroup, ruleGroupKeys } from '@monitor/rules';
import { prometheusErrorHandler } from './prometheus-error.js';

export type RulerRouterDeps = {
  authenticator: ApiKeyAuthenticator;
  logger: Logger;
  ruleGroups: Pick<
    RuleGroupStore,
    'putGroup' | 'listGroups' | 'getGroup' | 'deleteGroup' | 'deleteNamespace'
  >;
  /** RULES_MAX_PER_ORG: the rules one organization may hold over all its groups. */
  maxRulesPerOrg: number;
};

const basePath = '/prometheus/config/v1/rules';

/** Mimir's answer to an accepted change. */
const accepted = { status: 'success', data: null, errorType: '', error: '' };

/** Cortex/Mimir's texts for what is not there. */
const noRuleGroups = 'no rule groups found';
const groupNotFound = 'group does not exist';
const namespaceNotFound = 'group namespace does not exist';

/** A path parameter (Express 5 types a wildcard's as an array; these are plain). */
function param(req: express.Request, name: string): string {
  const value = req.params[name];
  return Array.isArray(value) ? value.join('/') : (value ?? '');
}

/** A namespace → groups map as the ruler API writes it (each group as it was posted). */
function groupsYaml(groups: readonly StoredRuleGroup[]): string {
  const byNamespace: Record<string, unknown[]> = {};
  for (const group of groups) {
    (byNamespace[group.namespace] ??= []).push(parse(group.definition) as unknown);
  }
  return stringify(byNamespace);
}

/**
 * The Cortex/Mimir ruler API that Grafana and mimirtool speak, under
 * /prometheus/config/v1/rules: one rule group in YAML per POST, checked as `promtool check
 * rules` checks it (400 with Prometheus' error text), stored per organization and namespace.
 */
export function createRulerRouter(deps: RulerRouterDeps): ExpressRouter {
  const { authenticator, logger, ruleGroups, maxRulesPerOrg } = deps;
  const router = Router();
  // Refusals are thrown, for `prometheusErrorHandler` to answer in Prometheus' shape.
  const authenticate = (scope: Extract<Scope, 'read' | 'write'>) =>
    requireScope(authenticator, scope);
  const orgOf = (res: express.Response): string => authenticatedKey(res).orgId;
  // The body is YAML whatever its declared type (mimirtool sends application/yaml).
  const yamlBody = express.text({ type: () => true, limit: '1mb' });

  router.get(basePath, authenticate('read'), async (_req, res) => {
    const groups = await ruleGroups.listGroups(orgOf(res));
    if (groups.length === 0) throw new AppError('not_found', noRuleGroups);
    res.type('application/yaml').send(groupsYaml(groups));
  });
  router.get(`${basePath}/:namespace`, authenticate('read'), async (req, res) => {
    const groups = await ruleGroups.listGroups(orgOf(res), param(req, 'namespace'));
    if (groups.length === 0) throw new AppError('not_found', namespaceNotFound);
    res.type('application/yaml').send(groupsYaml(groups));
  });
  router.get(`${basePath}/:namespace/:group`, authenticate('read'), async (req, res) => {
    const group = await ruleGroups.getGroup(
      orgOf(res),
      param(req, 'namespace'),
      param(req, 'group'),
    );
    if (group === undefined) throw new AppError('not_found', groupNotFound);
    res.type('application/yaml').send(stringify(parse(group.definition)));
  });
  router.post(`${basePath}/:namespace`, authenticate('write'), yamlBody, async (req, res) => {
    const definition = typeof req.body === 'string' ? req.body : '';
    const parsed = parseRuleGroup(definition);
    if (!parsed.ok) throw new AppError('bad_request', parsed.errors.join('\n'));
    const group = parsed.groups[0]!;
    const stored = await ruleGroups.putGroup(
      orgOf(res),
      param(req, 'namespace'),
      { name: group.name, definition, ruleCount: group.rules.length, ...ruleGroupKeys(group) },
      maxRulesPerOrg,
    );
    if (!stored) {
      throw new AppError(
        'bad_request',
        `per-tenant rules limit (limit: ${maxRulesPerOrg}) exceeded`,
      );
    }
    res.status(202).json(accepted);
  });
  router.delete(`${basePath}/:namespace`, authenticate('write'), async (req, res) => {
    const deleted = await ruleGroups.deleteNamespace(orgOf(res), param(req, 'namespace'));
    if (deleted === 0) throw new AppError('not_found', namespaceNotFound);
    res.status(202).json(accepted);
  });
  router.delete(`${basePath}/:namespace/:group`, authenticate('write'), async (req, res) => {
    const deleted = await ruleGroups.deleteGroup(
      orgOf(res),
      param(req, 'namespace'),
      param(req, 'group'),
    );
    if (!deleted) throw new AppError('not_found', groupNotFound);
    res.status(202).json(accepted);
  });

  const onError = prometheusErrorHandler(logger, 'ruler');
  router.use(basePath, onError);
  return router;
}
