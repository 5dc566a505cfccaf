// @services postgres kafka
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildSampleMessage, uniqueOrgId, waitFor } from '@monitor/testkit/builders';
import type { Bus, Subscription } from '@monitor/bus';
import { createKafkaBus, partitionForKey } from '@monitor/bus';
import type { Database } from '@monitor/db';
import {
  createDatabase,
  createEvaluatorStore,
  loadLiveRules,
  migrate,
  ruleSetFingerprint,
} from '@monitor/db';
import { createLogger } from '@monitor/platform';
import { encodeSampleMessage } from '@monitor/schemas';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { AlertEvaluator } from './alert-evaluator.js';
import { createAlertEvaluator } from './alert-evaluator.js';
import type { RulePoller } from './rule-poller.js';
import { createRulePoller } from './rule-poller.js';

/**
 * No data in the streaming evaluator, against a real Kafka broker and PostgreSQL: evaluator
 * replicas in one consumer group, each sweeping for silence on a timer like the evaluator role,
 * on a clock the test moves (no test waits no_data_minutes of real time).
 */
const logger = createLogger({ level: 'silent', name: 'test' });
const partitions = 4;
const noMetrics = {
  evaluated: () => undefined,
  alertsFired: () => undefined,
  alertsResolved: () => undefined,
  recordsSkipped: () => undefined,
  logRestarted: () => undefined,
};

type Replica = {
  bus: Bus;
  subscription: Subscription;
  evaluator: AlertEvaluator;
  poller: RulePoller;
  sweeps: number;
  stop(): Promise<void>;
};

