import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a key may do: `ingest` (POST /ingest), `read` (every GET), `write` (changes). */
export type ApiKeyScope = 'ingest' | 'read' | 'write';

const apiKeyScopes = ['ingest', 'read', 'write'] as const satisfies readonly ApiKeyScope[];

/** Every key starts with this, so leaked keys are easy to recognize (and to scan for). */
const apiKeyPrefix = 'mon_';

const keyBytes = 32;
/** Characters of the key, after `mon_`, kept in clear for listings: 48 of 256 bits. */
const visibleChars = 8;

/** A new API key: `mon_` + base64url of 32 random bytes (256 bits of entropy). */
export function generateApiKey(): string {
  return apiKeyPrefix + randomBytes(keyBytes).toString('base64url');
}

/**
 * The stored form of a key: SHA-256 of its UTF-8 text. A fast hash is right here, unlike for
 * passwords: the keys are 256-bit random strings, so no dictionary or brute force applies, and
 * a slow hash would only cost CPU on every uncached lookup.
 */
export function hashApiKey(plaintext: string): Buffer {
  return createHash('sha256').update(plaintext, 'utf8').digest();
}

/**
 * The non-secret start of a key shown in listings, e.g. `mon_AbCdEfGh`. A key given by an
 * operator (MONITOR_BOOTSTRAP_API_KEY) may be short and not random: show at most a quarter of it.
 */
export function apiKeyDisplayPrefix(plaintext: string): string {
  if (plaintext.startsWith(apiKeyPrefix)) {
    return plaintext.slice(0, apiKeyPrefix.length + visibleChars);
  }
  return plaintext.slice(0, Math.min(4, Math.floor(plaintext.length / 4)));
}

/** Constant-time equality of two key hashes (different lengths are simply unequal). */
export function keysEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether `value` is a known scope. */
export function isApiKeyScope(value: unknown): value is ApiKeyScope {
  return (apiKeyScopes as readonly unknown[]).includes(value);
}
