// @services timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus, Subscription } from '@monitor/bus';
import { createInProcessBus, deadLetterTopic, partitionForKey } from '@monitor/bus';
import type { Database } from '@monitor/db';
import type { ServiceDetailRow } from '@monitor/db';
import {
  assignPartitions,
  createEvaluatorStore,
  createExemplarReader,
  createShardedExemplarReader,
  createDatabase,
  readLateSampleWrites,
  createInvestigationStore,
  createRuleStore,
  createServiceQueries,
  createShardedServiceQueries,
  readPartitionShards,
} from '@monitor/db';
import { createLogger, createMetrics, createShutdown } from '@monitor/platform';
import type { AlertSeverity } from '@monitor/schemas';
import { encodeSampleMessage, encodeSampleRecord } from '@monitor/schemas';
import { buildAlertRuleDraft, buildSampleMessage } from '@monitor/testkit/builders';
import { writerGroupId } from './consumer-groups.js';
import { migratedDatabase } from '../../db/src/testing/clean-database.js';
import type { RoleContext } from './role-context.js';
import { startSampleWriter } from './roles/writer-role.js';
import type { SampleShards } from './sample-shards.js';
import {
  createShardReadMetrics,
  routeSampleShards,
  shardedSeriesSource,
  shardServiceIdentities,
} from './sample-shards.js';
import { createPrometheusSeriesSource, createSourceTiersReader } from '@monitor/db/series';
import { startPrometheusApi } from './testing/prometheus-fixture.js';
import { combineLateWrites, snapshotVisibility } from '@monitor/api';
import type { SeriesSource } from '@monitor/promql';
import { createPromqlEngine } from '@monitor/promql';
import { Registry } from 'prom-client';

/**
 * Issue 59, items 1 to 3: the writer stores each partition's samples on the shard the control
 * database names for it, with that partition's offsets in the same transaction there, so a
 * replay is skipped per shard; alerts name their hosts' services as the shards hold them, and
 * PromQL and the services' reads answer as one database holding everything. Two databases of the TimescaleDB server stand for two clusters;
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
            // Peers of an investigation share a rack, across shards.
            tags: { rack: `rack-${hosts.indexOf(host) % 3}` },
            // Every fourth host's samples carry a trace.
            ...(hosts.indexOf(host) % 4 === 0
              ? {
                  exemplars: [
                    {
                      metric: 'cpu_percent',
                      value: i + 0.25,
                      labels: { trace_id: `${host}-${i}` },
                    },
                  ],
                }
              : {}),
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

/**
 * Alerts fired through the evaluator's store, in the control database (with their services on
 * their shards) and in the single one: critical, warning, an info alert that leaves its host to
 * staleness, two alerts on one host, and a host the writer has not stored yet.
 */
const alerted: [host: string, severity: AlertSeverity][] = [
  ['host-1', 'critical'],
  ['host-2', 'warning'],
  ['host-3', 'info'],
  ['host-7', 'warning'],
  ['host-7', 'critical'],
  ['host-12', 'warning'],
  ['host-new', 'critical'],
];
const firedAtMs = t0 + 45_000;
let firing: Promise<void> | undefined;
function alertsFired(): Promise<void> {
  firing ??= (async () => {
    await singleFilled();
    const identities = shardServiceIdentities(control.db, shards, partitions);
    for (const [db, store] of [
      [control.db, createEvaluatorStore(control.db, evaluatorOwner, { identities })],
      [single.db, createEvaluatorStore(single.db, evaluatorOwner)],
    ] as const) {
      await db.sql`insert into organizations (id, name) values (${orgId}, 'shards')`;
      const rules = new Map<AlertSeverity, { id: string; generation: number }>();
      for (const severity of ['critical', 'warning', 'info'] as const) {
        const rule = await createRuleStore(db).createRule(
          orgId,
          buildAlertRuleDraft({ severity, name: severity }),
        );
        const [row] = await db.sql<{ generation: string }[]>`
            select generation from alert_rules where id = ${rule.id}`;
        rules.set(severity, { id: rule.id, generation: Number(row?.generation) });
      }
      for (const [host, severity] of alerted) {
        const rule = rules.get(severity) as { id: string; generation: number };
        const partition = partitionOf(host);
        const fromOffset = await store.appliedOffset(partition);
        const committed = await store.commit({
          partition,
          fromOffset,
          nextOffset: fromOffset + 1,
          states: [],
          cleared: [],
          watermarks: [],
          events: [
            {
              type: 'fire',
              orgId,
              host,
              ruleId: rule.id,
              value: 95,
              startedMs: firedAtMs - 15_000,
              firedMs: firedAtMs,
            },
          ],
          ruleGenerations: { [rule.id]: rule.generation },
        });
        expect(committed).toMatchObject({ outcome: 'committed', fired: 1 });
      }
    }
  })();
  return firing;
}

