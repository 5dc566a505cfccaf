import { z } from 'zod';
import { parsePromql, prettifyPromql, PromqlError } from '@monitor/promql';
import { prometheusApiBasePath, prometheusSuccessSchema } from '@monitor/schemas';
import type { ApiRoute } from '../api-route.js';
import { json } from '../api-route.js';
import { prometheusParams } from './prometheus-params.js';
import type { PrometheusRouteDeps } from './prometheus-routes.js';

type Route = ApiRoute<PrometheusRouteDeps & { orgId: string }>;

/** `format_query` (Grafana's "Format query"): the expression as Prometheus prettifies it. */
const formatQueryHandler: NonNullable<Route['handle']> = ({ query, body, res }) => {
  let expr;
  try {
    expr = parsePromql(prometheusParams(query, body).get('query') ?? '');
  } catch (err) {
    if (err instanceof PromqlError) throw err;
    throw new PromqlError('bad_data', (err as Error).message);
  }
  res
    .type('application/json')
    .send(JSON.stringify({ status: 'success', data: prettifyPromql(expr) }));
};

const route = {
  path: `${prometheusApiBasePath}/format_query`,
  summary: 'A PromQL expression, prettified as Prometheus does',
  tags: ['prometheus'],
  scope: 'read' as const,
  request: { query: z.object({ query: z.string() }) },
  responses: {
    200: json('The expression, formatted.', prometheusSuccessSchema(z.string())),
    400: json('bad_data: the expression does not parse.', z.unknown()),
  },
  handle: formatQueryHandler,
};

export const formatQueryRoutes: readonly Route[] = [
  { ...route, method: 'get', operationId: 'prometheusFormatQuery' },
  { ...route, method: 'post', operationId: 'prometheusFormatQueryPost' },
];
