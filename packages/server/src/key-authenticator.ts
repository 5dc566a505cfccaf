import type { ApiKeyAuthenticator } from '@monitor/auth';
import { createApiKeyAuthenticator } from '@monitor/auth';
import type { Database } from '@monitor/db';
import { createApiKeyStore, hashApiKey } from '@monitor/db';
import { isRetriable } from '@monitor/platform';
import type { IngestConfig } from './config.js';

/**
 * The API keys of `db` behind a cached authenticator. Build one per process and hand it to every
 * router the process serves (the gateway's writes, /api/v1, /prometheus, the ruler API): one
 * cache, so a revoked key stops working on all of them within API_KEY_CACHE_TTL_MS.
 */
export function createKeyAuthenticator(
  config: Pick<IngestConfig, 'API_KEY_CACHE_TTL_MS'>,
  db: Database,
): ApiKeyAuthenticator {
  const keys = createApiKeyStore(db);
  return createApiKeyAuthenticator({
    ttlMs: config.API_KEY_CACHE_TTL_MS,
    hashKey: hashApiKey,
    // A key not cached while the database is away raises DatabaseUnavailableError: a 503 with
    // Retry-After, not a 500. A key cached before it keeps working meanwhile.
    servesStaleOn: isRetriable,
    lookup: async (keyHash) => {
      const key = await keys.findActiveKeyByHash(keyHash);
      return key && { keyId: key.id, orgId: key.orgId, scopes: key.scopes, keyHash };
    },
  });
}
