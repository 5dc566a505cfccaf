import type { ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { methodNotAllowed, notFound } from './app-error.js';
import type { Logger } from './logger.js';
import { toAppError, toProblem, type Problem } from './problem.js';

/**
 * Writes the problem+json response for `err` on a plain node response (express's `res` is one),
 * for code paths outside express's error flow. If the headers are already out, the response
 * cannot be repaired and the connection is destroyed instead.
 */
export function sendProblem(res: ServerResponse, err: unknown): Problem {
  const problem = toProblem(err);
  if (res.headersSent) {
    res.destroy();
    return problem;
  }
  res.statusCode = problem.status;
  for (const [name, value] of Object.entries(problem.headers)) {
    // A challenge the caller set already (an endpoint whose clients speak basic auth) stays.
    if (name === 'WWW-Authenticate' && res.hasHeader(name)) continue;
    res.setHeader(name, value);
  }
  res.end(JSON.stringify(problem.body));
  return problem;
}

const maxLoggedPathLength = 200;

/** The request path without its query string (which the log does not need). */
function pathOf(req: Request): string {
  const url = req.originalUrl || req.url;
  const path = url.split('?', 1)[0] ?? '';
  return path.length > maxLoggedPathLength ? `${path.slice(0, maxLoggedPathLength)}…` : path;
}

/**
 * The last middleware of every express app: answers RFC 9457 problem+json for anything thrown
 * or passed to `next(err)`. Logs 500s at error (with the original error under `err`), other 5xx
 * (transient, they heal themselves) at warn, and 4xx at info without a stack.
 */
export function problemHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    const error = toAppError(err);
    const fields = { method: req.method, path: pathOf(req), code: error.code };
    if (res.headersSent) {
      // Too late for a problem body; express's final handler closes the connection.
      logger.error({ ...fields, err }, 'request failed after the response started');
      next(err);
      return;
    }
    const problem = sendProblem(res, error);
    if (problem.status >= 500) {
      const level = error.code === 'internal' ? 'error' : 'warn';
      logger[level]({ ...fields, status: problem.status, err }, 'request failed');
    } else {
      logger.info(
        { ...fields, status: problem.status, detail: problem.body.detail },
        'request rejected',
      );
    }
  };
}

/** Mount after every route: an unknown route is a 404 problem. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(notFound(`Route ${req.method} ${pathOf(req)}`));
};

/**
 * Answers 405 with an `Allow` header for a known path hit with another method:
 * `router.route('/rules').get(list).post(create).all(methodNotAllowedHandler(['GET', 'POST']))`.
 * `HEAD` is added when `GET` is allowed (express answers HEAD with the GET route).
 */
export function methodNotAllowedHandler(allowed: readonly string[]): RequestHandler {
  const methods = new Set(allowed.map((method) => method.toUpperCase()));
  if (methods.has('GET')) methods.add('HEAD');
  const allowedMethods = [...methods];
  return (_req, _res, next) => {
    next(methodNotAllowed(allowedMethods));
  };
}
