// @services postgres timescale
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { Database } from '../core/database.js';
import { createDatabase } from '../core/database.js';
import type { HostSample } from '../samples/sample-batch.js';
import { PartitionMovedError } from '../samples/sample-offsets.js';
import { createSampleStore } from '../samples/sample-store.js';
import { migratedDatabase } from '../testing/clean-database.js';
import {
  copyShardServices,
  dropShardServices,
  fenceMovedPartition,
  listShardServices,
  showMovedServices,
} from './partition-copy.js';

/**
 * Issue 59, item 4: the rows of a moving partition's services go from one shard to another
 * whole (every table of a series' data, snapshots, tiers up to the target's fill), under the
 * target's series ids, out of compressed chunks into compressed chunks.
 */
const topic = 'samples-copy';
const owner = { groupId: 'writer', topic };
const orgId = uniqueOrgId();
const minuteMs = 60_000;
const t0 = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 48 * 3_600_000;

function sample(host: string, timeMs: number, offset: number, partition = 3): HostSample {
  return buildHostSample({
    orgId,
    host,
    timeMs,
    metrics: { cpu_usage: offset, memory_usage: 100 - offset },
    tags: { env: 'prod' },
    containers: [{ id: 'c1', name: 'api', status: 'running' }],
    position: { partition, offset },
  });
}

/** Everything stored of `hosts` in `db`, each row named by its series' host, metric and labels. */
async function stored(
  db: Database,
  hosts: readonly string[],
): Promise<Record<string, readonly unknown[]>> {
  const tables = [
    'samples',
    'stale_markers',
    'unaggregated_samples',
    'histogram_samples',
    'histogram_chunks',
    'exemplars',
    'sample_tier_5m',
    'sample_tier_1h',
  ];
  const dump: Record<string, readonly unknown[]> = {};
  for (const table of tables) {
    dump[table] = await db.sql.unsafe(
      `select v.name, r.metric, r.labels::text as labels, (to_jsonb(x) - 'series_id')::text as row
       from ${table} x join series r on r.id = x.series_id join services v on v.id = r.service_id
       where v.name = any($1::text[]) order by 1, 2, 3, 4`,
      [[...hosts]],
    );
  }
  dump.snapshots = await db.sql`
    select v.name, (to_jsonb(x) - 'service_id')::text as row
    from snapshots x join services v on v.id = x.service_id
    where v.name = any(${[...hosts]}) order by 1, 2`;
  dump.services = await db.sql`
    select id, name, tags, metrics from services where name = any(${[...hosts]}) order by name`;
  return dump;
}

async function compressSamples(db: Database): Promise<void> {
  await db.sql`select compress_chunk(c, if_not_compressed => true) from show_chunks('samples') c`;
}

/** Rows no writer stores through `writeBatch` here: one of each per series of `host`. */
async function storeOtherRows(db: Database, host: string, buckets: readonly number[]) {
  const series = await db.sql<{ id: string }[]>`
    select r.id::text as id from series r join services v on v.id = r.service_id
    where v.name = ${host}`;
  for (const { id } of series) {
    const at = new Date(t0 + 30 * minuteMs);
    await db.sql`insert into stale_markers (series_id, time) values (${id}::bigint, ${at})`;
    await db.sql`
      insert into unaggregated_samples (series_id, time, value) values (${id}::bigint, ${at}, 1.5)`;
    await db.sql`
      insert into histogram_samples (series_id, time, histogram)
      values (${id}::bigint, ${at}, ${Buffer.from([1, 2, 3])})`;
    await db.sql`
      insert into histogram_chunks (series_id, time, end_time, samples, chunk)
      values (${id}::bigint, ${at}, ${new Date(at.getTime() + minuteMs)}, 2, ${Buffer.from([4, 5])})`;
    await db.sql`
      insert into exemplars (series_id, time, value, labels)
      values (${id}::bigint, ${at}, 0.25, ${db.sql.json({ trace_id: `${host}-${id}` })})`;
    for (const bucket of buckets) {
      for (const table of ['sample_tier_5m', 'sample_tier_1h']) {
        await db.sql.unsafe(
          `insert into ${table} (series_id, bucket_ms, count, scale, sum, min, max, last, last_ms)
           values ($1::bigint, $2::bigint, 3, 0, 30, 5, 15, 10, $2::bigint)`,
          [id, bucket],
        );
      }
    }
  }
}

