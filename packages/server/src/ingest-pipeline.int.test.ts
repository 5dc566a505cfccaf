// @services postgres kafka redis
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@monitor/testkit/builders';
import { createKafkaBus } from '@monitor/bus';
import type { Database } from '@monitor/db';
import { createApiKeyStore, createDatabase, createOrgStore } from '@monitor/db';
import { createLogger } from '@monitor/platform';
import { createTestDatabase, getFreePort } from '@monitor/testkit';
import type { TestDatabase } from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';
import { postIngest } from './testing/ingest-client.js';
import { describeIngestApi } from './testing/http-api/ingest.suite.js';
import type { RoleProcess } from './testing/role-process.js';
import { runCommand, startRoleProcess } from './testing/role-process.js';

const bootstrapKey = `mon_test_${randomBytes(16).toString('hex')}`;
let testDb: TestDatabase;
let db: Database;
let env: Record<string, string>;
let gateway: RoleProcess;
let writer: RoleProcess;
let api: RoleProcess;
const started: RoleProcess[] = [];

async function startRole(
  role: string,
  extraEnv: Record<string, string> = {},
): Promise<RoleProcess> {
  const proc = await startRoleProcess(role, { ...env, ...extraEnv });
  started.push(proc);
  return proc;
}

async function newKey(
  scopes: ('ingest' | 'read' | 'write')[],
): Promise<{ key: string; id: string }> {
  const org = await createOrgStore(db).createOrganization(`org-${randomBytes(4).toString('hex')}`);
  const created = await createApiKeyStore(db).createKey({ orgId: org.id, name: 'test', scopes });
  return { key: created.key, id: created.record.id };
}

async function storedSampleCount(host?: string): Promise<number> {
  const rows = host
    ? await db.sql<
        { n: string }[]
      >`select count(*) as n from samples s join series r on r.id = s.series_id join services v on v.id = r.service_id where v.name = ${host}`
    : await db.sql<{ n: string }[]>`select count(*) as n from samples`;
  return Number(rows[0]!.n);
}

beforeAll(async () => {
  testDb = await createTestDatabase(serviceUrl('postgres'), 'pipeline');
  db = createDatabase({ url: testDb.url, maxConnections: 2 });
  env = {
    DATABASE_URL: testDb.url,
    KAFKA_BROKERS: serviceUrl('kafka'),
    REDIS_URL: serviceUrl('redis'),
    SAMPLES_TOPIC: `samples-${randomBytes(4).toString('hex')}`,
    SAMPLES_TOPIC_PARTITIONS: '3',
    MONITOR_BOOTSTRAP_API_KEY: bootstrapKey,
    API_KEY_CACHE_TTL_MS: '1000',
    WRITER_BATCH_MAX_WAIT_MS: '20',
  };
  await runCommand(['migrate'], env);
  [gateway, writer, api] = await Promise.all([
    startRole('gateway'),
    startRole('writer'),
    startRole('api'),
  ]);
});

afterAll(async () => {
  await Promise.all(started.map((proc) => proc.stop()));
  await db?.close();
  await testDb?.drop();
});

