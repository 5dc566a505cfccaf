import type { PrometheusError, PrometheusErrorType } from '@monitor/schemas';
import { AppError } from '@monitor/platform';
import { PromqlError } from '@monitor/promql';

/** HTTP status per errorType, as Prometheus 2.x answers (499: the client went away). */
const statusOf: Record<PrometheusErrorType, number> = {
  bad_data: 400,
  execution: 422,
  timeout: 503,
  canceled: 499,
  internal: 500,
  unavailable: 503,
  not_found: 404,
  unauthorized: 401,
  forbidden: 403,
};

export type MappedPrometheusError = {
  status: number;
  body: PrometheusError;
  headers: Record<string, string>;
};

/**
 * The Prometheus API's error mapper: `{"status":"error","errorType","error"}` instead of
 * problem+json, since Prometheus clients (Grafana, promtool) read that shape. PromqlErrors keep
 * their type; our AppErrors map by code (a database away is `unavailable`, retried later);
 * anything else is `internal`, with a generic text (the cause goes to the log).
 */
export function mapPrometheusError(err: unknown): MappedPrometheusError {
  let errorType: PrometheusErrorType = 'internal';
  let error = 'internal error';
  const headers: Record<string, string> = {};
  if (err instanceof PromqlError) {
    errorType = err.type;
    error = err.message;
  } else if (err instanceof AppError) {
    switch (err.code) {
      case 'unauthorized':
        errorType = 'unauthorized';
        error = err.message;
        headers['WWW-Authenticate'] = 'Bearer realm="monitor"';
        break;
      case 'forbidden':
        errorType = 'forbidden';
        error = err.message;
        break;
      case 'dependency_unavailable':
        errorType = 'unavailable';
        error = err.message;
        if (err.retryAfterSeconds !== undefined)
          headers['Retry-After'] = String(err.retryAfterSeconds);
        break;
      case 'not_found':
        errorType = 'not_found';
        error = err.message;
        break;
      case 'payload_too_large':
      case 'validation':
      case 'bad_request':
      case 'unsupported_media_type':
        errorType = 'bad_data';
        error = err.message;
        break;
      default:
        break;
    }
  }
  return { status: statusOf[errorType], body: { status: 'error', errorType, error }, headers };
}
