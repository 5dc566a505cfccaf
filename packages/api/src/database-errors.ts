import type { ErrorRequestHandler } from 'express';
import { isTransientDbError } from '@monitor/db';
import { dependencyUnavailable } from '@monitor/platform';

/** An unreachable or restarting database is a 503 with Retry-After, not a 500. */
export function databaseErrors(retryAfterSeconds: number): ErrorRequestHandler {
  return (err: unknown, _req, _res, next) => {
    next(
      isTransientDbError(err) ? dependencyUnavailable('The database', retryAfterSeconds, err) : err,
    );
  };
}
