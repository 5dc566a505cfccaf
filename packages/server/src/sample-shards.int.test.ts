// @services timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus, Subscription } from '@monitor/bus';
import { createInProcessBus, deadLetterTopic, partitionForKey } from '@monitor/bus';
import type { Database } from '@monitor/db';
import {
  assignPartitions,
  createServiceQueries,
  listShardedServices,
  readPartitionShards,
} from '@monitor/db';
import { createLogger, createMetrics, createShutdown } from '@monitor/platform';
import { encodeSampleMessage, encodeSampleRecord } from '@monitor/schemas';
import { buildSampleMessage } from '@monitor/testkit/builders';
import { writerGroupId } from './consumer-groups.js';
import { migratedDatabase } from '../../db/src/testing/clean-database.js';
import type { RoleContext } from './role-context.js';
import { startSampleWriter } from './roles/writer-role.js';
import type { SampleShards } from './sample-shards.js';
import { createShardReadMetrics, routeSampleShards, shardedSeriesSource } from './sample-shards.js';
import { createPrometheusSeriesSource } from '@monitor/db/series';
import type { SeriesSource } from '@monitor/promql';
import { createPromqlEngine } from '@monitor/promql';
import { Registry } from 'prom-client';

/**
 * Issue 59, items 1 and 2: the writer stores each partition's samples on the shard the control
 * database names for it, with that partition's offsets in the same transaction there, so a
 * replay is skipped per shard. Two databases of the TimescaleDB server stand for two clusters;
 * shard s0 is the control database itself.
 */
const topic = 'metrics.samples.v1';
const partitions = 4;
const orgId = 'org_shards';
const hosts = Array.from({ length: 24 }, (_, i) => `host-${i}`);
const samplesPerHost = 5;
const t0 = Date.now() - 10 * 60_000;

let control: { db: Database; dispose(): Promise<void> };
let s1: { db: Database; dispose(): Promise<void> };
let single: { db: Database; dispose(): Promise<void> };
let shards: SampleShards;

function context(): RoleContext {
  const logger = createLogger({ level: 'warn', format: 'json' });
  return {
    logger,
    metrics: createMetrics({ defaultMetrics: false }),
    shutdown: createShutdown({ logger, timeoutMs: 10_000 }),
  };
}

/** Every host's samples, published in one order: a second bus given them assigns the same offsets. */
async function publishFleet(bus: Bus): Promise<void> {
  // Resolves once the writer stored them: the in-process bus acknowledges after its handler.
  // Appended at once, so a writer subscribed meanwhile sees them all in the log at its first fetch.
  const publisher = bus.publisher({ ackAfterConsumedBy: [writerGroupId] });
  const published: Promise<void>[] = [];
  for (let i = 0; i < samplesPerHost; i++) {
    published.push(
      publisher.publish(
        topic,
        hosts.map((host) => {
          const message = buildSampleMessage({
            org_id: orgId,
            host,
            time_ms: t0 + i * 15_000 + (host.length % 3) * 7,
            metrics: { cpu_percent: i + 0.25 },
          });
          return {
            key: `${orgId}:${host}`,
            value: encodeSampleRecord([encodeSampleMessage(message)]),
          };
        }),
      ),
    );
  }
  return Promise.all(published).then(() => publisher.close());
}

async function topicBus(): Promise<Bus> {
  const bus = createInProcessBus();
  await bus.admin.ensureTopic(topic, { partitions });
  await bus.admin.ensureTopic(deadLetterTopic(topic), { partitions: 1 });
  return bus;
}

async function writerOn(
  bus: Bus,
  ctx: RoleContext,
  to: { db: Database; shards: SampleShards } = { db: control.db, shards },
): Promise<Subscription> {
  return await startSampleWriter(
    ctx,
    {
      SAMPLES_TOPIC: topic,
      SAMPLES_TOPIC_PARTITIONS: partitions,
      KAFKA_SESSION_TIMEOUT_MS: 6_000,
      KAFKA_HEARTBEAT_INTERVAL_MS: 1_000,
      WRITER_BATCH_MAX_MESSAGES: 5_000,
      WRITER_BATCH_MAX_WAIT_MS: 0,
      WRITER_CONSUMERS: 1,
      WRITER_WRITE_CONNECTIONS: 1,
      WRITER_FETCH_MAX_BYTES_PER_PARTITION: 1_048_576,
      PROMQL_CACHE_SETTLED_MS: 600_000,
      ALERT_RETENTION_DAYS: 30,
      RAW_RETENTION_DAYS: 30,
      STORAGE_MOVE_BATCHES_PER_RUN: 10,
    },
    { ...to, bus },
  );
}

