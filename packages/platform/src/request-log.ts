import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from './logger.js';

/**
 * Orchestrator probes and scrapes: logged at debug, since they arrive every few seconds on every
 * replica and would bury the requests people look for. Their failures still show: /readyz answers
 * which check is down, the failing dependency logs its own errors, and the problem handler logs
 * any 500 with its stack.
 */
const probePaths: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** Status logged for a request whose client went away before the response ended (as nginx). */
const clientClosedRequestStatus = 499;

const maxLoggedPathLength = 200;

/** The organization each response acts for, once its API key is authenticated. */
const requestOrgs = new WeakMap<ServerResponse, string>();

/** Records the organization an authenticated request acts for; its log line carries `orgId`. */
export function noteRequestOrg(res: ServerResponse, orgId: string): void {
  requestOrgs.set(res, orgId);
}

/**
 * The path of a request URL as logged: without the query string (which may carry anything a
 * client put there, credentials included), at most 200 characters.
 */
export function loggedPath(url: string | undefined): string {
  if (url === undefined) return '/';
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path.length > maxLoggedPathLength ? `${path.slice(0, maxLoggedPathLength)}…` : path;
}

/**
 * The level of a request's line: probes at debug, 5xx at error but 503 at warn (a dependency is
 * unavailable and the request may be retried: it heals itself, as the problem handler logs it),
 * everything else, 4xx included, at info.
 */
function requestLogLevel(path: string, status: number): 'debug' | 'info' | 'warn' | 'error' {
  if (probePaths.has(path)) return 'debug';
  if (status === 503) return 'warn';
  return status >= 500 ? 'error' : 'info';
}

/**
 * Writes the one line of a finished (or abandoned) request: `method`, `path`, `status`,
 * `durationMs` and, when authenticated, `orgId`. Never headers, so never the API key. Call it
 * once per request, when the response closes; costs one level check when the level is off.
 */
export function logRequest(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  durationMs: number,
  path: string = loggedPath(req.url),
): void {
  const status = res.writableFinished ? res.statusCode : clientClosedRequestStatus;
  const level = requestLogLevel(path, status);
  if (!logger.isLevelEnabled(level)) return;
  const orgId = requestOrgs.get(res);
  logger[level](
    {
      method: req.method,
      path,
      status,
      durationMs: Math.round(durationMs * 10) / 10,
      ...(orgId === undefined ? {} : { orgId }),
    },
    'request',
  );
}

/** Express middleware: one `logRequest` line per request, timed from here to the close. */
export function requestLogger(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const startedAt = performance.now();
    // originalUrl: the path as the client sent it, also inside a mounted router.
    const path = loggedPath(req.originalUrl);
    res.once('close', () => logRequest(logger, req, res, performance.now() - startedAt, path));
    next();
  };
}
