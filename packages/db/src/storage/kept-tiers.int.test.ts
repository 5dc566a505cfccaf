// @services postgres timescale
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import type { PositionedSample } from '@monitor/schemas';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { requireStorageSettings } from '../schema/storage-settings.js';
import { createSampleStore } from '../samples/sample-store.js';
import { readTierSeries } from '../series/read-tier-series.js';
import { migratedDatabase } from '../testing/clean-database.js';
import { keptTiers, maintainKeptTiers } from './kept-tiers.js';

const dayMs = 86_400_000;
const hourMs = 3_600_000;

describe.each(['postgres', 'timescale'] as const)('kept rollup tiers on %s', (engine) => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase(engine, 'kept_tiers'));
  });

  afterAll(async () => {
    await dispose?.();
  });

  // Each test fills from the raw retention's edge of its own clock.
  beforeEach(async () => {
    await db.sql`delete from tier_fills`;
    await db.sql`truncate sample_tier_5m, sample_tier_1h`;
  });

  /**
   * Three hours of one host as a node exporter sends them, 15 s apart with jitter: a decimal
   * gauge, a counter that resets, noise no decimal scale holds, and a series that ends in a
   * staleness marker. Returns the stored ids by metric.
   */
  async function writeHost(t0: number): Promise<Map<string, string>> {
    const orgId = uniqueOrgId();
    const samples: PositionedSample[] = [];
    let counter = 0;
    for (let k = 0; k < 720; k++) {
      const timeMs = t0 + k * 15_000 + (k % 20 === 0 ? 0 : ((k * 7919) % 300) - 150);
      counter = k % 250 === 249 ? 3 : counter + (k % 7);
      const sample = buildHostSample({ orgId, host: 'h', timeMs });
      sample.metrics = {
        load: Math.round(Math.sin(k / 30) * 1000) / 100,
        requests_total: counter,
        noise: Math.sin(k) * Math.PI,
        ...(k < 400 && { queue: k % 13 }),
      };
      if (k === 400) sample.staleMetrics = ['queue'];
      samples.push(sample);
    }
    await createSampleStore(db).writeBatch({ samples });
    const rows = await db.sql<{ id: string; metric: string }[]>`
      select r.id::text as id, r.metric from series r join services v on v.id = r.service_id
      where v.org_id = ${orgId}`;
    return new Map(rows.map((r) => [r.metric, r.id]));
  }

  async function readAll(ids: Map<string, string>, widthMs: number, t0: number) {
    const selected = [...ids.entries()]
      .sort()
      .map(([metric, id]) => ({ labels: [{ name: '__name__', value: metric }], ids: [id] }));
    return await readTierSeries(
      db.sql,
      selected,
      { startMs: t0 - hourMs, endMs: t0 + 4 * hourMs },
      widthMs,
      null,
      new AbortController().signal,
    );
  }

  it('reads the same tiers once stored, after the raw samples are gone and compressed', async () => {
    // Just before a 5-minute chunk's end, so the fill completes one and compresses it.
    const t0 = Math.floor(Date.now() / (7 * dayMs)) * 7 * dayMs - 2 * hourMs;
    // Ids 998 to 1001: their order as text differs from their order as numbers.
    await db.sql`select setval(pg_get_serial_sequence('series', 'id'), 997)`;
    const ids = await writeHost(t0);
    const { policies } = await requireStorageSettings(db);
    const before = await Promise.all(keptTiers.map((t) => readAll(ids, t.widthMs, t0)));
    // load, noise, queue (its last bucket ends in a marker), requests_total.
    expect(before[0]!.map((s) => s.timestampsMs.length)).toEqual([37, 37, 22, 37]);

    // The raw retention's edge an hour before t0 (where a first fill starts): buckets up to
    // 6 hours later are stored, t0 + 5 h.
    const now = new Date(t0 + policies.rawRetentionDays * dayMs - hourMs);
    // Runs with no time to spend store a batch per tier each and resume where they stopped.
    const rows = [0, 0];
    let compressed = 0;
    let runs = 0;
    let filledToMs: number[];
    do {
      const upkeep = await maintainKeptTiers(db, {
        now,
        policies,
        mode: engine,
        maxWindows: 48,
        budgetMs: 0,
      });
      upkeep.filled.forEach((tier, i) => (rows[i]! += tier.rows));
      compressed += upkeep.compressed;
      filledToMs = upkeep.filled.map((tier) => tier.filledToMs);
      runs++;
    } while (filledToMs.some((ms) => ms < t0 + 5 * hourMs) && runs < 100);
    expect(runs).toBeGreaterThan(2);
    expect(filledToMs).toEqual([t0 + 5 * hourMs, t0 + 5 * hourMs]);
    // Buckets of 5 minutes ending t0 … t0 + 3 h (queue's up to t0 + 100 min), of an hour t0 …
    // t0 + 3 h (queue's up to t0 + 2 h).
    expect(rows).toEqual([37 * 3 + 21, 4 * 3 + 3]);
    if (engine === 'timescale') expect(compressed).toBeGreaterThanOrEqual(1);

    // A second run has nothing more to store.
    const again = await maintainKeptTiers(db, { now, policies, mode: engine, maxWindows: 48 });
    expect(again.filled.map((f) => f.rows)).toEqual([0, 0]);

    await db.sql`delete from samples where series_id = any(${[...ids.values()]}::bigint[])`;
    await db.sql`delete from stale_markers where series_id = any(${[...ids.values()]}::bigint[])`;
    const after = await Promise.all(keptTiers.map((t) => readAll(ids, t.widthMs, t0)));
    expect(after).toEqual(before);
  });

  // TimescaleDB only: plain PostgreSQL compresses nothing (and it exists for it alone).
  const onTimescale = (engine === 'timescale' ? it : () => undefined) as typeof it;

  onTimescale(
    'compresses the chunk being filled a day at a time, and it keeps taking rows',
    async () => {
      // A 5-minute chunk that started 14 days ago: three days of it are filled, a day apart.
      const chunkStart = Math.floor(Date.now() / (7 * dayMs)) * 7 * dayMs - 14 * dayMs;
      const { policies } = await requireStorageSettings(db);
      const chunkState = async () => {
        const [row] = await db.sql<{ compressed: boolean; uncompressed: number; all: number }[]>`
        select c.is_compressed as compressed,
          (xpath('/row/n/text()', query_to_xml(format(
            'select count(*) as n from only %I.%I', c.chunk_schema, c.chunk_name),
            false, true, '')))[1]::text::int as uncompressed,
          (select count(*)::int from sample_tier_5m
            where bucket_ms > ${chunkStart} and bucket_ms <= ${chunkStart + 7 * dayMs}) as all
        from timescaledb_information.chunks c
        where c.hypertable_name = 'sample_tier_5m' and c.range_start_integer = ${chunkStart}`;
        return row!;
      };
      let before: Awaited<ReturnType<typeof readAll>>[] = [];
      for (let day = 0; day < 3; day++) {
        const t = chunkStart + day * dayMs + hourMs;
        const ids = await writeHost(t);
        before = [await readAll(ids, 300_000, t)];
        // The edge an hour before the host's first sample: stored up to 5 hours after it.
        const now = new Date(t + policies.rawRetentionDays * dayMs - hourMs);
        await maintainKeptTiers(db, { now, policies, mode: engine, maxWindows: 1000 });
        await db.sql`delete from samples where series_id = any(${[...ids.values()]}::bigint[])`;
        expect([await readAll(ids, 300_000, t)]).toEqual(before);
        const state = await chunkState();
        // Compressed from the first whole day on; what came since, at most a day, apart.
        expect(state.compressed).toBe(day > 0);
        expect(state.uncompressed).toBeLessThanOrEqual(day === 0 ? state.all : 132);
      }
      expect((await chunkState()).all).toBe(3 * 132);
    },
  );

  it('drops what is past each tier’s retention', async () => {
    const t0 = Math.floor(Date.now() / hourMs) * hourMs - 5 * hourMs;
    const ids = await writeHost(t0);
    const { policies } = await requireStorageSettings(db);
    const fillNow = new Date(t0 + policies.rawRetentionDays * dayMs - hourMs);
    await maintainKeptTiers(db, { now: fillNow, policies, mode: engine, maxWindows: 48 });
    const count = async (table: string) => {
      const [row] = await db.sql<{ n: number }[]>`
        select count(*)::int as n from ${db.sql(table)}
        where series_id = any(${[...ids.values()]}::bigint[])`;
      return row!.n;
    };
    expect(await count('sample_tier_5m')).toBeGreaterThan(0);
    // Past the 5-minute tier's retention, within the hourly one's.
    const later = new Date(t0 + (policies.rollup1mRetentionDays + 30) * dayMs);
    await maintainKeptTiers(db, { now: later, policies, mode: engine, maxWindows: 1 });
    expect(await count('sample_tier_5m')).toBe(0);
    expect(await count('sample_tier_1h')).toBeGreaterThan(0);
  });
});