const partitionOf = (host: string): number => partitionForKey(`${orgId}:${host}`, partitions);
const evaluatorOwner = { groupId: 'monitor-evaluator', topic };

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

  it("fires alerts on the services of the hosts' shards, and answers the services list, a service and its history as one database does", async () => {
    await alertsFired();
    // Each alert names its host's service as the host's shard holds it; the control database
    // keeps copies of other shards' alerted services only.
    const alerts = await control.db.sql<{ host: string; service_id: string }[]>`
      select host, service_id from alerts where org_id = ${orgId}`;
    expect(alerts).toHaveLength(alerted.length);
    for (const alert of alerts) {
      const shard = shards.shardOf(partitionOf(alert.host));
      const [own] = await shard.db.sql<{ id: string; shard_copy: boolean }[]>`
        select id, shard_copy from services where org_id = ${orgId} and name = ${alert.host}`;
      expect(own, alert.host).toEqual({ id: alert.service_id, shard_copy: false });
      const [kept] = await control.db.sql<{ id: string; shard_copy: boolean }[]>`
        select id, shard_copy from services where org_id = ${orgId} and name = ${alert.host}`;
      expect(kept, alert.host).toEqual({
        id: alert.service_id,
        shard_copy: shard.db !== control.db,
      });
    }
    expect(new Set(alerts.map((alert) => shards.shardOf(partitionOf(alert.host)).name))).toEqual(
      new Set(['s0', 's1']),
    );

    const options = { staleAfterSeconds: 300 };
    const sharded = createShardedServiceQueries(control.db, [control.db, s1.db], options);
    const reference = createServiceQueries(single.db, options);
    const withoutIds = (page: { services: { id: string }[]; total: number }) => ({
      total: page.total,
      services: page.services.map(({ id: _id, ...rest }) => rest),
    });
    // The last samples are at t0 + 60 s plus 0 ms (host-0 … host-9) or 7 ms (the others): at
    // this clock the first are stale, the others not.
    const now = new Date(t0 + 60_000 + 300_000 + 5);
    const clocks = [now, new Date(t0 + 60_000), new Date(t0 + 3_600_000)];
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
      for (const at of clocks) {
        const full = { orgId, now: at, ...query };
        expect(withoutIds(await sharded.listServices(full)), JSON.stringify(full)).toEqual(
          withoutIds(await reference.listServices(full)),
        );
      }
    }
    const everything = await sharded.listServices({ orgId, now, limit: 50, offset: 0 });
    expect(everything.total).toBe(hosts.length + 1);
    // Every status is somewhere in the list, so each branch above was compared.
    expect(new Set(everything.services.map((service) => service.status))).toEqual(
      new Set(['critical', 'warning', 'healthy', 'stale']),
    );

    // A service's detail (with its active alerts) and its history, by the ids each deployment
    // lists.
    const referenceIds = new Map(
      (await reference.listServices({ orgId, now, limit: 50, offset: 0 })).services.map((row) => [
        row.name,
        row.id,
      ]),
    );
    const comparable = (detail: ServiceDetailRow | undefined) =>
      detail === undefined
        ? undefined
        : {
            ...detail,
            id: undefined,
            activeAlerts: detail.activeAlerts.map((alert) => ({
              host: alert.host,
              severity: alert.severity,
              status: alert.status,
              value: alert.value,
              silenced: alert.silenced,
            })),
          };
    for (const { id, name } of everything.services) {
      const referenceId = referenceIds.get(name) as string;
      for (const at of clocks) {
        const got = await sharded.getService({ orgId, id, now: at });
        expect(got?.id, name).toBe(id);
        expect(comparable(got), name).toEqual(
          comparable(await reference.getService({ orgId, id: referenceId, now: at })),
        );
      }
      for (const step of ['1m', '1h'] as const) {
        const window = {
          orgId,
          metric: 'cpu_percent',
          step,
          from: new Date(0),
          to: new Date(t0 + 3_600_000),
        };
        expect(await sharded.readMetricSeries({ ...window, serviceId: id }), name).toEqual(
          await reference.readMetricSeries({ ...window, serviceId: referenceId }),
        );
      }
    }
    // What was compared is not empty: host-7's two alerts, a history of host-12 (on s1).
    const idOf = (name: string): string =>
      everything.services.find((service) => service.name === name)?.id ?? '';
    const detail = await sharded.getService({ orgId, id: idOf('host-7'), now });
    expect(detail?.activeAlerts.map((alert) => alert.severity).sort()).toEqual([
      'critical',
      'warning',
    ]);
    expect(shards.shardOf(partitionOf('host-12')).name).toBe('s1');
    const history = await sharded.readMetricSeries({
      orgId,
      serviceId: idOf('host-12'),
      metric: 'cpu_percent',
      step: '1m',
      from: new Date(0),
      to: new Date(t0 + 3_600_000),
    });
    expect(history?.length).toBeGreaterThan(0);
    expect(await sharded.getService({ orgId, id: 'svc_unknown', now })).toBeUndefined();
    expect(
      await sharded.readMetricSeries({
        orgId,
        serviceId: 'svc_unknown',
        metric: 'cpu_percent',
        step: '1m',
        from: new Date(0),
        to: new Date(t0),
      }),
    ).toBeUndefined();
  }, 120_000);

  it("investigates with the evidence of the services' shards, as one database does", async () => {
    await alertsFired();
    const sharded = createInvestigationStore(control.db, { shards: [control.db, s1.db] });
    const reference = createInvestigationStore(single.db);
    const opened = (db: Database) => db.sql<
      { service_id: string; alert_id: string; host: string; severity: string }[]
    >`
      select i.service_id, i.alert_id, a.host, a.severity from investigations i
      join alerts a on a.id = i.alert_id
      where i.org_id = ${orgId} order by a.host, a.severity`;
    const got = await opened(control.db);
    const want = await opened(single.db);
    const hostsOf = (rows: typeof got) => rows.map(({ host, severity }) => `${host} ${severity}`);
    expect(hostsOf(got)).toEqual(hostsOf(want));
    expect(got).toHaveLength(alerted.filter(([, severity]) => severity !== 'info').length);
    // Ids differ between the two deployments; everything else must not.
    const withoutIds = (value: unknown): unknown =>
      JSON.parse(JSON.stringify(value), (key: string, field: unknown) =>
        key === 'id' || key.endsWith('Id') ? undefined : field,
      );
    const request = (investigation: (typeof got)[number]) => ({
      orgId,
      serviceId: investigation.service_id,
      alertId: investigation.alert_id,
      from: new Date(t0 - 60_000),
      incidentFrom: new Date(t0 + 30_000),
      to: new Date(t0 + 90_000),
      historyFrom: new Date(t0 - 3_600_000),
      peerTagKeys: ['rack'],
      maxPeers: 4,
      choosePeerMetrics: () => ['cpu_percent'],
    });
    let peersElsewhere = 0;
    for (const [i, investigation] of got.entries()) {
      const evidence = await sharded.loadEvidence(request(investigation));
      expect(withoutIds(evidence), investigation.host).toEqual(
        withoutIds(await reference.loadEvidence(request(want[i] as (typeof want)[number]))),
      );
      const own = shards.shardOf(partitionOf(investigation.host)).name;
      peersElsewhere += evidence.peers.filter(
        (peer) => shards.shardOf(partitionOf(peer.service.name)).name !== own,
      ).length;
      if (investigation.host !== 'host-new') expect(evidence.samples.length).toBeGreaterThan(0);
    }
    expect(peersElsewhere).toBeGreaterThan(0);

    // An investigation waits for the writer's offsets of every partition, each on its shard.
    const claimAll = async (storageGroupId: string) => {
      const claimed = [];
      for (;;) {
        const claim = await sharded.claim({
          leaseMs: 60_000,
          maxAttempts: 3,
          evidence: { storageGroupId, maxWaitMs: 3_600_000 },
        });
        if (claim === undefined) return claimed;
        claimed.push(claim);
      }
    };
    expect(await claimAll('monitor-nobody')).toEqual([]);
    expect(await claimAll(writerGroupId)).toHaveLength(got.length);
  }, 120_000);

  it('reads exemplars, the tiers every shard filled and the late writes of both shards', async () => {
    await singleFilled();
    const range = { startMs: t0 - 60_000, endMs: t0 + 3_600_000 };
    const limits = { maxSeries: 1_000, maxExemplars: 10_000 };
    const sharded = createShardedExemplarReader([control.db, s1.db].map(createExemplarReader));
    const got = await sharded.read(orgId, [[]], range, limits);
    expect(got).toEqual(await createExemplarReader(single.db).read(orgId, [[]], range, limits));
    expect('series' in got && got.series.length).toBe(hosts.length / 4);
    expect(await sharded.read(orgId, [[]], range, { ...limits, maxExemplars: 10 })).toEqual({
      overLimit: 'maxExemplars',
    });

    // A tier is read from where both shards filled it; one only s0 filled is not read.
    const fill = (db: Database, tier: string, fromMs: number) => db.sql`
      insert into tier_fills (tier, filled_from_ms, filled_to_ms) values (${tier}, ${fromMs}, ${t0})
      on conflict (tier) do update set filled_from_ms = excluded.filled_from_ms`;
    await fill(control.db, '5m', t0 - 86_400_000);
    await fill(s1.db, '5m', t0 - 3_600_000);
    await fill(control.db, '1h', t0 - 86_400_000);
    const tiers = await createSourceTiersReader([control.db, s1.db], {
      refreshMs: 60_000,
      nowMs: () => t0,
    })();
    expect(tiers?.tiers).toEqual([{ widthMs: 300_000, fromMs: t0 - 3_600_000 }]);
    await control.db.sql`delete from tier_fills`;
    await s1.db.sql`delete from tier_fills`;

    // A cached answer read in the shards' snapshots before a late write on s1 is stale after it.
    const lateWrites = combineLateWrites(
      [control.db, s1.db].map((db) => ({
        read: (org: string, fromMs: number, toMs: number) =>
          readLateSampleWrites(db, org, fromMs, toMs),
      })),
    );
    const before = await lateWrites.read(orgId, t0 - 7_200_000, t0);
    await s1.db.sql`
      insert into late_sample_writes (org_id, hour_ms)
      values (${orgId}, ${Math.floor((t0 - 3_600_000) / 3_600_000) * 3_600_000})`;
    const after = await lateWrites.read(orgId, t0 - 7_200_000, t0);
    const written = after.xids.filter((xid) => !before.xids.includes(xid));
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/^1\//);
    expect(snapshotVisibility(before.snapshot)(written[0] as string)).toBe(false);
    expect(snapshotVisibility(after.snapshot)(written[0] as string)).toBe(true);
  }, 120_000);

  it('leaves a shard that is away out only where partial answers are asked for, and says so', async () => {
    await singleFilled();
    // Nothing listens there: every read of it fails as a database that is away does.
    const away = createDatabase({
      url: 'postgres://monitor:secret@127.0.0.1:1/away',
      maxConnections: 1,
    });
    const apiKey = 'partial-key';
    const [api, reference] = await Promise.all([
      startPrometheusApi([control.db, s1.db, away], orgId, apiKey),
      startPrometheusApi(single.db, orgId, apiKey),
    ]);
    try {
      const ask = async (url: string, path: string, params: Record<string, string>) => {
        const response = await fetch(
          `${url}/api/v1/${path}?${new URLSearchParams(params).toString()}`,
          {
            headers: { Authorization: `Bearer ${apiKey}` },
          },
        );
        return {
          status: response.status,
          body: (await response.json()) as {
            status: string;
            errorType?: string;
            data?: unknown;
            warnings?: string[];
          },
        };
      };
      const endS = String((t0 + samplesPerHost * 15_000) / 1000);
      const range = { query: 'sum by (rack) (cpu_percent)', start: String(t0 / 1000), end: endS };
      for (const [path, params] of [
        ['query_range', { ...range, step: '15' }],
        ['query', { query: 'count(cpu_percent)', time: endS }],
        ['series', { 'match[]': 'cpu_percent', start: String(t0 / 1000), end: endS }],
        ['labels', {}],
      ] as const) {
        const strict = await ask(api.url, path, params);
        expect(strict, path).toMatchObject({
          status: 503,
          body: { status: 'error', errorType: 'unavailable' },
        });
        const partial = await ask(api.url, path, { ...params, partial_response: 'true' });
        const whole = await ask(reference.url, path, params);
        expect(partial.status, path).toBe(200);
        // s0 and s1 hold every sample here: what the partial answer left out was empty.
        expect(partial.body.data, path).toEqual(whole.body.data);
        expect(partial.body.warnings, path).toEqual([
          'partial answer: shard s2 did not answer (The database is temporarily unavailable.); its series are left out',
        ]);
        expect(whole.body.warnings, path).toBeUndefined();
      }
      expect(
        (await ask(api.url, 'query', { query: '1', partial_response: 'maybe' })).body,
      ).toMatchObject({ status: 'error', errorType: 'bad_data' });
    } finally {
      await Promise.all([api.close(), reference.close(), away.close()]);
    }
  }, 120_000);
});
