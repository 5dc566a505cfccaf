import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  apiKeyDisplayPrefix,
  generateApiKey,
  hashApiKey,
  isApiKeyScope,
  keysEqual,
} from './api-key.js';

describe('generateApiKey', () => {
  it('makes mon_ plus 256 random bits in base64url', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^mon_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(key.slice(4), 'base64url')).toHaveLength(32);
  });

  it('never repeats itself', () => {
    const keys = new Set(Array.from({ length: 1000 }, generateApiKey));
    expect(keys.size).toBe(1000);
  });
});

describe('hashApiKey', () => {
  it('is the SHA-256 of the key text', () => {
    const key = 'mon_example';
    expect(hashApiKey(key)).toEqual(createHash('sha256').update(key).digest());
    expect(hashApiKey(key)).toHaveLength(32);
  });
});

describe('apiKeyDisplayPrefix', () => {
  it('keeps mon_ and eight characters of a generated key', () => {
    expect(apiKeyDisplayPrefix('mon_ABCDEFGHijklmnop')).toBe('mon_ABCDEFGH');
  });

  it('shows at most a quarter, and four characters, of a key chosen by an operator', () => {
    expect(apiKeyDisplayPrefix('custom-bootstrap-key')).toBe('cust');
    expect(apiKeyDisplayPrefix('short-key')).toBe('sh');
  });
});

describe('keysEqual', () => {
  it('compares hashes, and different lengths are unequal', () => {
    const a = hashApiKey('a');
    expect(keysEqual(a, hashApiKey('a'))).toBe(true);
    expect(keysEqual(a, hashApiKey('b'))).toBe(false);
    expect(keysEqual(a, a.subarray(0, 16))).toBe(false);
  });
});

describe('isApiKeyScope', () => {
  it('knows ingest, read and write only', () => {
    expect(['ingest', 'read', 'write', 'admin', 1].map(isApiKeyScope)).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
  });
});