describe('no data on Kafka and PostgreSQL', () => {
  let admin: Database;
  let db: Database;
  let name: string;
  /** The evaluators' wall clock, moved by the tests. */
  let nowMs = Date.now();
  const replicas = new Set<Replica>();

  beforeAll(async () => {
    admin = createDatabase({ url: serviceUrl('postgres'), maxConnections: 1 });
    name = `no_data_${randomBytes(4).toString('hex')}`;
    await admin.sql`create database ${admin.sql(name)}`;
    const url = new URL(serviceUrl('postgres'));
    url.pathname = `/${name}`;
    db = createDatabase({ url: url.toString(), maxConnections: 8 });
    await migrate(db);
  });

  afterEach(async () => {
    await Promise.all([...replicas].map((replica) => replica.stop()));
  });

  afterAll(async () => {
    await db.close();
    await admin.sql`drop database if exists ${admin.sql(name)} with (force)`;
    await admin.close();
  });

  /** A fresh organization, topic and consumer group, with one no-data rule. */
  async function scenario(label: string) {
    const orgId = uniqueOrgId();
    const topic = `no-data-${label}-${randomBytes(4).toString('hex')}`;
    const groupId = `evaluator-${randomBytes(4).toString('hex')}`;
    await db.sql`insert into organizations (id, name) values (${orgId}, ${label})`;
    await db.sql`
      insert into alert_rules (id, org_id, name, metric, condition, threshold, duration_minutes,
        severity, channels, no_data_minutes, no_data_state)
      values (${`rul_${randomBytes(4).toString('hex')}`}, ${orgId}, 'cpu silent', 'cpu_percent',
        'greater_than', 90, 0, 'warning', ${db.sql.array(['webhook'])}, 1, 'alerting')
    `;
    const setup = createKafkaBus({
      brokers: serviceUrl('kafka').split(','),
      clientId: 'no-data-setup',
      logger,
    });
    await setup.admin.ensureTopic(topic, { partitions });
    const publisher = setup.publisher();

    /** One host per partition, `count` partitions, named after `prefix`. */
    function hostsOnPartitions(prefix: string, count: number): string[] {
      const byPartition = new Map<number, string>();
      for (let i = 0; byPartition.size < count; i++) {
        const host = `${prefix}-${i}`;
        const partition = partitionForKey(`${orgId}:${host}`, partitions);
        if (!byPartition.has(partition)) byPartition.set(partition, host);
      }
      return [...byPartition.values()];
    }

    async function send(hosts: readonly string[], cpu = 40): Promise<void> {
      await publisher.publish(
        topic,
        hosts.map((host) => ({
          key: `${orgId}:${host}`,
          value: encodeSampleMessage(
            buildSampleMessage({
              org_id: orgId,
              host,
              time_ms: nowMs,
              metrics: { cpu_percent: cpu },
            }),
          ),
        })),
      );
    }

    /** An evaluator replica: its own Kafka client, rule poller, store and sweep timer. */
    async function replica(): Promise<Replica> {
      const poller = createRulePoller({
        fingerprint: () => ruleSetFingerprint(db),
        load: () => loadLiveRules(db),
        intervalMs: 60_000,
        onError: () => undefined,
        onChange: () => undefined,
      });
      await poller.start();
      const evaluator = createAlertEvaluator(
        {
          rules: poller,
          store: createEvaluatorStore(db, { groupId, topic }),
          deadLetters: { send: () => Promise.reject(new Error('nothing is dead-lettered here')) },
          metrics: noMetrics,
          logger,
          clock: { nowMs: () => nowMs },
        },
        { maxCachedHostsPerPartition: 1000 },
      );
      const bus = createKafkaBus({
        brokers: serviceUrl('kafka').split(','),
        clientId: 'no-data-evaluator',
        logger,
      });
      const subscription = await bus.subscribe({
        groupId,
        topics: [topic],
        fromBeginning: true,
        handleBatch: (batch, ctx) => evaluator.handleBatch(batch, ctx),
        partitionsConsumedConcurrently: partitions,
        sessionTimeoutMs: 10_000,
        heartbeatIntervalMs: 500,
        retryInitialMs: 50,
        maxWaitTimeMs: 100,
      });
      let sweeping: Promise<unknown> | undefined;
      const timer = setInterval(() => {
        sweeping ??= evaluator
          .sweepNoData()
          .then(() => (self.sweeps += 1))
          .catch(() => undefined)
          .finally(() => (sweeping = undefined));
      }, 50);
      const self: Replica = {
        bus,
        subscription,
        evaluator,
        poller,
        sweeps: 0,
        async stop() {
          if (!replicas.delete(self)) return;
          clearInterval(timer);
          await sweeping;
          await subscription.stop();
          await bus.close();
          await poller.stop();
        },
      };
      replicas.add(self);
      return self;
    }

    /** Resolves once every replica given swept `times` more times (with the clock as it is now). */
    async function sweptAgain(of: readonly Replica[], times = 3): Promise<void> {
      const from = of.map((r) => r.sweeps);
      await waitFor(
        () => Promise.resolve(of.every((r, i) => r.sweeps >= from[i]! + times) ? true : undefined),
        60_000,
        'sweeps',
      );
    }

    const lastSeen = (host: string) =>
      db.sql<{ seen_at: Date }[]>`
        select seen_at from evaluator_last_seen where org_id = ${orgId} and host = ${host}
      `;
    /** Resolves once the evaluators took a sample of each host at the clock's current time. */
    async function seenNow(hosts: readonly string[]): Promise<void> {
      const atMs = nowMs;
      for (const host of hosts) {
        await waitFor(
          async () => {
            const [row] = await lastSeen(host);
            return row !== undefined && row.seen_at.getTime() >= atMs ? true : undefined;
          },
          60_000,
          `a sample of ${host} evaluated`,
        );
      }
    }
    const alerts = () =>
      db.sql<{ host: string; status: string; reason: string; value: number | null }[]>`
        select host, status, reason, value from alerts where org_id = ${orgId}
        order by host, fired_at
      `;

    return {
      hostsOnPartitions,
      send,
      replica,
      sweptAgain,
      seenNow,
      alerts,
      async close() {
        await publisher.close();
        await setup.close();
      },
    };
  }

  it('fires exactly one no-data alert for a host whose samples stop, on a partition that receives nothing else, and resolves it on its next sample', async () => {
    const s = await scenario('stop');
    const [quiet, ...busy] = s.hostsOnPartitions('host', partitions);
    const a = await s.replica();
    await s.send([quiet!, ...busy]);
    await s.seenNow([quiet!, ...busy]);

    // 30 s later the others still send; nothing is silent for a minute yet.
    nowMs += 30_000;
    await s.send(busy);
    await s.seenNow(busy);
    await s.sweptAgain([a]);
    expect(await s.alerts()).toEqual([]);

    // 76 s after its last sample (a minute, plus the 15 s its last-seen time may lag), the
    // quiet host's partition has received nothing since.
    nowMs += 46_000;
    await s.send(busy);
    await s.seenNow(busy);
    await s.sweptAgain([a]);
    await s.sweptAgain([a]);
    expect(await s.alerts()).toEqual([
      { host: quiet, status: 'active', reason: 'no_data', value: null },
    ]);

    // Its next sample ends the silence.
    await s.send([quiet!]);
    await waitFor(
      async () => {
        const rows = await s.alerts();
        return rows.length === 1 && rows[0]!.status === 'resolved' ? rows : undefined;
      },
      60_000,
      'the no-data alert to resolve',
    );
    await s.close();
  });

  it('keeps exactly one no-data alert while partitions move between evaluators during the silence', async () => {
    const s = await scenario('moves');
    const quietHosts = s.hostsOnPartitions('quiet', partitions);
    const busy = s.hostsOnPartitions('busy', partitions);
    const a = await s.replica();
    await s.send([...quietHosts, ...busy]);
    await s.seenNow([...quietHosts, ...busy]);

    // The clock moves 25 s at a time, the busy hosts' samples evaluated at each step: they are
    // never silent for long; the quiet ones become due (a minute plus the 15 s a last-seen time
    // may lag) just as a second evaluator joins.
    for (let step = 0; step < 2; step++) {
      nowMs += 25_000;
      await s.send(busy);
      await s.seenNow(busy);
    }
    nowMs += 25_000;
    // The second evaluator joins (partitions move to it) while the first sweeps, then the first
    // leaves (every partition moves to the second), then a third joins (they move again).
    const joining = s.replica();
    await s.send(busy);
    const b = await joining;
    await s.sweptAgain([a, b]);
    await a.stop();
    await s.send(busy);
    await s.sweptAgain([b]);
    const c = await s.replica();
    await s.send(busy);
    await s.seenNow(busy);
    await s.sweptAgain([b, c]);
    nowMs += 25_000;
    await s.send(busy);
    await s.seenNow(busy);
    await s.sweptAgain([b, c]);

    const rows = await s.alerts();
    expect(rows.filter((row) => row.reason === 'no_data')).toHaveLength(quietHosts.length);
    for (const host of quietHosts) {
      expect(rows.filter((row) => row.host === host)).toEqual([
        { host, status: 'active', reason: 'no_data', value: null },
      ]);
    }
    // The busy hosts were never silent that long when a sweep looked.
    expect(rows.filter((row) => busy.includes(row.host))).toEqual([]);
    await s.close();
  });
});
