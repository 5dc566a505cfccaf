// @services postgres kafka
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@monitor/testkit/builders';
import type { Database } from '@monitor/db';
import { createDatabase } from '@monitor/db';
import { createTestDatabase, startRestartableKafka } from '@monitor/testkit';
import type { RestartableKafka, TestDatabase } from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';
import { postIngest } from './testing/ingest-client.js';
import type { MonitorStack } from './testing/monitor-stack.js';
import { createMonitorStack } from './testing/monitor-stack.js';
import type { RoleProcess } from './testing/role-process.js';
import { runCommand, startRoleProcess } from './testing/role-process.js';

const key = `mon_test_${randomBytes(16).toString('hex')}`;
const started: RoleProcess[] = [];
const databases: TestDatabase[] = [];
const pools: Database[] = [];
const stacks: MonitorStack[] = [];

async function freshStack(kafkaBrokers: string, extraEnv: Record<string, string> = {}) {
  const testDb = await createTestDatabase(serviceUrl('postgres'), 'durability');
  databases.push(testDb);
  const db = createDatabase({ url: testDb.url, maxConnections: 2 });
  pools.push(db);
  const env = {
    DATABASE_URL: testDb.url,
    KAFKA_BROKERS: kafkaBrokers,
    SAMPLES_TOPIC: `samples-${randomBytes(4).toString('hex')}`,
    SAMPLES_TOPIC_PARTITIONS: '3',
    MONITOR_BOOTSTRAP_API_KEY: key,
    WRITER_BATCH_MAX_WAIT_MS: '20',
    ...extraEnv,
  };
  await runCommand(['migrate'], env);
  const start = async (role: string) => {
    const proc = await startRoleProcess(role, env);
    started.push(proc);
    return proc;
  };
  return { db, env, start };
}

afterAll(async () => {
  await Promise.all(started.map((proc) => proc.stop()));
  await Promise.all(pools.map((db) => db.close()));
  await Promise.all(databases.map((db) => db.drop()));
  await Promise.all(stacks.map((stack) => stack.stop()));
});

/**
 * Sends `requests` requests of `payloadsPerRequest` hosts each (one sample per host and
 * request) from 8 clients at once, calling `progress` with the share acknowledged after each
 * acknowledged request; the samples acknowledged (`host|time`) and the failed statuses.
 */
async function ingestStream(
  gatewayUrl: string,
  stream: { requests: number; payloadsPerRequest: number; hostPrefix: string },
  progress: (share: number) => Promise<void>,
): Promise<{ acknowledged: Set<string>; failures: number[] }> {
  const { requests, payloadsPerRequest, hostPrefix } = stream;
  const baseMs = Date.now() - 5 * 60_000;
  const acknowledged = new Set<string>();
  const failures: number[] = [];
  let next = 0;
  async function client(): Promise<void> {
    for (let i = next++; i < requests; i = next++) {
      const payloads = Array.from({ length: payloadsPerRequest }, (_, j) => ({
        host: `${hostPrefix}-${j}`,
        timestamp: new Date(baseMs + i).toISOString(),
        metrics: { cpu_percent: i },
      }));
      const result = await postIngest(gatewayUrl, payloads, { key });
      if (result.status !== 200) {
        failures.push(result.status);
        continue;
      }
      for (const payload of payloads) acknowledged.add(`${payload.host}|${payload.timestamp}`);
      await progress(acknowledged.size / (requests * payloadsPerRequest));
    }
  }
  await Promise.all(Array.from({ length: 8 }, client));
  return { acknowledged, failures };
}

/** Every sample `db` holds, as `host|time`, once each time it is stored. */
async function storedSamples(db: Database): Promise<string[]> {
  const rows = await db.sql<{ host: string; time: Date }[]>`
    select v.name as host, timestamptz 'epoch' + s.time_ms * interval '1 millisecond' as time
    from raw_samples(array(select id from series), 0, ${Date.UTC(9999, 0, 1)}) s
    join series r on r.id = s.series_id join services v on v.id = r.service_id`;
  return rows.map((row) => `${row.host}|${row.time.toISOString()}`);
}

/** Resolves once the databases hold at least `count` samples in all. */
async function samplesStored(dbs: readonly Database[], count: number): Promise<void> {
  await waitFor(
    async () => {
      let stored = 0;
      for (const db of dbs) {
        const [row] = await db.sql<{ n: string }[]>`select count(*) as n from samples`;
        stored += Number(row!.n);
      }
      return stored >= count ? true : undefined;
    },
    90_000,
    'every acknowledged sample to be stored',
  );
}