/** The hosts a shard's database holds samples of, with how many each. */
async function storedHosts(db: Database): Promise<Map<string, number>> {
  const rows = await db.sql<{ host: string; samples: string }[]>`
    select v.name as host, count(*) as samples from samples s
    join series r on r.id = s.series_id join services v on v.id = r.service_id
    where v.org_id = ${orgId} group by v.name`;
  return new Map(rows.map((row) => [row.host, Number(row.samples)]));
}

async function storedOffsets(db: Database): Promise<Map<number, number>> {
  const rows = await db.sql<{ partition: number; next_offset: string }[]>`
    select partition, next_offset from consumer_offsets where topic = ${topic}`;
  return new Map(rows.map((row) => [row.partition, Number(row.next_offset)]));
}

/** The same fleet written to one database alone, the reference of the differential tests. */
let filling: Promise<void> | undefined;
function singleFilled(): Promise<void> {
  filling ??= (async () => {
    const bus = await topicBus();
    const alone = routeSampleShards([{ name: 'main', db: single.db, reads: single.db }], []);
    const subscription = await writerOn(bus, context(), { db: single.db, shards: alone });
    await publishFleet(bus);
    await subscription.stop();
    await bus.close();
  })();
  return filling;
}

const partitionOf = (host: string): number => partitionForKey(`${orgId}:${host}`, partitions);

beforeAll(async () => {
  control = await migratedDatabase('timescale', 'shards_control');
  s1 = await migratedDatabase('timescale', 'shards_s1');
  single = await migratedDatabase('timescale', 'shards_single');
  await assignPartitions(control.db, topic, [1, 3], 's1');
  shards = routeSampleShards(
    [
      { name: 's0', db: control.db, reads: control.db },
      { name: 's1', db: s1.db, reads: s1.db },
    ],
    await readPartitionShards(control.db, topic),
  );
}, 120_000);

afterAll(async () => {
  await single?.dispose();
  await s1?.dispose();
  await control?.dispose();
});

