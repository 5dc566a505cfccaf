import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { AppError } from '@monitor/platform';
import type { ApiKeyAuthenticator, AuthenticatedKey } from './api-key-authenticator.js';
import type { KeyRefusal } from './require-scope.js';
import { authenticatedKey, keyRefusalError, requireScope } from './require-scope.js';

const keys: Record<string, AuthenticatedKey> = {
  'read-key': { keyId: 'key_r', orgId: 'org_a', scopes: ['read'] },
  'ingest-key': { keyId: 'key_i', orgId: 'org_a', scopes: ['ingest'] },
};

const authenticator: ApiKeyAuthenticator = {
  authenticate: (plaintext) => Promise.resolve(plaintext ? keys[plaintext] : undefined),
};

/** A request with these headers and its response, never on a socket that talks. */
function exchange(headers: Record<string, string> = {}) {
  const req = new IncomingMessage(new Socket());
  req.headers = headers;
  return { req, res: new ServerResponse(req) };
}

/** Runs the middleware; what it rendered, and whether it let the request go on. */
async function run(scope: 'read' | 'write' | 'ingest', headers: Record<string, string>) {
  const { req, res } = exchange(headers);
  const refusals: KeyRefusal[] = [];
  let passed = false;
  await requireScope(authenticator, scope, (refusal) => {
    refusals.push(refusal);
  })(req, res, () => (passed = true));
  return { res, refusals, passed };
}

describe('requireScope', () => {
  it('lets a key holding the scope through, and keeps it for the handlers', async () => {
    const { res, refusals, passed } = await run('read', { 'x-api-key': 'read-key' });
    expect({ refusals, passed }).toEqual({ refusals: [], passed: true });
    expect(authenticatedKey(res)).toEqual(keys['read-key']);
  });

  it('reads the key from every header apiKeyFromHeaders takes', async () => {
    const basic = `Basic ${Buffer.from('prometheus:read-key').toString('base64')}`;
    for (const headers of [{ authorization: 'Bearer read-key' }, { authorization: basic }]) {
      expect((await run('read', headers)).passed).toBe(true);
    }
  });

  it('renders a missing or unknown key as unauthorized, without going on', async () => {
    for (const headers of [{}, { 'x-api-key': 'nope' }] as Record<string, string>[]) {
      const { res, refusals, passed } = await run('read', headers);
      expect({ refusals, passed }).toEqual({
        refusals: [{ reason: 'unauthorized' }],
        passed: false,
      });
      expect(() => authenticatedKey(res)).toThrow(/not behind requireScope/);
    }
  });

  it('renders a key without the scope as forbidden, naming the scope', async () => {
    const { refusals, passed } = await run('write', { 'x-api-key': 'read-key' });
    expect({ refusals, passed }).toEqual({
      refusals: [{ reason: 'forbidden', scope: 'write' }],
      passed: false,
    });
  });

  it('throws the refusal by default, for the router’s error handler to answer', async () => {
    const { req, res } = exchange({ 'x-api-key': 'ingest-key' });
    const check = requireScope(authenticator, 'read');
    await expect(check(req, res, () => undefined)).rejects.toMatchObject({
      code: 'forbidden',
      message: 'The API key lacks the read scope this operation needs.',
    });
    await expect(check(exchange().req, res, () => undefined)).rejects.toMatchObject({
      code: 'unauthorized',
    });
  });

  it('rejects with the lookup’s failure instead of refusing the key', async () => {
    const away = new AppError('dependency_unavailable', 'The database is unavailable.');
    const failing: ApiKeyAuthenticator = { authenticate: () => Promise.reject(away) };
    const { req, res } = exchange({ 'x-api-key': 'read-key' });
    let rendered = false;
    const check = requireScope(failing, 'read', () => {
      rendered = true;
    });
    await expect(check(req, res, () => undefined)).rejects.toBe(away);
    expect(rendered).toBe(false);
  });
});

describe('keyRefusalError', () => {
  it('is a 401 or a 403 problem in the text every router answers', () => {
    expect(keyRefusalError({ reason: 'unauthorized' })).toMatchObject({
      code: 'unauthorized',
      message: 'A valid API key is required.',
    });
    expect(keyRefusalError({ reason: 'forbidden', scope: 'ingest' })).toMatchObject({
      code: 'forbidden',
      message: 'The API key lacks the ingest scope this operation needs.',
    });
  });
});
