import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiKeyAuthenticator, AuthenticatedKey } from '@monitor/auth';
import { apiKeyFromHeaders, hasScope } from '@monitor/auth';
import type { AppError } from '@monitor/platform';
import { forbidden, noteRequestOrg, unauthorized } from '@monitor/platform';
import { refuseAfterDrain } from './refuse-after-drain.js';

/** Decides whether a key may send one more request now; answers the 429 itself when not. */
export type IngestRateLimiter = (
  req: IncomingMessage,
  res: ServerResponse,
  key: AuthenticatedKey,
) => Promise<'allowed' | 'answered'>;

export type WriteAdmissionDeps = {
  authenticator: ApiKeyAuthenticator;
  rateLimiter: IngestRateLimiter;
  /** Called with the status of every refusal this step answers. */
  rejected(status: number): void;
};

/**
 * The first checks of every write, in the contract's order, before the body is read: a known
 * key, its `ingest` scope, the rate limit. Resolves with the key, or undefined once it answered
 * the refusal itself. `challenge` adds `WWW-Authenticate: Basic` to a 401: collectd (libcurl)
 * sends its credentials only after one.
 */
export function createWriteAdmission(deps: WriteAdmissionDeps) {
  return async function admit(
    req: IncomingMessage,
    res: ServerResponse,
    options: { challenge?: boolean } = {},
  ): Promise<AuthenticatedKey | undefined> {
    const key = await deps.authenticator.authenticate(apiKeyFromHeaders(req.headers));
    if (key === undefined) {
      if (options.challenge === true) {
        res.setHeader('WWW-Authenticate', [
          'Basic realm="monitor", charset="UTF-8"',
          'Bearer realm="monitor"',
        ]);
      }
      await refuse(req, res, unauthorized());
      return undefined;
    }
    noteRequestOrg(res, key.orgId);
    if (!hasScope(key, 'ingest')) {
      await refuse(req, res, forbidden());
      return undefined;
    }
    if ((await deps.rateLimiter(req, res, key)) === 'answered') {
      deps.rejected(429);
      return undefined;
    }
    return key;
  };

  async function refuse(req: IncomingMessage, res: ServerResponse, err: AppError): Promise<void> {
    // The body is never parsed after a refusal: it is dropped, and the connection closed.
    deps.rejected(await refuseAfterDrain(req, res, err));
  }
}
