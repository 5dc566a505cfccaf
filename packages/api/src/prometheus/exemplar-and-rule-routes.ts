import { z } from 'zod';
import { parsePromql, PromqlError } from '@monitor/promql';
import { prometheusApiBasePath, prometheusSuccessSchema } from '@monitor/schemas';
import type { ApiRoute } from '../api-route.js';
import { json } from '../api-route.js';
import type { PrometheusParams } from './prometheus-params.js';
import { allOfTime, optionalTime, prometheusParams } from './prometheus-params.js';
import type { PrometheusRouteDeps } from './prometheus-routes.js';

// What Grafana's Prometheus data source asks of every Prometheus besides queries and metadata
// (it checks for exemplars on start, lists rules for its recording-rule hints and its alert
// list): exemplars are not stored and there are no Prometheus rule files, so each is answered
// as Prometheus 2.42 answers with none. Same parameters checked, same errors.

type Handler = NonNullable<ApiRoute<PrometheusRouteDeps & { orgId: string }>['handle']>;

function success(data: unknown): string {
  return JSON.stringify({ status: 'success', data });
}

/** Whether an expression selects series (Prometheus' parser.ExtractSelectors is not empty). */
function hasSelector(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(hasSelector);
  if (typeof node !== 'object' || node === null) return false;
  if ((node as { kind?: unknown }).kind === 'vector') return true;
  return Object.values(node).some(hasSelector);
}

function parsedQuery(params: PrometheusParams): unknown {
  try {
    return parsePromql(params.get('query') ?? '');
  } catch (err) {
    if (err instanceof PromqlError) throw err;
    throw new PromqlError('bad_data', (err as Error).message);
  }
}

const exemplarsHandler: Handler = ({ query, body, res }) => {
  const params = prometheusParams(query, body);
  const startMs = optionalTime(params, 'start', allOfTime.startMs);
  const endMs = optionalTime(params, 'end', allOfTime.endMs);
  if (endMs < startMs) {
    throw new PromqlError(
      'bad_data',
      'invalid parameter "end": end timestamp must not be before start time',
    );
  }
  // No selector: Prometheus answers 204 without a body; else the (here always no) exemplars.
  if (!hasSelector(parsedQuery(params))) {
    res.status(204).end();
    return;
  }
  res.type('application/json').send(success([]));
};

const ruleTypes = new Set(['', 'alert', 'record']);

const rulesHandler: Handler = ({ query, res }) => {
  const type = (prometheusParams(query, undefined).get('type') ?? '').toLowerCase();
  if (!ruleTypes.has(type)) {
    throw new PromqlError(
      'bad_data',
      `invalid parameter "type": not supported value ${JSON.stringify(type)}`,
    );
  }
  res.type('application/json').send(success({ groups: [] }));
};

const base = prometheusApiBasePath;
const errors = {
  400: json('bad_data: a parameter or the query is invalid.', z.unknown()),
  401: json('The API key is missing or unknown.', z.unknown()),
  403: json('The API key lacks the read scope.', z.unknown()),
};
const exemplarsQuery = z.object({
  query: z.string(),
  start: z.string().optional(),
  end: z.string().optional(),
});
const exemplarsResponse = json(
  'Exemplars: none are stored (204 without a body for an expression without a selector).',
  prometheusSuccessSchema(z.array(z.unknown())),
);

/** Exemplars, rules and alerts, answered as by a Prometheus that has none of them. */
export const exemplarAndRuleRoutes: readonly ApiRoute<PrometheusRouteDeps & { orgId: string }>[] = [
  {
    method: 'get',
    path: `${base}/query_exemplars`,
    operationId: 'prometheusQueryExemplars',
    summary: 'Exemplars (none are stored)',
    tags: ['prometheus'],
    scope: 'read',
    request: { query: exemplarsQuery },
    responses: { 200: exemplarsResponse, ...errors },
    handle: exemplarsHandler,
  },
  {
    method: 'post',
    path: `${base}/query_exemplars`,
    operationId: 'prometheusQueryExemplarsPost',
    summary: 'Exemplars (none are stored)',
    tags: ['prometheus'],
    scope: 'read',
    request: { query: exemplarsQuery },
    responses: { 200: exemplarsResponse, ...errors },
    handle: exemplarsHandler,
  },
  {
    method: 'get',
    path: `${base}/rules`,
    operationId: 'prometheusRules',
    summary: 'Prometheus rule groups (there are no rule files: none)',
    tags: ['prometheus'],
    scope: 'read',
    request: { query: z.object({ type: z.enum(['alert', 'record']).optional() }) },
    responses: {
      200: json(
        'Rule groups.',
        prometheusSuccessSchema(z.object({ groups: z.array(z.unknown()) })),
      ),
      ...errors,
    },
    handle: rulesHandler,
  },
  {
    method: 'get',
    path: `${base}/alerts`,
    operationId: 'prometheusAlerts',
    summary: 'Alerts of Prometheus rules (there are no rule files: none)',
    tags: ['prometheus'],
    scope: 'read',
    responses: {
      200: json(
        'Active alerts.',
        prometheusSuccessSchema(z.object({ alerts: z.array(z.unknown()) })),
      ),
      ...errors,
    },
    handle: ({ res }) => {
      res.type('application/json').send(success({ alerts: [] }));
    },
  },
];
