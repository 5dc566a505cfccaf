import { formatFloat } from '@monitor/promql';
import { prometheusErrorSchema } from '@monitor/schemas';
import type { ApiRoute } from '../api-route.js';
import { json } from '../api-route.js';

/**
 * `{"status":"success","data":…}`, the body of every successful Prometheus API answer, with
 * `warnings` (Prometheus' field) when there are any.
 */
export function success(data: unknown, warnings: readonly string[] = []): string {
  return JSON.stringify(
    warnings.length === 0 ? { status: 'success', data } : { status: 'success', data, warnings },
  );
}

/**
 * A sample value as Prometheus' HTTP API writes it (`jsonutil.MarshalValue`): Go's shortest
 * decimal, which is `formatFloat`'s, except in exponent form (`1e-07`, `1e+21`) below 1e-6 and
 * from 1e21 in magnitude.
 */
export function formatSampleValue(value: number): string {
  const magnitude = Math.abs(value);
  if (!Number.isFinite(value) || magnitude === 0 || (magnitude >= 1e-6 && magnitude < 1e21)) {
    return formatFloat(value);
  }
  // Go's exponent has at least two digits.
  return value.toExponential().replace(/e(?<sign>[+-])(?<digit>\d)$/, 'e$<sign>0$<digit>');
}

/** The failures every Prometheus route may answer with, in Prometheus' error shape. */
export const errors = {
  400: json(
    'bad_data: a parameter or the query is invalid, or over a limit.',
    prometheusErrorSchema,
  ),
  401: json('The API key is missing or unknown.', prometheusErrorSchema),
  403: json('The API key lacks the read scope.', prometheusErrorSchema),
  422: json('execution: the query failed while running.', prometheusErrorSchema),
  503: json('timeout, or unavailable: the database is away.', prometheusErrorSchema),
};

/** A route served on GET and on POST with a form body, as Prometheus serves its queries. */
export function both<Deps>(
  route: Omit<ApiRoute<Deps>, 'method' | 'operationId'>,
  operationId: string,
): ApiRoute<Deps>[] {
  return [
    { ...route, method: 'get', operationId },
    { ...route, method: 'post', operationId: `${operationId}Post` },
  ];
}
