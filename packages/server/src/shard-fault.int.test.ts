// @services postgres kafka
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { partitionForKey } from '@monitor/bus';
import type { Database } from '@monitor/db';
import type { RestartablePostgres } from '@monitor/testkit';
import { startRestartablePostgres } from '@monitor/testkit';
import { waitFor } from '@monitor/testkit/builders';
import { serviceUrl } from '@monitor/testkit/vitest';
import { postIngest } from './testing/ingest-client.js';
import type { MonitorStack } from './testing/monitor-stack.js';
import { createMonitorStack } from './testing/monitor-stack.js';

/**
 * Issue 59, item 5 (the writer's part): one sample shard's server goes away. The partitions of
 * the other shards are stored meanwhile (the writer pauses only the failing ones), and the
 * shard's own are stored once it is back, every acknowledged sample once.
 */
const key = `mon_test_${randomBytes(16).toString('hex')}`;
let server: RestartablePostgres | undefined;
let stack: MonitorStack | undefined;

afterAll(async () => {
  // The stack drops its databases: the server must be up for that.
  await server?.start();
  await stack?.stop();
  await server?.destroy();
});

/** Samples stored of `host` in `db`. */
async function storedOf(db: Database, host: string): Promise<number> {
  const [row] = await db.sql<{ n: string }[]>`
    select count(*) as n from samples s
    join series r on r.id = s.series_id join services v on v.id = r.service_id
    where v.name = ${host}`;
  return Number(row?.n);
}

describe('a sample shard whose server goes away', () => {
  it("leaves the other shards' ingest going, and loses nothing of its own", async () => {
    server = await startRestartablePostgres();
    stack = await createMonitorStack(
      'shard_fault',
      { MONITOR_BOOTSTRAP_API_KEY: key },
      { sampleShards: 3, shardServerUrls: [serviceUrl('postgres'), server.url] },
    );
    const { sampleDbs } = stack;
    const gateway = await stack.start('gateway');
    const [owner] = await stack.db.sql<{ org_id: string }[]>`select org_id from api_keys`;
    const orgId = owner?.org_id ?? '';
    // Two hosts on each shard: the stack places partition p on shard p % 3.
    const hostsOf: string[][] = [[], [], []];
    for (let i = 0; hostsOf.some((hosts) => hosts.length < 2); i++) {
      const host = `fault-${i}`;
      const shard = partitionForKey(`${orgId}:${host}`, 6) % 3;
      if ((hostsOf[shard] as string[]).length < 2) (hostsOf[shard] as string[]).push(host);
    }
    const [onS0, onS1, onS2] = hostsOf as [string[], string[], string[]];
    const send = async (hosts: readonly string[], timeMs: number): Promise<void> => {
      const reply = await postIngest(
        gateway.baseUrl,
        hosts.map((host) => ({
          host,
          timestamp: new Date(timeMs).toISOString(),
          metrics: { cpu_percent: timeMs % 97 },
        })),
        { key },
      );
      expect(reply.status).toBe(200);
    };
    const stored = async (hosts: readonly string[], shard: number, samples: number) => {
      for (const host of hosts) {
        if ((await storedOf(sampleDbs[shard] as Database, host)) !== samples) return undefined;
      }
      return true;
    };

    await stack.start('writer');
    const t0 = Date.now() - 120_000;
    await send([...onS0, ...onS1, ...onS2], t0);
    for (const [shard, hosts] of hostsOf.entries()) {
      await waitFor(() => stored(hosts, shard, 1), 30_000, `the first samples on s${shard}`);
    }

    await server.stop();
    // Acknowledged through Kafka while s2 cannot store its part.
    await send([...onS0, ...onS1, ...onS2], t0 + 15_000);
    await waitFor(() => stored(onS0, 0, 2), 30_000, 's0 stores while s2 is away');
    await waitFor(() => stored(onS1, 1, 2), 30_000, 's1 stores while s2 is away');
    await send([...onS0, ...onS1], t0 + 30_000);
    await waitFor(() => stored(onS0, 0, 3), 30_000, 's0 goes on storing');
    await waitFor(() => stored(onS1, 1, 3), 30_000, 's1 goes on storing');

    await server.start();
    await waitFor(
      () => stored(onS2, 2, 2).catch(() => undefined),
      60_000,
      "s2's samples once it is back",
    );
    // Every acknowledged sample once, each on its host's shard only.
    for (const [shard, hosts] of hostsOf.entries()) {
      for (const host of hosts) {
        for (const [other, db] of sampleDbs.entries()) {
          expect(await storedOf(db, host), `${host} on s${other}`).toBe(
            other !== shard ? 0 : shard === 2 ? 2 : 3,
          );
        }
      }
    }
  }, 240_000);
});
