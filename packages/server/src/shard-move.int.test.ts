// @services postgres kafka
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { partitionForKey } from '@monitor/bus';
import type { Database } from '@monitor/db';
import { waitFor } from '@monitor/testkit/builders';
import { postIngest } from './testing/ingest-client.js';
import type { MonitorStack } from './testing/monitor-stack.js';
import { createMonitorStack } from './testing/monitor-stack.js';
import { runCommand } from './testing/role-process.js';

/**
 * Issue 59, item 4: adding a shard while ingest runs. Partitions 2 (of s0, the control database)
 * and 5 (of s1) move to the new shard s2 with their samples while a client keeps sending to
 * every partition; afterwards every acknowledged sample is stored once, on its partition's
 * shard, and nothing of the moved partitions is left where they were.
 */
const key = `mon_test_${randomBytes(16).toString('hex')}`;
const partitions = 6;
let stack: MonitorStack | undefined;

afterAll(async () => {
  await stack?.stop();
});

type Stored = { samples: number; distinct: number };

/** `host`'s samples in `db`, and how many distinct times they have. */
async function storedOf(db: Database, host: string): Promise<Stored> {
  const [row] = await db.sql<{ n: string; d: string }[]>`
    select count(*) as n, count(distinct s.time) as d from samples s
    join series r on r.id = s.series_id join services v on v.id = r.service_id
    where v.name = ${host} and r.metric = 'cpu_percent'`;
  return { samples: Number(row?.n), distinct: Number(row?.d) };
}

/** `host`'s service in `db`: absent, a control copy, or the shard's own. */
async function serviceOf(db: Database, host: string): Promise<'absent' | 'copy' | 'own'> {
  const [row] = await db.sql<{ shard_copy: boolean }[]>`
    select shard_copy from services where name = ${host}`;
  return row === undefined ? 'absent' : row.shard_copy ? 'copy' : 'own';
}

const storedAtLeast = async (db: Database, host: string, samples: number) =>
  (await storedOf(db, host)).samples >= samples ? true : undefined;

describe('adding a shard while ingest runs', () => {
  it('moves partitions with their samples, losing and doubling none', async () => {
    stack = await createMonitorStack(
      'shard_move',
      { MONITOR_BOOTSTRAP_API_KEY: key },
      { sampleShards: 3, emptyShards: 1 },
    );
    const { sampleDbs, env } = stack;
    const gateway = await stack.start('gateway');
    await stack.start('writer');
    await stack.start('evaluator');
    const [owner] = await stack.db.sql<{ org_id: string }[]>`select org_id from api_keys`;
    const orgId = owner?.org_id ?? '';
    // Three hosts of each partition: s0 holds 0, 2, 4 and s1 1, 3, 5 to begin with.
    const hostsOf = new Map<number, string[]>();
    for (let i = 0; [...hostsOf.values()].flat().length < 3 * partitions; i++) {
      const host = `move-${i}`;
      const partition = partitionForKey(`${orgId}:${host}`, partitions);
      const hosts = hostsOf.get(partition) ?? [];
      if (hosts.length < 3) hostsOf.set(partition, [...hosts, host]);
    }
    const hosts = [...hostsOf.values()].flat();

    // The client: one sample of every host every round, a round every 50 ms, each with its
    // own time; a round counts once the gateway acknowledged it.
    // Older than the hour a move copies again at its marker: the samples stored between its
    // copy of the history and the marker come back as late writes.
    const t0 = Date.now() - 12 * 3_600_000;
    let acknowledged = 0;
    let sending = true;
    const client = (async () => {
      while (sending) {
        const timeMs = t0 + acknowledged * 1_000 + Math.floor(Math.random() * 500);
        const reply = await postIngest(
          gateway.baseUrl,
          hosts.map((host) => ({
            host,
            timestamp: new Date(timeMs).toISOString(),
            metrics: { cpu_percent: (acknowledged * 7) % 100 },
          })),
          { key },
        );
        expect(reply.status).toBe(200);
        acknowledged++;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    try {
      await waitFor(
        () =>
          storedAtLeast(sampleDbs[1] as Database, (hostsOf.get(5) as string[])[0] as string, 20),
        60_000,
        'ingest under way',
      );

      const printed = await runCommand(['shards', 'add', 's2', '--partitions', '2,5'], env);
      expect(JSON.parse(printed)).toMatchObject({
        shards: [
          // s0, the first shard, holds the partitions the map names nowhere (0 and 4).
          { name: 's0', partitions: [] },
          { name: 's1', partitions: [1, 3] },
          { name: 's2', partitions: [2, 5] },
        ],
      });
      const duringMove = acknowledged;
      // Ingest goes on after the move, to the new shard.
      await waitFor(
        () => Promise.resolve(acknowledged >= duringMove + 20 ? true : undefined),
        60_000,
        'ingest after the move',
      );
    } finally {
      sending = false;
      await client;
    }

    const shardOf = (partition: number): number =>
      partition === 2 || partition === 5 ? 2 : partition % 2;
    for (const [partition, partitionHosts] of hostsOf) {
      const shard = shardOf(partition);
      for (const host of partitionHosts) {
        await waitFor(
          () => storedAtLeast(sampleDbs[shard] as Database, host, acknowledged),
          60_000,
          `${host} (partition ${partition}) on s${shard}`,
        );
        for (const [other, db] of sampleDbs.entries()) {
          const expected = other === shard ? acknowledged : 0;
          expect(await storedOf(db, host), `${host} on s${other}`).toEqual({
            samples: expected,
            distinct: expected,
          });
        }
      }
    }
    // The moved hosts' services: s2's own; s1 keeps none, s0 (the control database) a copy.
    for (const host of [...(hostsOf.get(2) as string[]), ...(hostsOf.get(5) as string[])]) {
      expect(await serviceOf(sampleDbs[2] as Database, host)).toBe('own');
      expect(await serviceOf(sampleDbs[1] as Database, host)).toBe('absent');
      const onControl = await serviceOf(sampleDbs[0] as Database, host);
      expect(onControl).toBe(hostsOf.get(2)?.includes(host) === true ? 'copy' : 'absent');
    }
    const moves = await stack.db.sql<{ partition: number; state: string }[]>`
      select partition, state from sample_partition_moves order by partition`;
    expect(moves).toEqual([
      { partition: 2, state: 'done' },
      { partition: 5, state: 'done' },
    ]);
  }, 300_000);
});