describe('sample shards', () => {
  it('refuses a map that names a shard the deployment does not list', () => {
    expect(() =>
      routeSampleShards(
        [{ name: 's0', db: control.db, reads: control.db }],
        [
          { partition: 1, shard: 's1' },
          { partition: 3, shard: 's1' },
        ],
      ),
    ).toThrow('shards SAMPLE_SHARDS does not name: s1 (1, 3)');
  });

  it('stores each partition on its shard with its offsets, and a replay on neither shard twice', async () => {
    const expected = new Map<string, Map<string, number>>([
      ['s0', new Map()],
      ['s1', new Map()],
    ]);
    for (const host of hosts) {
      expected.get(shards.shardOf(partitionOf(host)).name)?.set(host, samplesPerHost);
    }
    // The fleet reaches both shards (murmur2 spreads 24 hosts over the 4 partitions).
    expect(expected.get('s0')?.size).toBeGreaterThan(0);
    expect(expected.get('s1')?.size).toBeGreaterThan(0);

    const first = await topicBus();
    const subscription = await writerOn(first, context());
    await publishFleet(first);
    await subscription.stop();
    await first.close();

    expect(await storedHosts(control.db)).toEqual(expected.get('s0'));
    expect(await storedHosts(s1.db)).toEqual(expected.get('s1'));
    const offsets = { s0: await storedOffsets(control.db), s1: await storedOffsets(s1.db) };
    expect([...offsets.s0.keys()].sort()).toEqual([0, 2]);
    expect([...offsets.s1.keys()].sort()).toEqual([1, 3]);

    // The same records at the same offsets (a bus that lost its commits): each shard's offsets
    // skip its partitions' records, so none reaches the duplicate check.
    const replay = await topicBus();
    const again = context();
    const replayed = publishFleet(replay);
    const replaying = await writerOn(replay, again);
    await replayed;
    await replaying.stop();
    await replay.close();
    const metrics = await again.metrics.registry.getSingleMetricAsString(
      'monitor_samples_duplicate_total',
    );
    expect(metrics).toContain('monitor_samples_duplicate_total{reason="same_value"} 0');
    expect(await storedHosts(control.db)).toEqual(expected.get('s0'));
    expect(await storedHosts(s1.db)).toEqual(expected.get('s1'));
    expect(await storedOffsets(control.db)).toEqual(offsets.s0);
    expect(await storedOffsets(s1.db)).toEqual(offsets.s1);
  }, 120_000);

  it('answers PromQL over both shards as one database holding the same samples does', async () => {
    await singleFilled();
    const registry = new Registry();
    const metrics = createShardReadMetrics(registry, shards.all);
    const engineOn = (source: SeriesSource) =>
      createPromqlEngine({
        source,
        lookbackDeltaMs: 300_000,
        maxSamples: 5_000_000,
        timeoutMs: 30_000,
        maxSeries: 10_000,
        maxPointsPerSeries: 11_000,
      });
    const sharded = engineOn(shardedSeriesSource(shards.all, orgId, { metrics }));
    const reference = engineOn(createPrometheusSeriesSource(single.db, orgId));
    const endMs = t0 + samplesPerHost * 15_000;
    for (const query of [
      'cpu_percent',
      'sum(cpu_percent)',
      'count by (host) (cpu_percent)',
      'max_over_time(cpu_percent[1m])',
      'topk(3, cpu_percent)',
    ]) {
      const got = await sharded.rangeQuery(query, t0, endMs, 15_000);
      expect(got, query).toEqual(await reference.rangeQuery(query, t0, endMs, 15_000));
      if (got.resultType === 'matrix') expect(got.result.length, query).toBeGreaterThan(0);
    }
    const source = shardedSeriesSource(shards.all, orgId, { metrics });
    const range = { startMs: t0, endMs };
    const signal = new AbortController().signal;
    const referenceSource = createPrometheusSeriesSource(single.db, orgId);
    expect(await source.labelValues('host', [], range, signal)).toEqual(
      await referenceSource.labelValues('host', [], range, signal),
    );
    expect(await source.series([[]], range, 10, signal)).toEqual(
      await referenceSource.series([[]], range, 10, signal),
    );

    const exported = await registry.metrics();
    for (const shard of ['s0', 's1']) {
      expect(exported).toContain(`monitor_shard_up{shard="${shard}"} 1`);
      expect(exported).toMatch(
        new RegExp(`monitor_shard_read_seconds_count\\{shard="${shard}"\\} [1-9]`),
      );
    }
  }, 120_000);

  it('lists services over both shards as one database holding them and the alerts does', async () => {
    await singleFilled();
    // Alerts in the control database (and in the single one), by host: critical, warning, an
    // info alert that leaves its host to staleness, and two alerts on one host.
    const alerted: [host: string, severity: string][] = [
      ['host-1', 'critical'],
      ['host-2', 'warning'],
      ['host-3', 'info'],
      ['host-7', 'warning'],
      ['host-7', 'critical'],
      ['host-12', 'warning'],
    ];
    for (const db of [control.db, single.db]) {
      for (const [i, [host, severity]] of alerted.entries()) {
        const [service] = await (shards.shardOf(partitionOf(host)).db === s1.db && db === control.db
          ? s1.db
          : db
        ).sql<{ id: string }[]>`select id from services where org_id = ${orgId} and name = ${host}`;
        await db.sql`
          insert into alerts (id, org_id, rule_id, rule_name, service_id, host, metric, condition,
            threshold, severity, status, value, started_at, fired_at)
          values (${`alr_0000000000000000000000000${i}`}, ${orgId}, ${`rul_000000000000000000000000${i}`},
            'r', ${service?.id ?? 'svc_none'}, ${host}, 'cpu_percent', 'greater_than', 1,
            ${severity}, 'active', 2, now(), now())`;
      }
    }
    const reference = createServiceQueries(single.db, { staleAfterSeconds: 300 });
    const withoutIds = (page: { services: { id: string }[]; total: number }) => ({
      total: page.total,
      services: page.services.map(({ id: _id, ...rest }) => rest),
    });
    // The last samples are at t0 + 60 s plus 0 ms (host-0 … host-9) or 7 ms (the others): at
    // this clock the first are stale, the others not.
    const now = new Date(t0 + 60_000 + 300_000 + 5);
    for (const query of [
      { limit: 50, offset: 0 },
      { limit: 5, offset: 0 },
      { limit: 5, offset: 10 },
      { limit: 5, offset: 22 },
      { limit: 5, offset: 30 },
      { limit: 50, offset: 0, status: 'critical' as const },
      { limit: 50, offset: 0, status: 'warning' as const },
      { limit: 3, offset: 1, status: 'healthy' as const },
      { limit: 50, offset: 0, status: 'stale' as const },
      { limit: 50, offset: 0, tags: { role: 'none' } },
    ]) {
      for (const at of [now, new Date(t0 + 60_000), new Date(t0 + 3_600_000)]) {
        const full = { orgId, now: at, ...query };
        const got = await listShardedServices(control.db, [control.db, s1.db], full, 300);
        expect(withoutIds(got), JSON.stringify(full)).toEqual(
          withoutIds(await reference.listServices(full)),
        );
      }
    }
    const everything = await listShardedServices(
      control.db,
      [control.db, s1.db],
      { orgId, now, limit: 50, offset: 0 },
      300,
    );
    expect(everything.total).toBe(hosts.length);
    // Every status is somewhere in the list, so each branch above was compared.
    expect(new Set(everything.services.map((service) => service.status))).toEqual(
      new Set(['critical', 'warning', 'healthy', 'stale']),
    );
  }, 120_000);
});
