import { z } from 'zod';
import { parsePromql, PromqlError } from '@monitor/promql';
import {
  prometheusAlertSchema,
  prometheusApiBasePath,
  prometheusRuleGroupSchema,
  prometheusSuccessSchema,
} from '@monitor/schemas';
import { json } from '../api-route.js';
import { both, errors, success } from './prometheus-answer.js';
import { allOfTime, optionalTime, prometheusParams } from './prometheus-params.js';
import type { PrometheusRoute } from './prometheus-routes.js';
import { prometheusActiveAlerts, prometheusRuleGroups } from './rule-group-status.js';

const base = prometheusApiBasePath;

/**
 * `query_exemplars`: Grafana asks it when a data source is opened, to decide whether to offer
 * exemplars. None are stored (remote-write's exemplars are counted and skipped), so the answer
 * is Prometheus' own with its exemplar storage off: the parameters checked as it checks them,
 * then `[]`, or 204 and no body for a query without a selector.
 */
const queryExemplarsHandler: NonNullable<PrometheusRoute['handle']> = ({ query, body, res }) => {
  const params = prometheusParams(query, body);
  const startMs = optionalTime(params, 'start', allOfTime.startMs);
  const endMs = optionalTime(params, 'end', allOfTime.endMs);
  if (endMs < startMs) {
    throw new PromqlError('bad_data', 'end timestamp must not be before start timestamp');
  }
  const expr = parsePromql(params.get('query') ?? '');
  if (hasSelector(expr)) res.type('application/json').send(success([]));
  else res.status(204).end();
};

/**
 * Whether an expression reads any series (Prometheus' `parser.ExtractSelectors` is non-empty):
 * a vector selector anywhere among its sub-expressions, whatever kinds of node lie between.
 */
function hasSelector(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(hasSelector);
  if (typeof node !== 'object' || node === null || !('kind' in node)) return false;
  if (node.kind === 'vector') return true;
  return Object.values(node).some(hasSelector);
}

/** `limit`, where Prometheus takes one: an integer, or the error text Prometheus gives. */
function checkLimit(text: string | undefined): void {
  if (text === undefined || text === '') return;
  if (!/^[+-]?\d+$/.test(text)) throw new PromqlError('bad_data', 'limit must be a number');
}

/**
 * The status and metadata side of the Prometheus HTTP API that Grafana's Prometheus data
 * source calls besides queries (its health check, its query editor and its alerting views):
 * build information, metric metadata, exemplars, and the rule and alert lists, each answered
 * as Prometheus 2.42 answers it. Metadata: none is stored, as in a Prometheus fed only by
 * remote-write. Rules and alerts: the organization's Prometheus rule groups as the evaluator
 * saved them at their last evaluation; our own JSON rules and their alerts are under /api/v1.
 */
export const prometheusStatusRoutes: readonly PrometheusRoute[] = [
  {
    method: 'get',
    path: `${base}/metadata`,
    operationId: 'prometheusMetadata',
    summary: 'Metric metadata (none is stored: always empty)',
    tags: ['prometheus'],
    scope: 'read',
    responses: {
      200: json('Empty.', prometheusSuccessSchema(z.record(z.string(), z.unknown()))),
      ...errors,
    },
    handle: ({ query, res }) => {
      checkLimit(prometheusParams(query, undefined).get('limit'));
      res.type('application/json').send(success({}));
    },
  },
  ...both(
    {
      path: `${base}/query_exemplars`,
      summary: 'Exemplars of the series a query selects (none are stored)',
      tags: ['prometheus'],
      scope: 'read',
      responses: {
        200: json(
          'Empty, or null for a query without a selector.',
          prometheusSuccessSchema(z.null().or(z.array(z.unknown()))),
        ),
        ...errors,
      },
      handle: queryExemplarsHandler,
    },
    'prometheusQueryExemplars',
  ),
  {
    method: 'get',
    path: `${base}/rules`,
    operationId: 'prometheusRules',
    summary: "The organization's Prometheus rule groups, with their state at the last evaluation",
    tags: ['prometheus'],
    scope: 'read',
    responses: {
      200: json(
        'The groups, by namespace (`file`) and name.',
        prometheusSuccessSchema(z.object({ groups: z.array(prometheusRuleGroupSchema) })),
      ),
      ...errors,
    },
    handle: async ({ query, res, deps }) => {
      const type = (prometheusParams(query, undefined).get('type') ?? '').toLowerCase();
      if (type !== '' && type !== 'alert' && type !== 'record') {
        throw new PromqlError(
          'bad_data',
          `invalid parameter "type": not supported value ${JSON.stringify(type)}`,
        );
      }
      const groups = await deps.ruleGroups.listOrgGroups(deps.orgId);
      res
        .type('application/json')
        .send(success({ groups: prometheusRuleGroups(groups, deps.defaultRuleIntervalMs, type) }));
    },
  },
  {
    method: 'get',
    path: `${base}/alerts`,
    operationId: 'prometheusAlerts',
    summary:
      'Active (pending and firing) alerts of Prometheus rule groups, at their last evaluation',
    tags: ['prometheus'],
    scope: 'read',
    responses: {
      200: json(
        'The alerts.',
        prometheusSuccessSchema(z.object({ alerts: z.array(prometheusAlertSchema) })),
      ),
      ...errors,
    },
    handle: async ({ res, deps }) => {
      const groups = await deps.ruleGroups.listOrgGroups(deps.orgId);
      res.type('application/json').send(success({ alerts: prometheusActiveAlerts(groups) }));
    },
  },
  {
    method: 'get',
    path: `${base}/status/buildinfo`,
    operationId: 'prometheusBuildInfo',
    summary: 'The Prometheus version whose API and PromQL this follows',
    tags: ['prometheus'],
    scope: 'read',
    responses: {
      200: json('Build information.', prometheusSuccessSchema(z.record(z.string(), z.string()))),
      ...errors,
    },
    // No `features` field: Grafana reads one as "Mimir, with a ruler API" (its heuristics).
    handle: ({ res }) => {
      res.type('application/json').send(
        success({
          version: '2.42.0',
          revision: 'monitor',
          branch: 'monitor',
          buildUser: 'monitor',
          buildDate: '',
          goVersion: '',
        }),
      );
    },
  },
];
