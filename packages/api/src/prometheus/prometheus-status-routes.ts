import { z } from 'zod';
import { extractSelectors, parsePromql, PromqlError } from '@monitor/promql';
import {
  prometheusAlertSchema,
  prometheusApiBasePath,
  prometheusExemplarsDataSchema,
  prometheusExemplarsQuerySchema,
  prometheusRuleGroupSchema,
  prometheusSuccessSchema,
} from '@monitor/schemas';
import { json, noContent } from '../api-route.js';
import { both, errors, success } from './prometheus-answer.js';
import { allOfTime, optionalTime, prometheusParams } from './prometheus-params.js';
import { prometheusExemplars } from './prometheus-exemplars.js';
import type { PrometheusRoute } from './prometheus-routes.js';
import { prometheusActiveAlerts, prometheusRuleGroups } from './rule-group-status.js';

const base = prometheusApiBasePath;

/**
 * `query_exemplars`: the stored exemplars of the series any selector of the query selects
 * (Prometheus' `parser.ExtractSelectors`), within start and end inclusive (all of time by
 * default), answered as Prometheus 2.42 with its exemplar storage answers: the parameters checked
 * as it checks them; 204 and no body for a query without a selector. Bounded where Prometheus
 * is not (its exemplars are a buffer of 100,000 by default, ours a table kept for days): more
 * series than a query may select, or more exemplars than `limits.maxExemplars`, is bad_data.
 */
const queryExemplarsHandler: NonNullable<PrometheusRoute['handle']> = async ({
  query,
  body,
  res,
  deps,
}) => {
  const params = prometheusParams(query, body);
  const startMs = optionalTime(params, 'start', allOfTime.startMs);
  const endMs = optionalTime(params, 'end', allOfTime.endMs);
  if (endMs < startMs) {
    throw new PromqlError('bad_data', 'end timestamp must not be before start timestamp');
  }
  const selectors = extractSelectors(parsePromql(params.get('query') ?? ''));
  if (selectors.length === 0) {
    res.status(204).end();
    return;
  }
  const { maxSeries, maxExemplars } = deps.limits;
  const read = await deps.exemplars.read(
    deps.orgId,
    selectors,
    { startMs, endMs },
    { maxSeries, maxExemplars },
  );
  if ('overLimit' in read) {
    throw new PromqlError(
      'bad_data',
      read.overLimit === 'maxSeries'
        ? `more than ${maxSeries} series match: narrow the query's selectors`
        : `more than ${maxExemplars} exemplars match: narrow the query's selectors or the time range`,
    );
  }
  res.type('application/json').send(success(prometheusExemplars(read.series)));
};

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
      summary: 'Exemplars of the series a query selects',
      description:
        'The exemplars stored (`EXEMPLAR_RETENTION_DAYS`) for the series that any selector of ' +
        '`query` selects, between `start` and `end` inclusive (all of time when absent), as ' +
        'Prometheus 2.42 with its exemplar storage answers. At most as many series as a query ' +
        'may select and 100,000 exemplars: beyond either, bad_data.',
      tags: ['prometheus'],
      scope: 'read',
      request: { query: prometheusExemplarsQuerySchema },
      responses: {
        200: json(
          'Per series with exemplars in the range, by label set, its exemplars in time order.',
          prometheusSuccessSchema(prometheusExemplarsDataSchema),
        ),
        204: noContent('The query has no selector: there are no series to read.'),
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
