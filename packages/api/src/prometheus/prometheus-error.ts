import type { ErrorRequestHandler } from 'express';
import type { PrometheusError, PrometheusErrorType } from '@monitor/schemas';
import type { Logger } from '@monitor/platform';
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

type MappedPrometheusError = {
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
function mapPrometheusError(err: unknown): MappedPrometheusError {
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

/**
 * The error handler of a router under `/prometheus`: Prometheus' JSON error shape, an internal
 * failure logged at ERROR, a refused request at INFO, both as `<what> request …`.
 */
export function prometheusErrorHandler(logger: Logger, what: string): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const mapped = mapPrometheusError(err);
    const fields = { method: req.method, path: req.path, errorType: mapped.body.errorType };
    if (mapped.body.errorType === 'internal')
      logger.error({ ...fields, err }, `${what} request failed`);
    else logger.info({ ...fields, error: mapped.body.error }, `${what} request rejected`);
    res
      .status(mapped.status)
      .set(mapped.headers)
      .type('application/json')
      .send(JSON.stringify(mapped.body));
  };
}