describe.each(['postgres', 'timescale'] as const)(
  'copying a partition between shards (%s)',
  (server) => {
    let source: Database;
    let target: Database;
    const disposers: (() => Promise<void>)[] = [];

    beforeAll(async () => {
      for (const [name, assign] of [
        ['copy_source', (db: Database) => (source = db)],
        ['copy_target', (db: Database) => (target = db)],
      ] as const) {
        const { db, dispose } = await migratedDatabase(server, name);
        disposers.push(dispose);
        assign(db);
      }
      // The target holds a host of its own first: its series ids are those the source's have.
      await createSampleStore(target).writeBatch(
        { samples: [sample('resident', t0, 0, 1), sample('resident', t0 + minuteMs, 1, 1)] },
        owner,
      );
      const store = createSampleStore(source);
      for (let i = 0; i < 5; i++) {
        await store.writeBatch(
          {
            samples: ['moving-a', 'moving-b', 'staying'].map((host) =>
              sample(host, t0 + i * minuteMs, i, host === 'staying' ? 0 : 3),
            ),
          },
          owner,
        );
      }
      const early = t0 - 3_600_000;
      const late = t0 + 3_600_000;
      for (const host of ['moving-a', 'moving-b', 'staying']) {
        await storeOtherRows(source, host, [early, late]);
      }
      // The source's tiers are stored up to `late`, the target's up to `early` only.
      for (const tier of ['5m', '1h']) {
        await source.sql`
      insert into tier_fills (tier, filled_from_ms, filled_to_ms)
      values (${tier}, ${early - 86_400_000}, ${late})`;
        await target.sql`
      insert into tier_fills (tier, filled_from_ms, filled_to_ms)
      values (${tier}, ${early - 3_600_000}, ${early})`;
      }
      if (server === 'timescale') {
        await compressSamples(source);
        await compressSamples(target);
      }
    }, 120_000);

    afterAll(async () => {
      for (const dispose of disposers) await dispose();
    });

    it('copies the history, then what came since, hidden until shown, up to the target tier fill', async () => {
      const listMoving = async () =>
        (await listShardServices(source))
          .filter((service) => service.name.startsWith('moving-'))
          .map((service) => service.id);
      const moving = await listMoving();
      expect(moving).toHaveLength(2);
      const history = await copyShardServices(source, target, moving, {
        phase: 'history',
        recentMs: 3_600_000,
      });
      expect(history).toMatchObject({ services: 2, series: 4 });
      // 4 series: 5 samples each, one exemplar, one 5-minute bucket of the two (the early one).
      expect(history.rows).toMatchObject({ samples: 20, exemplars: 4, sample_tier_5m: 4 });
      // Hidden until shown: neither listed as the shard's nor answered.
      expect((await listShardServices(target)).map((service) => service.name)).toEqual([
        'resident',
      ]);

      // Meanwhile the partition is still stored on the source: a recent sample, a late one (in
      // an hour the history copied), a new host, an exemplar with a time of its own.
      const store = createSampleStore(source);
      await store.writeBatch({ samples: [sample('moving-a', Date.now() - minuteMs, 5)] }, owner);
      await store.writeBatch(
        { samples: [sample('moving-b', t0 + 20 * minuteMs, 6), sample('moving-c', t0, 7)] },
        owner,
      );
      await source.sql`
      insert into exemplars (series_id, time, value, labels)
      select r.id, ${new Date(t0 - 86_400_000)}, 0.5, '{"trace_id": "old"}'
      from series r join services v on v.id = r.service_id where v.name = 'moving-a'`;
      const [late] = await source.sql`select 1 from late_sample_writes where hour_ms = ${t0}`;
      expect(late).toBeDefined();

      const everyMoving = await listMoving();
      expect(everyMoving).toHaveLength(3);
      const offsets = { ...owner, partition: 3, nextOffset: 42 };
      const caughtUp = await copyShardServices(source, target, everyMoving, {
        phase: 'catch-up',
        since: history.cut,
        offsets,
      });
      // The recent sample's 2 metrics, and every sample of the late hour again (the history's 20,
      // moving-b's late one and moving-c's: 2 metrics each).
      expect(caughtUp.rows).toMatchObject({ samples: 2 + 20 + 2 + 2 });
      expect(caughtUp.rows.sample_tier_5m).toBeUndefined();
      await showMovedServices(target, everyMoving);

      const hosts = ['moving-a', 'moving-b', 'moving-c'];
      const before = await stored(source, hosts);
      const after = await stored(target, hosts);
      // Tier rows only up to where the target stored its tiers (it stores the later ones itself).
      const early = String(t0 - 3_600_000);
      const tiersUpTo = (rows: readonly unknown[]) =>
        rows.filter((row) => (row as { row: string }).row.includes(`"bucket_ms": ${early}`));
      expect(after).toEqual({
        ...before,
        sample_tier_5m: tiersUpTo(before.sample_tier_5m ?? []),
        sample_tier_1h: tiersUpTo(before.sample_tier_1h ?? []),
      });
      expect(after.samples).toHaveLength(2 * 5 * 2 + 2 + 2 + 2);
      expect(after.sample_tier_5m).toHaveLength(4);
      const [stored42] = await target.sql<{ next_offset: string }[]>`
      select next_offset from consumer_offsets
      where group_id = ${owner.groupId} and topic = ${topic} and partition = 3`;
      expect(stored42?.next_offset).toBe('42');
      const [fill] = await target.sql<{ from_ms: string }[]>`
      select filled_from_ms::text as from_ms from tier_fills where tier = '5m'`;
      expect(Number(fill?.from_ms)).toBe(t0 - 3_600_000 - 86_400_000);

      // Taken up again (a move that stopped half way): the same rows, not twice.
      const again = await copyShardServices(source, target, everyMoving, {
        phase: 'history',
        recentMs: 3_600_000,
      });
      await copyShardServices(source, target, everyMoving, {
        phase: 'catch-up',
        since: again.cut,
        offsets,
      });
      await showMovedServices(target, everyMoving);
      expect(await stored(target, hosts)).toEqual(after);
    }, 60_000);

    it('fences the old shard against a writer with an old map, then drops what moved', async () => {
      const moving = (await listShardServices(source))
        .filter((service) => service.name.startsWith('moving-'))
        .map((service) => service.id);
      await fenceMovedPartition(source, moving, { ...owner, partition: 3 }, 's2');
      expect((await listShardServices(source)).map((service) => service.name)).toEqual(['staying']);
      const late = createSampleStore(source).writeBatch(
        { samples: [sample('moving-a', t0 + 10 * minuteMs, 9), sample('newcomer', t0, 10)] },
        owner,
      );
      await expect(late).rejects.toBeInstanceOf(PartitionMovedError);
      // Not even the projection's new service of the partition.
      const [newcomer] = await source.sql`select id from services where name = 'newcomer'`;
      expect(newcomer).toBeUndefined();

      const staying = await stored(source, ['staying']);
      // A server that stops a statement after decompressing a single row (100,000 by default, a
      // partition holds millions): the drop lifts the limit for itself.
      const [current] = await source.sql<{ name: string }[]>`select current_database() as name`;
      const name = current?.name ?? '';
      await source.sql`
      alter database ${source.sql(name)}
      set timescaledb.max_tuples_decompressed_per_dml_transaction = 1`;
      const url = new URL(serviceUrl(server));
      url.pathname = `/${name}`;
      const limited = createDatabase({ url: url.toString(), maxConnections: 1 });
      try {
        await dropShardServices(limited, moving, { keepServices: false });
      } finally {
        await limited.close();
      }
      const gone = await stored(source, ['moving-a', 'moving-b']);
      expect(Object.values(gone).every((rows) => rows.length === 0)).toBe(true);
      const [series] = await source.sql<{ n: number }[]>`
      select count(*)::int as n from series where service_id = any(${moving})`;
      expect(series?.n).toBe(0);
      expect(await stored(source, ['staying'])).toEqual(staying);
    }, 60_000);

    it('refuses a source whose tiers are behind the target', async () => {
      const staying = (await listShardServices(source)).map((service) => service.id);
      await target.sql`update tier_fills set filled_to_ms = filled_to_ms + 86400000000`;
      await expect(
        copyShardServices(source, target, staying, { phase: 'history', recentMs: 3_600_000 }),
      ).rejects.toThrow(/tier is stored up to/);
      expect(await stored(target, ['staying'])).toMatchObject({ samples: [], services: [] });
    }, 60_000);
  },
);
