// @services postgres kafka
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAlertRuleDraft, buildSampleMessage, waitFor } from '@monitor/testkit/builders';
import type { Bus, Publisher } from '@monitor/bus';
import { createKafkaBus, partitionForKey } from '@monitor/bus';
import type { Database } from '@monitor/db';
import { createDatabase, createOrgStore, createRuleStore } from '@monitor/db';
import { createLogger } from '@monitor/platform';
import type { SampleMessage } from '@monitor/schemas';
import {
  decodeSampleRecord,
  encodeBinarySampleMessage,
  encodeSampleMessage,
  encodeSampleRecord,
} from '@monitor/schemas';
import { createTestDatabase } from '@monitor/testkit';
import type { TestDatabase } from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { RoleProcess } from './testing/role-process.js';
import { postIngest } from './testing/ingest-client.js';
import { runCommand, startRoleProcess } from './testing/role-process.js';
import { encode } from './testing/prometheus-fixture.js';

/**
 * The samples topic carrying records of many hosts (issue 26) beside the single-host records
 * written before, through the real writer and evaluator processes on Kafka and PostgreSQL.
 */
let testDb: TestDatabase;
let db: Database;
let bus: Bus;
let env: Record<string, string>;
let orgId: string;
let topic: string;
const started = new Set<RoleProcess>();
const t0 = Date.now() - 60_000;

async function startRole(role: string): Promise<RoleProcess> {
  const proc = await startRoleProcess(role, env);
  started.add(proc);
  return proc;
}

function message(host: string, timeMs: number, cpu: number): SampleMessage {
  return buildSampleMessage({
    org_id: orgId,
    host,
    time_ms: timeMs,
    metrics: { cpu_percent: cpu },
    tags: { role: 'web' },
  });
}

/** Stored samples of a host: cpu values in time order. */
async function storedCpu(host: string): Promise<number[]> {
  const rows = await db.sql<{ value: number }[]>`
    select sample_value(s.mantissa, s.scale, s.value) as value from samples s join series r on r.id = s.series_id
    join services v on v.id = r.service_id
    where v.org_id = ${orgId} and v.name = ${host} order by s.time`;
  return rows.map((row) => row.value);
}

async function projectionOf(host: string) {
  const [row] = await db.sql<{ last_seen: Date; metrics: Record<string, number> }[]>`
    select last_seen, metrics from services where org_id = ${orgId} and name = ${host}`;
  return row === undefined
    ? undefined
    : { lastSeenMs: row.last_seen.getTime(), cpu: row.metrics['cpu_percent'] };
}

async function deadLetters(): Promise<{ key: string | null; reason: string; index?: string }[]> {
  const letters: { key: string | null; reason: string; index?: string }[] = [];
  const reader = await bus.subscribe({
    groupId: `dlq-reader-${randomBytes(3).toString('hex')}`,
    topics: [`${topic}.dlq`],
    fromBeginning: true,
    handleBatch: (batch) => {
      for (const record of batch.records) {
        const index = record.headers['x-sample-record-index'];
        letters.push({
          key: record.key,
          reason: record.headers['x-dlq-reason'] ?? '',
          ...(index === undefined ? {} : { index }),
        });
      }
      return Promise.resolve();
    },
  });
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  await reader.stop();
  return letters;
}

beforeAll(async () => {
  testDb = await createTestDatabase(serviceUrl('postgres'), 'sample_records');
  db = createDatabase({ url: testDb.url, maxConnections: 3 });
  topic = `samples-${randomBytes(4).toString('hex')}`;
  env = {
    DATABASE_URL: testDb.url,
    KAFKA_BROKERS: serviceUrl('kafka'),
    SAMPLES_TOPIC: topic,
    SAMPLES_TOPIC_PARTITIONS: '3',
    WRITER_BATCH_MAX_WAIT_MS: '20',
    WRITER_CONSUMERS: '1',
  };
  await runCommand(['migrate'], env);
  orgId = (await createOrgStore(db).createOrganization(`records-${randomBytes(3).toString('hex')}`))
    .id;
  bus = createKafkaBus({
    brokers: [serviceUrl('kafka')],
    clientId: 'sample-records-test',
    logger: createLogger({ level: 'silent', name: 'test' }),
  });
  await bus.admin.ensureTopic(topic, { partitions: 3 });
  await bus.admin.ensureTopic(`${topic}.dlq`, { partitions: 1 });
}, 120_000);

