import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { KeyLookup } from './api-key-authenticator.js';
import { apiKeyFromHeaders, createApiKeyAuthenticator } from './api-key-authenticator.js';

/** The stored form db's `hashApiKey` computes, so the lookup sees what production passes it. */
const hashApiKey = (plaintext: string) => createHash('sha256').update(plaintext, 'utf8').digest();

function fixture() {
  let now = 0;
  let revoked = false;
  let lookups = 0;
  const lookup: KeyLookup = (hash) => {
    lookups++;
    if (revoked || !hash.equals(hashApiKey('mon_good'))) return Promise.resolve(undefined);
    return Promise.resolve({ keyId: 'key_1', orgId: 'org_1', scopes: ['ingest'], keyHash: hash });
  };
  const authenticator = createApiKeyAuthenticator({
    lookup,
    hashKey: hashApiKey,
    ttlMs: 15_000,
    negativeTtlMs: 5_000,
    nowMs: () => now,
  });
  return {
    authenticator,
    advance: (ms: number) => (now += ms),
    revoke: () => (revoked = true),
    lookups: () => lookups,
  };
}

describe('createApiKeyAuthenticator', () => {
  it('authenticates a known key and rejects unknown, empty and missing ones', async () => {
    const { authenticator } = fixture();
    await expect(authenticator.authenticate('mon_good')).resolves.toEqual({
      keyId: 'key_1',
      orgId: 'org_1',
      scopes: ['ingest'],
    });
    await expect(authenticator.authenticate('mon_bad')).resolves.toBeUndefined();
    await expect(authenticator.authenticate('')).resolves.toBeUndefined();
    await expect(authenticator.authenticate(undefined)).resolves.toBeUndefined();
  });

  it('serves repeated requests from the cache, with one lookup for concurrent ones', async () => {
    const f = fixture();
    await Promise.all(Array.from({ length: 20 }, () => f.authenticator.authenticate('mon_good')));
    await f.authenticator.authenticate('mon_good');
    expect(f.lookups()).toBe(1);
  });

  it('stops accepting a revoked key once the cached entry expires', async () => {
    const f = fixture();
    await f.authenticator.authenticate('mon_good');
    f.revoke();
    f.advance(14_999);
    await expect(f.authenticator.authenticate('mon_good')).resolves.toBeDefined();
    f.advance(2);
    await expect(f.authenticator.authenticate('mon_good')).resolves.toBeUndefined();
  });

  it('answers from an expired entry while the lookup fails in a way it may serve stale on', async () => {
    let now = 0;
    let failure: Error | undefined;
    const authenticator = createApiKeyAuthenticator({
      lookup: (hash) =>
        failure !== undefined
          ? Promise.reject(failure)
          : Promise.resolve({ keyId: 'key_1', orgId: 'org_1', scopes: ['ingest'], keyHash: hash }),
      hashKey: hashApiKey,
      ttlMs: 15_000,
      nowMs: () => now,
      servesStaleOn: (err) => err instanceof Error && err.message === 'database away',
    });
    await authenticator.authenticate('mon_good');
    failure = new Error('database away');
    now += 60_000;
    await expect(authenticator.authenticate('mon_good')).resolves.toMatchObject({
      keyId: 'key_1',
    });
    // A key never looked up has nothing to answer with; another failure is not served stale.
    await expect(authenticator.authenticate('mon_other')).rejects.toThrow('database away');
    failure = new Error('a bug');
    await expect(authenticator.authenticate('mon_good')).rejects.toThrow('a bug');
  });

  it('remembers unknown keys only briefly', async () => {
    const f = fixture();
    await f.authenticator.authenticate('mon_bad');
    await f.authenticator.authenticate('mon_bad');
    expect(f.lookups()).toBe(1);
    f.advance(5_001);
    await f.authenticator.authenticate('mon_bad');
    expect(f.lookups()).toBe(2);
  });
});

describe('apiKeyFromHeaders', () => {
  const basic = (credentials: string) =>
    `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;

  it('reads X-API-Key first, then a Bearer or Token credential', () => {
    expect(apiKeyFromHeaders({ 'x-api-key': 'a', authorization: 'Bearer b' })).toBe('a');
    expect(apiKeyFromHeaders({ authorization: 'Bearer b' })).toBe('b');
    expect(apiKeyFromHeaders({ authorization: 'bearer  c ' })).toBe('c');
    expect(apiKeyFromHeaders({ authorization: 'Token d' })).toBe('d');
    expect(apiKeyFromHeaders({ authorization: 'Digest e' })).toBeUndefined();
    expect(apiKeyFromHeaders({})).toBeUndefined();
  });

  it('takes the password of basic auth as the key, whatever the user name', () => {
    expect(apiKeyFromHeaders({ authorization: basic('collectd:mon_key:with:colons') })).toBe(
      'mon_key:with:colons',
    );
    expect(apiKeyFromHeaders({ authorization: basic(':mon_key') })).toBe('mon_key');
    expect(apiKeyFromHeaders({ authorization: basic('user-only') })).toBeUndefined();
    expect(apiKeyFromHeaders({ authorization: basic('user:') })).toBeUndefined();
    expect(apiKeyFromHeaders({ authorization: 'Basic abc' })).toBeUndefined();
  });
});