describe('ingest durability', () => {
  it('stores exactly the acknowledged samples when the writer is killed with SIGKILL mid-stream', async () => {
    const stack = await freshStack(serviceUrl('kafka'));
    const gateway = await stack.start('gateway');
    let writer = await stack.start('writer');

    let killed = false;
    const { acknowledged, failures } = await ingestStream(
      gateway.baseUrl,
      { requests: 400, payloadsPerRequest: 50, hostPrefix: 'crash' },
      async (share) => {
        if (killed || share < 1 / 3) return;
        killed = true;
        await writer.kill();
        await new Promise((resolve) => setTimeout(resolve, 500));
        writer = await stack.start('writer');
      },
    );

    expect(killed).toBe(true);
    expect(failures).toEqual([]);
    expect(acknowledged.size).toBe(400 * 50);
    await samplesStored([stack.db], acknowledged.size);
    const stored = await storedSamples(stack.db);
    expect(stored).toHaveLength(acknowledged.size);
    expect(new Set(stored)).toEqual(acknowledged);
    // Its writers leave the group `writer` on the shared Kafka: the next test's writers join a
    // group of that name for a topic of their own, and would get no partitions beside them.
    await Promise.all([gateway.stop(), writer.stop()]);
  });

  it('stores exactly the acknowledged samples on three sample shards through a SIGKILL and a rebalance', async () => {
    const stack = await createMonitorStack(
      'durability_shards',
      { MONITOR_BOOTSTRAP_API_KEY: key },
      { sampleShards: 3 },
    );
    stacks.push(stack);
    const gateway = await stack.start('gateway');
    let killedWriter = await stack.start('writer');
    const leavingWriter = await stack.start('writer');

    let step = 0;
    const { acknowledged, failures } = await ingestStream(
      gateway.baseUrl,
      { requests: 300, payloadsPerRequest: 50, hostPrefix: 'shard-crash' },
      async (share) => {
        if (step === 0 && share >= 1 / 3) {
          // One writer crashes (its partitions go to the other after its session) and a new
          // one starts.
          step = 1;
          await killedWriter.kill();
          killedWriter = await stack.start('writer');
        } else if (step === 1 && share >= 2 / 3) {
          // The other leaves: its partitions are handed over in a rebalance.
          step = 2;
          await leavingWriter.stop();
        }
      },
    );

    expect(step).toBe(2);
    expect(failures).toEqual([]);
    expect(acknowledged.size).toBe(300 * 50);
    await samplesStored(stack.sampleDbs, acknowledged.size);
    const perShard = await Promise.all(stack.sampleDbs.map(storedSamples));
    const stored = perShard.flat();
    expect(stored).toHaveLength(acknowledged.size);
    expect(new Set(stored)).toEqual(acknowledged);
    // Each host on one shard only, and every shard holding some.
    const shardsOf = new Map<string, Set<number>>();
    perShard.forEach((rows, shard) => {
      for (const row of rows) {
        const host = row.split('|')[0] as string;
        shardsOf.set(host, (shardsOf.get(host) ?? new Set()).add(shard));
      }
    });
    expect([...shardsOf.values()].every((shards) => shards.size === 1)).toBe(true);
    expect(perShard.every((rows) => rows.length > 0)).toBe(true);
  }, 240_000);

  describe('with Kafka stopped', () => {
    let kafka: RestartableKafka;

    beforeAll(async () => {
      kafka = await startRestartableKafka();
    });

    afterAll(async () => {
      await kafka?.destroy();
    });

    it('answers 503 (never 200) within the publish timeout, and resumes without a restart once Kafka is back', async () => {
      const stack = await freshStack(kafka.url, { INGEST_PUBLISH_TIMEOUT_MS: '2000' });
      const gateway = await stack.start('gateway');
      await stack.start('writer');
      const sample = (i: number) => ({
        host: 'outage',
        timestamp: new Date(Date.now() - 1000 + i).toISOString(),
        metrics: { cpu_percent: i },
      });
      expect((await postIngest(gateway.baseUrl, sample(0), { key })).status).toBe(200);

      await kafka.stop();
      for (let i = 1; i <= 3; i++) {
        // A hang would fail here: the request must be answered well within this bound.
        const result = await Promise.race([
          postIngest(gateway.baseUrl, sample(i), { key }),
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error('ingest hung while Kafka was down')), 15_000),
          ),
        ]);
        expect(result.status).toBe(503);
        expect(Number(result.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(result.body).toMatchObject({
          status: 503,
          type: expect.stringContaining('dependency-unavailable'),
        });
      }

      await kafka.start();
      const recovered = await waitFor(
        async () => {
          const result = await postIngest(gateway.baseUrl, sample(10), { key });
          return result.status === 200 ? result : undefined;
        },
        90_000,
        'ingest to succeed again',
      );
      expect(recovered.body).toMatchObject({ status: 'ok', events_accepted: 1 });
      await waitFor(
        async () => {
          const rows = await stack.db.sql<
            { value: number }[]
          >`select sample_value(mantissa, scale, value) as value from samples order by 1`;
          return rows.some((row) => row.value === 10) ? rows.map((row) => row.value) : undefined;
        },
        60_000,
        'the sample sent after recovery to be stored',
      );
    });
  });
});
