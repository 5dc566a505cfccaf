import type { RequestHandler, Response } from 'express';
import type { ApiKeyAuthenticator, AuthenticatedKey, Scope } from '@monitor/auth';
import { apiKeyFromHeaders, hasScope } from '@monitor/auth';
import { forbidden, noteRequestOrg, unauthorized } from '@monitor/platform';

const authLocal = 'auth';

/**
 * Authenticates the request's API key (`X-API-Key` or `Authorization: Bearer`): 401 when it is
 * missing or unknown, 403 without `scope`. The key is then available through `authOf(res)`.
 */
export function requireScope(authenticator: ApiKeyAuthenticator, scope: Scope): RequestHandler {
  return async (req, res, next) => {
    const key = await authenticator.authenticate(apiKeyFromHeaders(req.headers));
    if (key === undefined) throw unauthorized();
    noteRequestOrg(res, key.orgId);
    if (!hasScope(key, scope)) {
      throw forbidden(`The API key lacks the ${scope} scope this operation needs.`);
    }
    res.locals[authLocal] = key;
    next();
  };
}

/** The key `requireScope` authenticated for this request. */
export function authOf(res: Response): AuthenticatedKey {
  const key = res.locals[authLocal] as AuthenticatedKey | undefined;
  if (key === undefined) throw new Error('authOf: the route is not behind requireScope');
  return key;
}
