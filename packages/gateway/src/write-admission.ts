import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiKeyAuthenticator, AuthenticatedKey, RenderKeyRefusal } from '@monitor/auth';
import { authenticatedKey, requireScope } from '@monitor/auth';
import { forbidden, unauthorized } from '@monitor/platform';
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
 * key, its `ingest` scope (`requireScope`, as on every router), the rate limit. Resolves with the
 * key, or undefined once it answered the refusal itself, as a problem after draining the body.
 * `challenge` adds `WWW-Authenticate: Basic` to a 401: collectd (libcurl) sends its credentials
 * only after one.
 */
export function createWriteAdmission(deps: WriteAdmissionDeps, options: { challenge: boolean }) {
  const refuse: RenderKeyRefusal = async (refusal, req, res) => {
    if (refusal.reason === 'unauthorized' && options.challenge) {
      res.setHeader('WWW-Authenticate', [
        'Basic realm="monitor", charset="UTF-8"',
        'Bearer realm="monitor"',
      ]);
    }
    // The body is never parsed after a refusal: it is dropped, and the connection closed.
    const err = refusal.reason === 'unauthorized' ? unauthorized() : forbidden();
    deps.rejected(await refuseAfterDrain(req, res, err));
  };
  const requireIngestKey = requireScope(deps.authenticator, 'ingest', refuse);

  return async function admit(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<AuthenticatedKey | undefined> {
    let key: AuthenticatedKey | undefined;
    await requireIngestKey(req, res, () => (key = authenticatedKey(res)));
    if (key === undefined) return undefined;
    if ((await deps.rateLimiter(req, res, key)) === 'answered') {
      deps.rejected(429);
      return undefined;
    }
    return key;
  };
}
