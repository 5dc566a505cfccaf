import { z } from 'zod';
import { parsePromql, prettifyPromql, PromqlError } from '@monitor/promql';
import { prometheusApiBasePath, prometheusSuccessSchema } from '@monitor/schemas';
import { json } from '../api-route.js';
import { both, errors, success } from './prometheus-answer.js';
import { prometheusParams } from './prometheus-params.js';
import type { PrometheusRoute } from './prometheus-routes.js';

/** `format_query` (Grafana's "Format query"): the expression as Prometheus prettifies it. */
const formatQueryHandler: NonNullable<PrometheusRoute['handle']> = ({ query, body, res }) => {
  let expr;
  try {
    expr = parsePromql(prometheusParams(query, body).get('query') ?? '');
  } catch (err) {
    if (err instanceof PromqlError) throw err;
    throw new PromqlError('bad_data', (err as Error).message);
  }
  res.type('application/json').send(success(prettifyPromql(expr)));
};

export const formatQueryRoutes: readonly PrometheusRoute[] = both(
  {
    path: `${prometheusApiBasePath}/format_query`,
    summary: 'A PromQL expression, prettified as Prometheus does',
    tags: ['prometheus'],
    scope: 'read',
    request: { query: z.object({ query: z.string() }) },
    responses: {
      200: json('The expression, formatted.', prometheusSuccessSchema(z.string())),
      ...errors,
    },
    handle: formatQueryHandler,
  },
  'prometheusFormatQuery',
);
