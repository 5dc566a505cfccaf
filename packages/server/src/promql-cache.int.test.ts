// @services timescale redis
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '@monitor/db';
import { createApiKeyStore, createDatabase, createOrgStore } from '@monitor/db';
import { createTestDatabase } from '@monitor/testkit';
import type { TestDatabase } from '@monitor/testkit';
import { createApiCall, waitFor } from '@monitor/testkit/builders';
import { serviceUrl } from '@monitor/testkit/vitest';
import { postIngest } from './testing/ingest-client.js';
import type { RoleProcess } from './testing/role-process.js';
import { startRoleProcess } from './testing/role-process.js';

/**
 * The range query cache of the api role (issue 57, point 2), on the real server: a refresh is
 * answered partly from the cache, a sample written late into a cached range is in the very next
 * answer, and one organization's cached answer never reaches another.
 */
const key = `mon_test_${randomBytes(16).toString('hex')}`;
const minuteMs = 60_000;
let database: TestDatabase;
let db: Database;
let monitor: RoleProcess;

type Matrix = { metric: Record<string, string>; values: [number, string][] }[];

async function queryRange(
  apiKey: string,
  query: string,
  startMs: number,
  endMs: number,
  server: RoleProcess = monitor,
) {
  const params = new URLSearchParams({
    query,
    start: String(startMs / 1000),
    end: String(endMs / 1000),
    step: '60',
  });
  const { status, body } = await createApiCall({ baseUrl: () => server.baseUrl, key: apiKey })<{
    data: { result: Matrix };
  }>(`/prometheus/api/v1/query_range?${params.toString()}`);
  expect(status).toBe(200);
  return body.data.result;
}

/** A server's cache counters and bytes, from /metrics. */
async function cacheMetrics(
  server: RoleProcess = monitor,
): Promise<{ hit: number; miss: number; bytes: number }> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  // Lines as prom-client writes them, with the process's default labels after ours.
  const value = (name: string, result?: string): number => {
    const line = text
      .split('\n')
      .find(
        (each) =>
          each.startsWith(`${name}{`) &&
          (result === undefined || each.includes(`result="${result}"`)),
      );
    return line === undefined ? Number.NaN : Number(line.split(' ').at(-1));
  };
  return {
    hit: value('monitor_promql_cache_requests_total', 'hit'),
    miss: value('monitor_promql_cache_requests_total', 'miss'),
    bytes: value('monitor_promql_cache_bytes'),
  };
}

/** A value a minute for `host`, 30 s past each minute, over [fromMs, toMs). */
async function ingestMinutes(apiKey: string, host: string, fromMs: number, toMs: number) {
  const payloads = [];
  for (let t = fromMs; t < toMs; t += minuteMs) {
    payloads.push({
      host,
      timestamp: new Date(t + 30_000).toISOString(),
      metrics: { cache_probe: (t / minuteMs) % 1000 },
    });
  }
  const reply = await postIngest(monitor.baseUrl, payloads, { key: apiKey });
  expect(reply.status).toBe(200);
}

beforeAll(async () => {
  database = await createTestDatabase(serviceUrl('timescale'), 'promql_cache');
  db = createDatabase({ url: database.url, maxConnections: 2 });
  monitor = await startRoleProcess('all', {
    DATABASE_URL: database.url,
    MONITOR_BOOTSTRAP_API_KEY: key,
    INGEST_RATE_LIMIT_PER_MINUTE: '100000',
  });
});

afterAll(async () => {
  await monitor?.stop();
  await db?.close();
  await database?.drop();
});