afterAll(async () => {
  await Promise.all([...started].map((proc) => proc.stop()));
  await bus?.close();
  await db?.close();
  await testDb?.drop();
});

describe('sample records of many hosts', () => {
  let single: Publisher;
  let packed: Publisher;

  beforeAll(() => {
    single = bus.publisher();
    packed = bus.publisher({ packRecords: encodeSampleRecord });
  });

  it('stores and evaluates single-host JSON, many-host JSON and binary records of one topic, a bad host set aside alone', async () => {
    const rule = await createRuleStore(db).createRule(
      orgId,
      buildAlertRuleDraft({ severity: 'warning' }),
    );
    const writer = await startRole('writer');
    const evaluator = await startRole('evaluator');
    const hosts = Array.from({ length: 12 }, (_, i) => `mixed-${i}`);
    // The oldest records: one host each, in JSON.
    await single.publish(
      topic,
      hosts.slice(0, 4).map((host) => ({
        key: `${orgId}:${host}`,
        value: encodeSampleMessage(message(host, t0, 95)),
      })),
    );
    // Then every host of a request that shares a partition in one record, in JSON (as with
    // INGEST_BUS_ENCODING=json) and in binary, the default. One binary host does not decode (a
    // version from the future), one decodes but storage refuses its time (year 287,000). The org id is
    // new each run, so each bad host's name is chosen to share its partition with neighbours:
    // alone in its partition it would travel as a single-host record.
    const neighbourPartitions = new Set(
      hosts.map((host) => partitionForKey(`${orgId}:${host}`, 3)),
    );
    const withNeighbours = (base: string): string => {
      for (let i = 0; ; i += 1) {
        const name = `${base}-${i}`;
        if (neighbourPartitions.has(partitionForKey(`${orgId}:${name}`, 3))) return name;
      }
    };
    const undecodableHost = withNeighbours('undecodable');
    const unstorableHost = withNeighbours('unstorable');
    const undecodable = encodeBinarySampleMessage(message(undecodableHost, t0, 1));
    undecodable[1] = 9;
    const unstorable = encodeBinarySampleMessage(message(unstorableHost, 9e15, 1));
    await packed.publish(topic, [
      ...hosts.slice(4).map((host) => ({
        key: `${orgId}:${host}`,
        value: encodeSampleMessage(message(host, t0, 95)),
      })),
      ...hosts.map((host) => ({
        key: `${orgId}:${host}`,
        value: encodeSampleMessage(message(host, t0 + 1_000, 20)),
      })),
    ]);
    // Both bad hosts hash with their neighbours into the many-host records of their partition,
    // among binary and JSON messages.
    const neighbours = hosts.map((host, i) => ({
      key: `${orgId}:${host}`,
      value: (i % 3 === 0 ? encodeSampleMessage : encodeBinarySampleMessage)(
        message(host, t0 + 2_000, 96),
      ),
    }));
    await packed.publish(topic, [
      ...neighbours.slice(0, 6),
      { key: `${orgId}:${undecodableHost}`, value: undecodable },
      { key: `${orgId}:${unstorableHost}`, value: unstorable },
      ...neighbours.slice(6),
    ]);

    for (const host of hosts) {
      await waitFor(
        async () => ((await storedCpu(host)).length === 3 ? true : undefined),
        30_000,
        `the samples of ${host}`,
      );
      expect(await storedCpu(host)).toEqual([95, 20, 96]);
      // The projection goes in beside the samples' transaction, on a connection of its own, and
      // may land after it (behind the evaluator's lock on a service row it created first).
      await waitFor(
        async () => ((await projectionOf(host))?.lastSeenMs === t0 + 2_000 ? true : undefined),
        30_000,
        `the projection of ${host}`,
      );
      expect(await projectionOf(host)).toEqual({ lastSeenMs: t0 + 2_000, cpu: 96 });
    }
    expect(await projectionOf(unstorableHost)).toBeUndefined();
    // Every host fired on its first sample, resolved on its second, fired again on its third:
    // exactly once each, whichever record format carried it.
    await waitFor(
      async () => {
        const [row] = await db.sql<{ n: string }[]>`
          select count(*) as n from alerts where rule_id = ${rule.id} and status = 'active'`;
        return Number(row?.n) === hosts.length ? true : undefined;
      },
      30_000,
      'the alerts',
    );
    const alerts = await db.sql<{ host: string; status: string }[]>`
      select s.name as host, a.status from alerts a join services s on s.id = a.service_id
      where a.rule_id = ${rule.id} order by s.name, a.status`;
    expect(alerts).toEqual(
      [...hosts].sort().flatMap((host) => [
        { host, status: 'active' },
        { host, status: 'resolved' },
      ]),
    );
    const letters = await deadLetters();
    // Two dead letters, each one host's own message: the unstorable host under its key, the
    // undecodable one (whose host cannot be read) under its record's key.
    expect(letters).toHaveLength(2);
    expect(letters).toContainEqual(
      expect.objectContaining({
        key: `${orgId}:${unstorableHost}`,
        reason: expect.stringMatching(/^cannot be stored: /) as unknown,
      }),
    );
    expect(letters).toContainEqual(
      expect.objectContaining({
        reason: 'binary sample message has unknown version 9',
      }),
    );
    expect(letters.every((letter) => letter.index !== undefined)).toBe(true);
    expect(writer.ended()).toBeUndefined();
    expect(evaluator.ended()).toBeUndefined();
    await Promise.all([writer.stop(), evaluator.stop()]);
    started.delete(writer);
    started.delete(evaluator);
  }, 120_000);

  it('a gateway publishes binary messages, or JSON ones for older consumers when set to', async () => {
    const key = `mon_test_${randomBytes(16).toString('hex')}`;
    const firstBytes = new Map<string, number | undefined>();
    for (const encoding of ['binary', 'json']) {
      const gateway = await startRoleProcess('gateway', {
        ...env,
        MONITOR_BOOTSTRAP_API_KEY: key,
        ...(encoding === 'binary' ? {} : { INGEST_BUS_ENCODING: encoding }),
      });
      started.add(gateway);
      const answer = await postIngest(
        gateway.baseUrl,
        { host: `encoded-${encoding}`, metrics: { cpu_percent: 1 } },
        { key },
      );
      expect(answer.status).toBe(200);
      await gateway.stop();
      started.delete(gateway);
    }
    const reader = await bus.subscribe({
      groupId: `encoding-reader-${randomBytes(3).toString('hex')}`,
      topics: [topic],
      fromBeginning: true,
      handleBatch: (batch) => {
        for (const record of batch.records) {
          const hosts = decodeSampleRecord(record.value);
          for (const host of hosts.ok ? hosts.value : []) {
            if (host.decoded.ok && host.decoded.value.host.startsWith('encoded-')) {
              firstBytes.set(host.decoded.value.host, host.message[0]);
            }
          }
        }
        return Promise.resolve();
      },
    });
    await waitFor(
      () => Promise.resolve(firstBytes.size === 2 ? true : undefined),
      30_000,
      'both records',
    );
    await reader.stop();
    expect(firstBytes).toEqual(
      new Map([
        ['encoded-binary', 0x01],
        ['encoded-json', '{'.charCodeAt(0)],
      ]),
    );
  }, 120_000);

  it('carries NaN, ±Inf, −0 and values past ±1e100 from remote-write to storage in either encoding', async () => {
    const key = `mon_test_${randomBytes(16).toString('hex')}`;
    const writer = await startRole('writer');
    const values: [string, number][] = [
      ['nan', Number.NaN],
      ['pinf', Number.POSITIVE_INFINITY],
      ['ninf', Number.NEGATIVE_INFINITY],
      ['huge', 1e300],
      ['negzero', -0],
      ['one', 1],
    ];
    for (const encoding of ['binary', 'json']) {
      const gateway = await startRoleProcess('gateway', {
        ...env,
        MONITOR_BOOTSTRAP_API_KEY: key,
        ...(encoding === 'binary' ? {} : { INGEST_BUS_ENCODING: encoding }),
      });
      started.add(gateway);
      // The bootstrap key's organization, not the test's: the host name tells them apart.
      const host = `values-${encoding}-${randomBytes(3).toString('hex')}`;
      const body = encode(
        values.map(([name, value]) => ({
          labels: { __name__: `v_${name}`, host },
          samples: [[t0, value]],
          nanIsValue: true,
        })),
      );
      const answer = await fetch(`${gateway.baseUrl}/api/v1/write`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${key}`,
          'Content-Type': 'application/x-protobuf',
          'Content-Encoding': 'snappy',
          'X-Prometheus-Remote-Write-Version': '0.1.0',
        },
        body,
      });
      expect(answer.status).toBe(204);
      await gateway.stop();
      started.delete(gateway);
      const stored = async () =>
        db.sql<{ metric: string; value: number; apart: boolean }[]>`
          select r.metric, x.value, x.apart from (
            select series_id, sample_value(mantissa, scale, value) as value, false as apart
            from samples
            union all select series_id, value, true from unaggregated_samples
          ) x join series r on r.id = x.series_id join services v on v.id = r.service_id
          where v.name = ${host} order by r.metric`;
      const rows = await waitFor(
        async () => {
          const found = await stored();
          return found.length === values.length ? found : undefined;
        },
        30_000,
        `the values sent through ${encoding}`,
      );
      expect(rows.map((row) => [row.metric, row.apart])).toEqual([
        ['v_huge', true],
        ['v_nan', true],
        ['v_negzero', false],
        ['v_ninf', true],
        ['v_one', false],
        ['v_pinf', true],
      ]);
      const byMetric = new Map(rows.map((row) => [row.metric, row.value]));
      for (const [name, value] of values) {
        // Object.is: −0 comes back as −0, NaN as NaN.
        expect(Object.is(byMetric.get(`v_${name}`), value), `v_${name}`).toBe(true);
      }
    }
    expect(writer.ended()).toBeUndefined();
    const letters = await deadLetters();
    expect(letters.filter((letter) => letter.key?.includes(':values-') === true)).toEqual([]);
  }, 120_000);

  it('completes the services projection after a writer killed between the samples and the projection', async () => {
    const host = 'crash-between';
    let writer = await startRole('writer');
    await packed.publish(topic, [
      { key: `${orgId}:${host}`, value: encodeSampleMessage(message(host, t0, 10)) },
    ]);
    await waitFor(
      async () => ((await projectionOf(host))?.cpu === 10 ? true : undefined),
      30_000,
      'the first sample in the projection',
    );

    // Hold the service's row so the writer stops between its two steps: its samples'
    // transaction reads the row and commits, its projection update (run beside it) waits for
    // the lock.
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked: () => void = () => undefined;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holder = db.sql.begin(async (tx) => {
      await tx`select 1 from services where org_id = ${orgId} and name = ${host} for update`;
      locked();
      await released;
    });
    await lockTaken;
    await packed.publish(topic, [
      { key: `${orgId}:${host}`, value: encodeSampleMessage(message(host, t0 + 5_000, 20)) },
    ]);
    await waitFor(
      async () => ((await storedCpu(host)).length === 2 ? true : undefined),
      30_000,
      'the second sample stored',
    );
    await waitFor(
      async () => {
        const waiting = await db.sql<{ n: string }[]>`
          select count(*) as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`;
        return Number(waiting[0]?.n) > 0 ? true : undefined;
      },
      30_000,
      'the projection update waiting for the lock',
    );
    await writer.kill();
    started.delete(writer);
    // A crashed machine takes its connections with it; here the server would otherwise run the
    // waiting update once the lock is released.
    await db.sql`
      select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and application_name = 'monitor-writer'`;
    release();
    await holder;
    expect(await storedCpu(host)).toEqual([10, 20]);
    expect(await projectionOf(host)).toEqual({ lastSeenMs: t0, cpu: 10 });

    // The next writer gets the batch again (its offset was not committed to Kafka): the samples
    // are skipped as already written, and the projection is brought up to date.
    writer = await startRole('writer');
    await waitFor(
      async () => ((await projectionOf(host))?.cpu === 20 ? true : undefined),
      // The killed member keeps its partitions until its session times out.
      90_000,
      'the projection after the restart',
    );
    expect(await projectionOf(host)).toEqual({ lastSeenMs: t0 + 5_000, cpu: 20 });
    expect(await storedCpu(host)).toEqual([10, 20]);
  }, 180_000);
});