describe('ingest pipeline (gateway → Kafka → writer → PostgreSQL)', () => {
  it('stores an ingested sample in samples, snapshots and the services projection', async () => {
    const timestamp = new Date(Date.now() - 60_000).toISOString();
    const result = await postIngest(
      gateway.baseUrl,
      {
        host: 'web-1',
        timestamp,
        metrics: { cpu_percent: 42.5, memory_percent: 61 },
        tags: { environment: 'prod', region: 'eu-west-1' },
        docker_containers: [
          { name: 'api', image: 'api:1.2', status: 'running', cpu_percent: 3, memory_usage: 1024 },
        ],
        processes: [{ name: 'node', pid: 12, cpu_percent: 30, memory_rss: 2048 }],
        agent_version: 'ignored',
      },
      { key: bootstrapKey },
    );
    expect(result).toMatchObject({ status: 200, body: { status: 'ok', events_accepted: 2 } });

    await waitFor(
      async () => ((await storedSampleCount('web-1')) === 2 ? true : undefined),
      15_000,
      'samples',
    );
    const samples = await db.sql<{ metric: string; value: number; time: Date }[]>`
      select r.metric, s.value, timestamptz 'epoch' + s.time_ms * interval '1 millisecond' as time
      from raw_samples(array(select id from series), 0, ${Date.UTC(9999, 0, 1)}) s
      join series r on r.id = s.series_id join services v on v.id = r.service_id
      where v.name = 'web-1' order by r.metric`;
    expect(samples.map((s) => [s.metric, s.value, s.time.toISOString()])).toEqual([
      ['cpu_percent', 42.5, timestamp],
      ['memory_percent', 61, timestamp],
    ]);
    const [service] = await db.sql<
      { id: string; metrics: unknown; tags: unknown; last_seen: Date }[]
    >`
      select id, metrics, tags, last_seen from services where name = 'web-1'`;
    expect(service).toMatchObject({
      metrics: { cpu_percent: 42.5, memory_percent: 61 },
      tags: { environment: 'prod', region: 'eu-west-1' },
    });
    expect(service!.id).toMatch(/^svc_/);
    expect(service!.last_seen.toISOString()).toBe(timestamp);
    const [snapshot] = await db.sql<{ containers: unknown; processes: unknown }[]>`
      select containers, processes from snapshots where service_id = ${service!.id}`;
    expect(snapshot).toEqual({
      containers: [
        { name: 'api', image: 'api:1.2', status: 'running', cpu_percent: 3, memory_usage: 1024 },
      ],
      processes: [{ name: 'node', pid: 12, cpu_percent: 30, memory_rss: 2048 }],
    });
  });

  it('keeps the newest values in the projection whatever order samples arrive in', async () => {
    const newer = new Date(Date.now() - 10_000).toISOString();
    const older = new Date(Date.now() - 20_000).toISOString();
    const ok1 = await postIngest(
      gateway.baseUrl,
      { host: 'web-order', timestamp: newer, metrics: { cpu_percent: 2 }, tags: { v: 'new' } },
      { key: bootstrapKey },
    );
    const ok2 = await postIngest(
      gateway.baseUrl,
      {
        host: 'web-order',
        timestamp: older,
        metrics: { cpu_percent: 1, disk_percent: 5 },
        tags: { v: 'old' },
      },
      { key: bootstrapKey },
    );
    expect([ok1.status, ok2.status]).toEqual([200, 200]);
    await waitFor(
      async () => ((await storedSampleCount('web-order')) === 3 ? true : undefined),
      15_000,
      'samples',
    );
    const [service] = await db.sql<{ metrics: unknown; tags: unknown; last_seen: Date }[]>`
      select metrics, tags, last_seen from services where name = 'web-order'`;
    expect(service).toEqual({
      metrics: { cpu_percent: 2, disk_percent: 5 },
      tags: { v: 'new' },
      last_seen: new Date(newer),
    });
  });

  // What the endpoint accepts and each client error: the suite that also runs against the
  // compose stack (compose-stack.container.test.ts).
  describe('the ingest endpoint', () => {
    describeIngestApi(() => ({ ingestUrl: gateway.baseUrl, apiUrl: api.baseUrl, db }), []);
  });

  it('creates organizations and keys from the CLI, printing a key once and never listing it', async () => {
    const org = JSON.parse(await runCommand(['orgs', 'create', 'cli-org'], env)) as { id: string };
    expect(org.id).toMatch(/^org_/);
    const created = JSON.parse(
      await runCommand(['keys', 'create', '--org', org.id, '--scopes', 'ingest,read'], env),
    ) as { key: string; id: string; scopes: string[] };
    expect(created.key).toMatch(/^mon_[A-Za-z0-9_-]{43}$/);
    expect(created.scopes).toEqual(['ingest', 'read']);
    const listed = await runCommand(['keys', 'list', '--org', org.id], env);
    expect(listed).toContain(created.id);
    expect(listed).not.toContain(created.key);
    const [stored] = await db.sql<
      { key_hash: Buffer }[]
    >`select key_hash from api_keys where id = ${created.id}`;
    expect(stored!.key_hash.toString('utf8')).not.toContain(created.key);
    const result = await postIngest(
      gateway.baseUrl,
      { host: 'cli', metrics: { a: 1 } },
      { key: created.key },
    );
    expect(result.status).toBe(200);
  });

  it('stops accepting a revoked key within the cache TTL', async () => {
    const { key, id } = await newKey(['ingest']);
    expect(
      (await postIngest(gateway.baseUrl, { host: 'revoke', metrics: { a: 1 } }, { key })).status,
    ).toBe(200);
    await runCommand(['keys', 'revoke', id], env);
    const status = await waitFor(
      async () => {
        const result = await postIngest(
          gateway.baseUrl,
          { host: 'revoke', metrics: { a: 1 } },
          { key },
        );
        return result.status === 401 ? result.status : undefined;
      },
      30_000,
      'the revoked key to be refused',
    );
    expect(status).toBe(401);
  });

  it('shares the rate limit across two gateways through Redis: together they admit exactly the limit', async () => {
    const limit = 20;
    const limited = { INGEST_RATE_LIMIT_PER_MINUTE: String(limit) };
    const [first, second] = await Promise.all([
      startRole('gateway', limited),
      startRole('gateway', limited),
    ]);
    const { key } = await newKey(['ingest']);
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 30; i++) {
      const target = i % 2 === 0 ? first : second;
      const result = await postIngest(
        target.baseUrl,
        { host: 'limited', metrics: { a: i } },
        { key },
      );
      statuses.push(result.status);
      if (result.status === 429) retryAfter = result.headers.get('retry-after');
      else expect(result.headers.get('ratelimit-policy')).toContain(`q=${limit}`);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(limit);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    await Promise.all([first.stop(), second.stop()]);
  });

  it('fails open when Redis is unreachable, saying so in a log line and a metric', async () => {
    const deadRedis = `redis://127.0.0.1:${await getFreePort()}`;
    const gw = await startRole('gateway', { REDIS_URL: deadRedis });
    for (let i = 0; i < 3; i++) {
      expect(
        (
          await postIngest(
            gw.baseUrl,
            { host: 'no-redis', metrics: { a: i } },
            { key: bootstrapKey },
          )
        ).status,
      ).toBe(200);
    }
    const metrics = await (await fetch(`${gw.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/ingest_rate_limit_store_errors_total\S* [1-9]/);
    expect(gw.output()).toContain('rate-limit store unavailable');
    await gw.stop();
  });

  it('dead-letters an undecodable message with its reason and keeps writing', async () => {
    const bus = createKafkaBus({
      brokers: [serviceUrl('kafka')],
      clientId: 'test',
      logger: createLogger({ level: 'silent', name: 'test' }),
    });
    try {
      const reasons: string[] = [];
      const dlq = await bus.subscribe({
        groupId: `dlq-reader-${randomBytes(3).toString('hex')}`,
        topics: [`${env['SAMPLES_TOPIC']}.dlq`],
        fromBeginning: true,
        handleBatch: (batch) => {
          for (const record of batch.records) reasons.push(record.headers['x-dlq-reason'] ?? '');
          return Promise.resolve();
        },
      });
      const publisher = bus.publisher();
      await publisher.publish(env['SAMPLES_TOPIC']!, [
        { key: 'org:poison', value: Buffer.from('{not json') },
      ]);
      const after = await postIngest(
        gateway.baseUrl,
        { host: 'after-poison', metrics: { a: 1 } },
        { key: bootstrapKey },
      );
      expect(after.status).toBe(200);
      await waitFor(
        async () => ((await storedSampleCount('after-poison')) === 1 ? true : undefined),
        15_000,
        'the sample after the poison message',
      );
      await waitFor(
        () => Promise.resolve(reasons.length > 0 ? true : undefined),
        15_000,
        'the dead letter',
      );
      expect(reasons).toEqual(['message value is not JSON']);
      await dlq.stop();
      const metrics = await (await fetch(`${writer.baseUrl}/metrics`)).text();
      expect(metrics).toMatch(/writer_dead_letters_total\{[^}]*reason="undecodable"[^}]*\} 1/);
      expect(metrics).toMatch(/consumer_lag_records\{[^}]*group="writer"[^}]*\} \d+/);
    } finally {
      await bus.close();
    }
  });
});
