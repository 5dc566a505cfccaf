// @services postgres
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKeyStore } from '@monitor/db';
import { createApiCall, problemBody, waitFor } from '@monitor/testkit/builders';
import { newOrganization } from './testing/api-target.js';
import { postIngest } from './testing/ingest-client.js';
import type { LocalApiTarget } from './testing/monitor-stack.js';
import { startLocalApiTarget } from './testing/monitor-stack.js';

/** Short, so the suite waits out a few seconds, not the 15 s default. */
const keyCacheTtlMs = 4_000;

/**
 * A revoked API key on the real server (role `all` on PostgreSQL), which serves ingest, /api/v1,
 * /prometheus and the ruler API from one process: one key cache for all of them, so once one
 * router refuses the key (after API_KEY_CACHE_TTL_MS), every other refuses it too.
 */
describe('a revoked API key in role all', () => {
  let target: LocalApiTarget;

  beforeAll(async () => {
    target = await startLocalApiTarget('key_revocation', 'embedded', {
      API_KEY_CACHE_TTL_MS: String(keyCacheTtlMs),
    });
  });

  afterAll(async () => {
    await target?.stop();
  });

  const ingest = (key: string) =>
    postIngest(target.ingestUrl, { host: 'revoked-1', metrics: { cpu_percent: 12 } }, { key });
  const api = createApiCall({ baseUrl: () => target.apiUrl });
  /** Each read router, the way its clients send the key; each answer refused in its own shape. */
  const reads = (key: string) =>
    Promise.all([
      api('/api/v1/services', { key }),
      api('/prometheus/api/v1/labels', { bearer: key }),
      api('/prometheus/config/v1/rules', { bearer: key }),
    ]);

  it('is refused on ingest, /api/v1, /prometheus and the ruler API once the TTL is out', async () => {
    const { key, keyId } = await newOrganization(target.db, ['ingest', 'read', 'write']);
    expect((await ingest(key)).status).toBe(200);
    // Were each router's key cache its own, the read routers' entries would now be younger than
    // ingest's, and would outlive it: the key would still read after ingest refused it.
    await sleep(keyCacheTtlMs / 2);
    const [services, labels, rules] = await reads(key);
    expect([services.status, labels.status, rules.status]).toEqual([200, 200, 404]);

    expect(await createApiKeyStore(target.db).revokeKey(keyId)).toBeDefined();
    const refused = await waitFor(
      async () => {
        const reply = await ingest(key);
        return reply.status === 200 ? undefined : reply;
      },
      keyCacheTtlMs + 30_000,
      'ingest to refuse the revoked key',
    );
    expect(refused).toMatchObject({ status: 401, body: problemBody(401) });

    // At once, with no further wait: the same cache already knows.
    const [servicesAfter, labelsAfter, rulesAfter] = await reads(key);
    expect(servicesAfter).toMatchObject({ status: 401, body: problemBody(401) });
    expect(servicesAfter.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    for (const reply of [labelsAfter, rulesAfter]) {
      expect(reply).toMatchObject({
        status: 401,
        body: { status: 'error', errorType: 'unauthorized', error: 'A valid API key is required.' },
      });
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    }
  });
});