describe('the range query cache', () => {
  it('answers a refresh from the cache, and a late sample in the next answer', async () => {
    const endMs = Math.floor(Date.now() / minuteMs) * minuteMs - 20 * minuteMs;
    const startMs = endMs - 2 * 60 * minuteMs;
    await ingestMinutes(key, 'cache-host', startMs - 10 * minuteMs, endMs);
    await waitFor(
      async () =>
        (await queryRange(key, 'cache_probe', startMs, endMs))[0]?.values.length === 121
          ? true
          : undefined,
      30_000,
      'two hours of samples stored',
    );

    // The wait's last query stored the range: both of these are answered from it.
    const before = await cacheMetrics();
    const first = await queryRange(key, 'cache_probe', startMs, endMs);
    const again = await queryRange(key, 'cache_probe', startMs, endMs);
    const cached = await cacheMetrics();
    expect(again).toEqual(first);
    expect(before.miss).toBeGreaterThanOrEqual(1);
    expect(cached.miss - before.miss).toBe(0);
    expect(cached.hit - before.hit).toBe(2);
    expect(cached.bytes).toBeGreaterThan(0);

    // A sample at a step's own time is the one that step reads.
    const lateMs = startMs + 60 * minuteMs;
    const reply = await postIngest(
      monitor.baseUrl,
      {
        host: 'cache-host',
        timestamp: new Date(lateMs).toISOString(),
        metrics: { cache_probe: 4242 },
      },
      { key },
    );
    expect(reply.status).toBe(200);
    // Written once the writer committed it: the uncached instant query sees it.
    await waitFor(
      async () => {
        const params = new URLSearchParams({ query: 'cache_probe', time: String(lateMs / 1000) });
        const { body } = await createApiCall({ baseUrl: () => monitor.baseUrl, key })<{
          data: { result: { value: [number, string] }[] };
        }>(`/prometheus/api/v1/query?${params.toString()}`);
        return body.data.result[0]?.value[1] === '4242' ? true : undefined;
      },
      30_000,
      'the late sample stored',
    );
    const after = await queryRange(key, 'cache_probe', startMs, endMs);
    expect(after[0]!.values.find(([t]) => t * 1000 === lateMs)).toEqual([lateMs / 1000, '4242']);
    expect(after[0]!.values.filter(([t]) => t * 1000 !== lateMs)).toEqual(
      first[0]!.values.filter(([t]) => t * 1000 !== lateMs),
    );
    expect((await cacheMetrics()).miss - cached.miss).toBe(1);
  }, 120_000);

  it("never answers one organization's query from another's", async () => {
    const org = await createOrgStore(db).createOrganization(
      `org-${randomBytes(4).toString('hex')}`,
    );
    const other = (
      await createApiKeyStore(db).createKey({
        orgId: org.id,
        name: 'test',
        scopes: ['ingest', 'read'],
      })
    ).key;
    const endMs = Math.floor(Date.now() / minuteMs) * minuteMs - 20 * minuteMs;
    const startMs = endMs - 60 * minuteMs;
    await ingestMinutes(key, 'tenant-host', startMs - 10 * minuteMs, endMs);
    const query = 'count(cache_probe)';
    await waitFor(
      async () =>
        (await queryRange(key, query, startMs, endMs))[0]?.values.length === 61 ? true : undefined,
      30_000,
      'an hour of samples stored',
    );
    expect(await queryRange(key, query, startMs, endMs)).toHaveLength(1);
    const before = await cacheMetrics();
    expect(await queryRange(other, query, startMs, endMs)).toEqual([]);
    expect((await cacheMetrics()).miss - before.miss).toBe(1);
  }, 120_000);

  it('is shared by api replicas on the same Redis', async () => {
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: serviceUrl('redis'),
      MONITOR_BOOTSTRAP_API_KEY: key,
    };
    const replicas = await Promise.all([
      startRoleProcess('api', env),
      startRoleProcess('api', env),
    ]);
    try {
      const [one, other] = replicas;
      const endMs = Math.floor(Date.now() / minuteMs) * minuteMs - 20 * minuteMs;
      const startMs = endMs - 60 * minuteMs;
      await ingestMinutes(key, 'shared-host', startMs - 10 * minuteMs, endMs);
      const query = 'max(cache_probe{host="shared-host"})';
      await waitFor(
        async () =>
          (await queryRange(key, query, startMs, endMs))[0]?.values.length === 61
            ? true
            : undefined,
        30_000,
        'an hour of samples stored',
      );
      const computed = await queryRange(key, query, startMs, endMs, one);
      const shared = await queryRange(key, query, startMs, endMs, other);
      expect(shared).toEqual(computed);
      expect(await cacheMetrics(one)).toMatchObject({ hit: 0, miss: 1 });
      expect(await cacheMetrics(other)).toMatchObject({ hit: 1, miss: 0 });
      expect((await cacheMetrics(other)).bytes).toBeGreaterThan(0);
    } finally {
      await Promise.all(replicas.map((replica) => replica.stop()));
    }
  }, 120_000);
});
