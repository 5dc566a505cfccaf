import { timingSafeEqual } from 'node:crypto';
import type { Scope } from './scope.js';

export type AuthenticatedKey = { keyId: string; orgId: string; scopes: readonly Scope[] };

/** A stored key found by the SHA-256 of its plaintext, or undefined when none is active. */
export type KeyLookup = (
  keyHash: Buffer,
) => Promise<(AuthenticatedKey & { keyHash: Buffer }) | undefined>;

export type ApiKeyAuthenticator = {
  /** The key's identity, or undefined for a missing, unknown or revoked key. */
  authenticate(plaintext: string | undefined): Promise<AuthenticatedKey | undefined>;
};

type CacheEntry = {
  key: (AuthenticatedKey & { keyHash: Buffer }) | undefined;
  expiresAtMs: number;
};

/**
 * Authenticates API keys without a database query per request: lookups are cached for
 * `ttlMs` (so a revoked key stops working within that time on every replica), unknown keys for a
 * shorter `negativeTtlMs`, and concurrent lookups of one key share a single query. While a
 * lookup fails in a way `servesStaleOn` accepts (the database away, a failover), an expired
 * entry keeps answering: a gateway goes on taking known keys' samples into Kafka, and a key
 * revoked just before the outage works until the database answers again.
 */
export function createApiKeyAuthenticator(deps: {
  lookup: KeyLookup;
  /** The stored form of a plaintext key (db's `hashApiKey`); `lookup` is called with it. */
  hashKey: (plaintext: string) => Buffer;
  ttlMs?: number;
  negativeTtlMs?: number;
  /** Whether a lookup's failure lets an expired entry answer; never, when omitted. */
  servesStaleOn?: (err: unknown) => boolean;
  maxEntries?: number;
  nowMs?: () => number;
}): ApiKeyAuthenticator {
  const ttlMs = deps.ttlMs ?? 15_000;
  const negativeTtlMs = deps.negativeTtlMs ?? 5_000;
  const maxEntries = deps.maxEntries ?? 100_000;
  const nowMs = deps.nowMs ?? Date.now;
  const cache = new Map<string, CacheEntry>();
  const inFlight = new Map<string, Promise<CacheEntry>>();

  async function load(hash: Buffer, cacheKey: string): Promise<CacheEntry> {
    const key = await deps.lookup(hash);
    const entry = { key, expiresAtMs: nowMs() + (key ? ttlMs : negativeTtlMs) };
    // Unknown keys are attacker-controlled: bound the cache so they cannot grow it without limit.
    if (cache.size >= maxEntries) cache.clear();
    cache.set(cacheKey, entry);
    return entry;
  }

  return {
    async authenticate(plaintext) {
      if (plaintext === undefined || plaintext === '' || plaintext.length > 512) return undefined;
      const hash = deps.hashKey(plaintext);
      const cacheKey = hash.toString('base64');
      let entry = cache.get(cacheKey);
      if (entry === undefined || entry.expiresAtMs <= nowMs()) {
        let pending = inFlight.get(cacheKey);
        if (pending === undefined) {
          pending = load(hash, cacheKey).finally(() => inFlight.delete(cacheKey));
          inFlight.set(cacheKey, pending);
        }
        try {
          entry = await pending;
        } catch (err) {
          if (entry === undefined || deps.servesStaleOn?.(err) !== true) throw err;
        }
      }
      const key = entry.key;
      if (key === undefined || !timingSafeEqual(key.keyHash, hash)) return undefined;
      return { keyId: key.keyId, orgId: key.orgId, scopes: key.scopes };
    },
  };
}

/**
 * The key from `X-API-Key`, else from `Authorization`: `Bearer <key>`, `Token <key>` (what
 * Influx v2 clients send) or `Basic` with the key as the password and any user name (what
 * collectd, Telegraf and Prometheus can be configured to send).
 */
export function apiKeyFromHeaders(
  headers: Record<string, string | string[] | undefined>,
): string | undefined {
  const direct = headers['x-api-key'];
  if (typeof direct === 'string' && direct !== '') return direct.trim();
  const authorization = headers['authorization'];
  if (typeof authorization !== 'string') return undefined;
  const match = /^(Bearer|Token|Basic)\s+(\S+)\s*$/i.exec(authorization);
  if (match === null) return undefined;
  const [, scheme, credentials] = match;
  if (scheme?.toLowerCase() !== 'basic') return credentials;
  const decoded = Buffer.from(credentials ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const password = colon === -1 ? '' : decoded.slice(colon + 1);
  return password === '' ? undefined : password;
}
