import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppError } from '@monitor/platform';
import { forbidden, noteRequestOrg, unauthorized } from '@monitor/platform';
import type { ApiKeyAuthenticator, AuthenticatedKey } from './api-key-authenticator.js';
import { apiKeyFromHeaders } from './api-key-authenticator.js';
import type { Scope } from './scope.js';
import { hasScope } from './scope.js';

/** Why `requireScope` refused a request: no known key (401), or a key without the scope (403). */
export type KeyRefusal = { reason: 'unauthorized' } | { reason: 'forbidden'; scope: Scope };

/**
 * Answers a refused request in its router's shape: throw (an Express router's error handler then
 * renders it), or write the response and resolve.
 */
export type RenderKeyRefusal = (
  refusal: KeyRefusal,
  req: IncomingMessage,
  res: ServerResponse,
) => void | Promise<void>;

/**
 * A middleware on Node's own request and response, so that Express routers and the gateway's
 * plain listener use the same one: `next()` once the request may go on, never after a refusal.
 */
export type KeyMiddleware = (
  req: IncomingMessage,
  res: ServerResponse,
  next: () => void,
) => Promise<void>;

/** The typed error of a refusal, with the text every router has answered it with. */
export function keyRefusalError(refusal: KeyRefusal): AppError {
  return refusal.reason === 'unauthorized'
    ? unauthorized()
    : forbidden(`The API key lacks the ${refusal.scope} scope this operation needs.`);
}

/** The default rendering: throw `keyRefusalError`, for the router's error handler to answer. */
function throwKeyRefusal(refusal: KeyRefusal): never {
  throw keyRefusalError(refusal);
}

const authenticatedKeys = new WeakMap<ServerResponse, AuthenticatedKey>();

/**
 * The one key-and-scope check of every router (ingest and the agent protocols, /api/v1,
 * /prometheus, the ruler API): the request's key from `apiKeyFromHeaders`, through the
 * process's one cached `authenticator`, must be known (else `unauthorized`) and hold `scope`
 * (else `forbidden`). A known key's organization goes on the request's log line either way. The
 * admitted key is then `authenticatedKey(res)`. A lookup that throws (the database away, and
 * the key not cached) rejects: the router's dependency-failure answer, not a refusal.
 */
export function requireScope(
  authenticator: ApiKeyAuthenticator,
  scope: Scope,
  render: RenderKeyRefusal = throwKeyRefusal,
): KeyMiddleware {
  return async (req, res, next) => {
    const key = await authenticator.authenticate(apiKeyFromHeaders(req.headers));
    if (key === undefined) return render({ reason: 'unauthorized' }, req, res);
    noteRequestOrg(res, key.orgId);
    if (!hasScope(key, scope)) return render({ reason: 'forbidden', scope }, req, res);
    authenticatedKeys.set(res, key);
    next();
  };
}

/** The key `requireScope` admitted for this response's request. */
export function authenticatedKey(res: ServerResponse): AuthenticatedKey {
  const key = authenticatedKeys.get(res);
  if (key === undefined) throw new Error('authenticatedKey: the route is not behind requireScope');
  return key;
}
