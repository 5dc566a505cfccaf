// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHostSample } from '@monitor/testkit/builders';
import type { Database } from '../core/database.js';
import { refreshRollups, runMaintenance } from '../maintenance/run-maintenance.js';
import type { HostSample } from '../samples/sample-batch.js';
import { createSampleStore } from '../samples/sample-store.js';
import { encodeScale, unscaled } from '../storage/scaled-value.js';
import { storageEngine } from '../storage/engine.js';
import type { StoragePolicies } from '../storage/storage-mode.js';
import { cleanDatabase } from '../testing/clean-database.js';
import { hasSampleKey } from '../testing/sample-key.js';
import { sampleTimeColumn } from '../testing/sample-time.js';
import { migrate, migrateWith } from './migrate.js';
import { migrations } from './migrations.js';
import { requireStorageSettings } from './storage-settings.js';

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;
const dayMs = 24 * hourMs;
const orgId = 'org_move';
const host = 'move-1';
const metrics = ['cpu', 'load', 'noise'] as const;

/** Short retentions, so that a few days of samples hold rollups older than the raw samples. */
const policies = {
  rawRetentionDays: 2,
  snapshotRetentionDays: 2,
  rollup1mRetentionDays: 4,
  rollup1hRetentionDays: 8,
  compressAfterHours: 1,
} satisfies Partial<StoragePolicies>;

/** A value per metric and point: one decimal, two, and doubles no scale holds (−0, 1/3, …). */
function valuesAt(p: number): Record<(typeof metrics)[number], number> {
  const odd = [0.1 + 0.2, -0, 5e-324, 1e98, -1e98, 1 / 3, 2 ** 60, 123456.78901234567];
  return {
    cpu: Math.round(500 + 400 * Math.sin(p / 17)) / 10,
    load: Math.round(100 + 90 * Math.cos(p / 29)) / (p % 3 === 0 ? 10 : 100),
    noise: odd[p % odd.length]! * (1 + p / 7),
  };
}

type Row = { metric: string; timeMs: number; value: number };

function rowsOf(startMs: number, stepMs: number, points: number, firstPoint = 0): Row[] {
  return Array.from({ length: points }, (_, i) =>
    Object.entries(valuesAt(firstPoint + i)).map(([metric, value]) => ({
      metric,
      timeMs: startMs + i * stepMs,
      value,
    })),
  ).flat();
}

function hostSamples(rows: readonly Row[]): HostSample[] {
  const byTime = new Map<number, Record<string, number>>();
  for (const row of rows)
    byTime.set(row.timeMs, { ...byTime.get(row.timeMs), [row.metric]: row.value });
  return [...byTime].map(([timeMs, metrics]) => buildHostSample({ orgId, host, timeMs, metrics }));
}

/** Writes rows as the float8 layout (migration 23) stores them: `value` only. */
async function writeFloat8(db: Database, rows: readonly Row[]) {
  await db.sql`
    insert into services (id, org_id, name, last_seen)
    values ('svc_move', ${orgId}, ${host}, now()) on conflict do nothing`;
  await db.sql`
    insert into series (service_id, metric)
    select 'svc_move', m from unnest(${[...metrics]}::text[]) m
    on conflict do nothing`;
  const sorted = [...rows].sort((a, b) => a.metric.localeCompare(b.metric) || a.timeMs - b.timeMs);
  await db.sql`
    insert into samples (time, series_id, value)
    select timestamptz 'epoch' + t * interval '1 millisecond', r.id, v
    from unnest(${sorted.map((r) => r.timeMs)}::float8[], ${sorted.map((r) => r.metric)}::text[],
      ${sorted.map((r) => (Object.is(r.value, -0) ? '-0' : String(r.value)))}::text[]::float8[])
      as u(t, m, v)
    join series r on r.service_id = 'svc_move' and r.metric = u.m
  `;
}

type Point = { metric: string; ms: number; value: number | string };

/** −0 as text, so that it differs from +0 in comparisons. */
const signed = (rows: Point[]): Point[] =>
  rows.map((row) => ({ ...row, value: Object.is(row.value, -0) ? '-0' : row.value }));

/** Every stored point in (metric, time) order, as the float8 layout (before 24) holds it. */
async function float8Points(db: Database): Promise<Point[]> {
  return signed(
    await db.sql<Point[]>`
      select r.metric, (extract(epoch from s.time) * 1000)::float8 as ms, s.value
      from samples s join series r on r.id = s.series_id
      order by r.metric, s.time`,
  );
}

/**
 * Every stored point in (metric, time) order, as readers read it (`raw_samples`); checked equal
 * to what `raw_scaled_samples` hands over (its codes decoded here in SQL), in every layout.
 */
async function points(db: Database): Promise<Point[]> {
  const untilMs = Date.UTC(9999, 0, 1);
  const read = signed(
    await db.sql<Point[]>`
      select r.metric, s.time_ms::float8 as ms, s.value
      from raw_samples(array(select id from series), 0, ${untilMs}) s
      join series r on r.id = s.series_id
      order by r.metric, s.time_ms`,
  );
  const scaled = signed(
    await db.sql<Point[]>`
      select r.metric, s.time_ms::float8 as ms,
        coalesce(s.value, sample_value((s.scaled - (s.scaled & 127)) / 128,
          ((s.scaled & 127) - 64)::smallint, null)) as value
      from raw_scaled_samples(array(select id from series), 0, ${untilMs}) s
      join series r on r.id = s.series_id
      order by r.metric, s.time_ms`,
  );
  expect(scaled).toEqual(read);
  return read;
}

function expectedPoints(rows: readonly Row[]): Point[] {
  return [...rows]
    .sort((a, b) => a.metric.localeCompare(b.metric) || a.timeMs - b.timeMs)
    .map(({ metric, timeMs, value }) => ({
      metric,
      ms: timeMs,
      value: Object.is(value, -0) ? '-0' : value,
    }));
}

type Bucket = {
  metric: string;
  /** The bucket's start, epoch milliseconds. */
  bucket: number;
  avg: number;
  min: number;
  max: number;
  count: string;
  sum: number;
};

/** An aggregate of the float8 layout (before migration 24), as it answers. */
async function float8Buckets(db: Database, view: 'samples_1m' | 'samples_1h') {
  return await db.sql<Bucket[]>`
    select r.metric, (extract(epoch from o.bucket) * 1000)::float8 as bucket, o.avg, o.min,
      o.max, o.count, o.sum
    from ${db.sql(view)} o join series r on r.id = o.series_id
    order by r.metric, o.bucket`;
}

/** What readers read (service-queries' readRollup): the read function, before `beforeMs`. */
async function buckets(
  db: Database,
  rollup: 'samples_1m' | 'samples_1h',
  beforeMs = Date.UTC(9999, 0, 1),
) {
  return await db.sql<Bucket[]>`
    select r.metric, o.bucket_ms::float8 as bucket, o.avg, o.min, o.max, o.count, o.sum
    from ${db.sql.unsafe(`${rollup}_buckets`)}(array(select id from series), 0, ${beforeMs}) o
    join series r on r.id = o.series_id
    order by r.metric, o.bucket_ms`;
}

/**
 * Equal buckets: counts, minima and maxima exactly; sums and averages up to the order their
 * samples were added in (an hour summed from its samples or from its minutes), within the
 * error bound of a float sum.
 */
function expectSameBuckets(actual: readonly Bucket[], expected: readonly Bucket[]) {
  const exact = (rows: readonly Bucket[]) =>
    rows.map(({ metric, bucket, count, min, max }) => ({ metric, bucket, count, min, max }));
  expect(exact(actual)).toEqual(exact(expected));
  actual.forEach((row, i) => {
    const want = expected[i]!;
    const count = Number(want.count);
    const bound = count * Math.max(Math.abs(want.min), Math.abs(want.max)) * 2 ** -50;
    expect(Math.abs(row.sum - want.sum)).toBeLessThanOrEqual(bound);
    expect(Math.abs(row.avg - want.avg)).toBeLessThanOrEqual(bound / count);
  });
}

async function pauseJobs(db: Database, engine: 'postgres' | 'timescale') {
  if (engine !== 'timescale') return;
  await db.sql`
    select alter_job(job_id, scheduled => false) from timescaledb_information.jobs
    where hypertable_schema = current_schema()`;
}

type Before = { points: Point[]; minutes: Bucket[]; hours: Bucket[]; rows: Row[] };

/**
 * A database of the float8 layout (before migration 24) holding 3.5 days of samples every
 * 5 minutes. TimescaleDB: both aggregates materialized, then the raw chunks past the raw
 * retention dropped (their rollups now exist nowhere else) and the others compressed, as the
 * jobs leave them.
 */
async function float8Database(engine: 'postgres' | 'timescale', now: Date, baseMs: number) {
  const database = await cleanDatabase(engine, `scaled_move_${engine}`);
  const { db } = database;
  await migrateWith(
    db,
    migrations.filter((migration) => migration.version < 24),
    { now, ...policies },
  );
  await pauseJobs(db, engine);
  const startMs = baseMs - 3.5 * dayMs;
  const rows = rowsOf(startMs, 5 * minuteMs, (3.5 * dayMs - 2 * hourMs) / (5 * minuteMs));
  await writeFloat8(db, rows);
  const olderVersions = migrations.filter((migration) => migration.version < 24);
  // Plain PostgreSQL: the raw retention applied as maintenance applies it (no rollup there
  // outlives the raw samples: its rollups are views over them until refreshed).
  if (engine === 'postgres') await migrateWith(db, olderVersions, { now, ...policies });
  if (engine === 'timescale') {
    await db.sql`call refresh_continuous_aggregate('samples_1m', null, ${new Date(baseMs)})`;
    await db.sql`call refresh_continuous_aggregate('samples_1h', null, ${new Date(baseMs)})`;
    await db.sql`select drop_chunks('samples', older_than => ${new Date(baseMs - 2 * dayMs)}::timestamptz)`;
    await db.sql`select compress_chunk(c, if_not_compressed => true)
      from show_chunks('samples', older_than => ${new Date(baseMs - hourMs)}::timestamptz) c`;
  }
  const kept = await float8Points(db);
  const before: Before = {
    points: kept,
    minutes: await float8Buckets(db, 'samples_1m'),
    hours: await float8Buckets(db, 'samples_1h'),
    rows: rows.filter((row) => row.timeMs >= (kept[0]?.ms ?? 0)),
  };
  return { ...database, before };
}

/** The buckets of the raw samples, as the aggregates compute them, at or after `fromMs`. */
async function rawBuckets(db: Database, widthMs: number, fromMs: number) {
  return await db.sql<Bucket[]>`
    select r.metric, (s.time_ms - s.time_ms % ${widthMs})::float8 as bucket,
      sum(s.value) / count(*) as avg, min(s.value) as min, max(s.value) as max,
      count(*) as count, sum(s.value) as sum
    from raw_samples(array(select id from series), ${fromMs}, ${Date.UTC(9999, 0, 1)}) s
    join series r on r.id = s.series_id
    group by 1, 2
    order by 1, 2`;
}

/** The rows stored before `beforeMs` still in float8 that a scale holds exactly (`encodeScale`). */
async function scalableFloat8(db: Database, beforeMs: number) {
  const { toColumn } = await sampleTimeColumn(db);
  const rows = await db.sql<{ value: number }[]>`
    select value from samples
    where value is not null and time < ${toColumn(db.sql`${new Date(beforeMs)}::timestamptz`)}`;
  return rows.filter((row) => encodeScale(row.value, unscaled) !== unscaled);
}

/** Buckets a read function answers twice for a (series, bucket). */
async function doubled(db: Database, rollup: 'samples_1m' | 'samples_1h') {
  return await db.sql`
    select series_id, bucket_ms
    from ${db.sql.unsafe(`${rollup}_buckets`)}(array(select id from series), 0, ${Date.UTC(9999, 0, 1)})
    group by 1, 2 having count(*) > 1`;
}

describe.each(['postgres', 'timescale'] as const)(
  'the move of stored samples to the scaled layout on %s',
  (engine) => {
    const now = new Date();
    const baseMs = Math.floor(now.getTime() / hourMs) * hourMs;
    let database: Awaited<ReturnType<typeof float8Database>>;

    beforeAll(async () => {
      database = await float8Database(engine, now, baseMs);
    });

    afterAll(async () => {
      await database?.dispose();
    });

    it('moves in batches while samples keep coming, every answer equal before, during and after', async () => {
      const { db, before } = database;
      expect(before.points.length).toBeGreaterThan(3 * 500);
      if (engine === 'timescale') {
        // Rollups older than the raw samples: only the move keeps them.
        expect(before.minutes[0]!.bucket).toBeLessThan(before.points[0]!.ms);
      }
      await migrate(db, { now, ...policies });
      await pauseJobs(db, engine);
      const steps = await db.sql<{ step: string }[]>`
        select step from storage_moves where finished_at is null order by step`;
      expect(steps.map((row) => row.step)).toEqual(
        engine === 'timescale' ? ['samples', 'samples_1h', 'samples_1m'] : [],
      );

      // Migration 33 leaves the unique key to the move (its duplicate checks read by it), which
      // drops it once done.
      expect(await hasSampleKey(db)).toBe(true);

      const store = createSampleStore(db);
      const written: Row[] = [];
      const newStartMs = baseMs - hourMs;
      const expectOldAnswers = async () => {
        expect((await points(db)).filter((p) => p.ms < newStartMs)).toEqual(before.points);
        expectSameBuckets(await buckets(db, 'samples_1m', newStartMs), before.minutes);
        expectSameBuckets(await buckets(db, 'samples_1h', newStartMs), before.hours);
      };
      await expectOldAnswers();

      let batches = 0;
      for (let round = 0; round < 100; round++) {
        // Ingest goes on between batches, in the minutes after the old samples.
        // Values within ±1e100: larger ones go to unaggregated_samples (the new layout too).
        const rows = rowsOf(newStartMs + round * 30_000, 10_000, 3, round * 3);
        await store.writeBatch({ samples: hostSamples(rows) });
        written.push(...rows);
        // An agent's resend of the round before: stored once all the same.
        if (round > 0) {
          const resent = rowsOf(newStartMs + (round - 1) * 30_000, 10_000, 3, (round - 1) * 3);
          await store.writeBatch({ samples: hostSamples(resent) });
        }
        // The refresh jobs (paused here) run at times of their own: every few batches.
        if (round % 5 === 2) await refreshRollups(db, { now });
        const { moved } = await runMaintenance(db, now, {
          alertRetentionDays: 90,
          rawRetentionDays: policies.rawRetentionDays,
          storageMoveBatchesPerRun: 1,
        });
        batches += moved.batches;
        await expectOldAnswers();
        if (moved.pending === 0) break;
      }
      if (engine === 'timescale') expect(batches).toBeGreaterThan(3);
      const [left] = await db.sql<{ pending: number; old: number }[]>`
        select (select count(*)::int from storage_moves where finished_at is null) as pending,
          (select count(*)::int from pg_class where relname like 'samples%\\_v21') as old`;
      expect(left).toEqual({ pending: 0, old: 0 });
      expect(await hasSampleKey(db)).toBe(engine === 'postgres');

      // Every value bit for bit, the old and the new; old values in float8 only where no scale
      // holds them exactly (TimescaleDB: plain PostgreSQL keeps its rows as they are).
      const all = await points(db);
      expect(all).toEqual(
        [...before.points, ...expectedPoints(written)].sort(
          (a, b) => a.metric.localeCompare(b.metric) || a.ms - b.ms,
        ),
      );
      const float8 = await scalableFloat8(db, newStartMs);
      expect(float8.length).toBe(
        engine === 'timescale'
          ? 0
          : before.rows.filter((row) => encodeScale(row.value, unscaled) !== unscaled).length,
      );

      // Old buckets as before; new ones as the raw samples give them; none twice.
      await expectOldAnswers();
      expectSameBuckets(
        (await buckets(db, 'samples_1m')).filter((b) => b.bucket >= newStartMs),
        await rawBuckets(db, minuteMs, newStartMs),
      );
      for (const rollup of ['samples_1m', 'samples_1h'] as const) {
        expect(await doubled(db, rollup)).toEqual([]);
      }
    });
  },
);

describe('the move of stored samples on timescale, interrupted', () => {
  const now = new Date();
  const baseMs = Math.floor(now.getTime() / hourMs) * hourMs;
  let database: Awaited<ReturnType<typeof float8Database>>;

  beforeAll(async () => {
    database = await float8Database('timescale', now, baseMs);
  });

  afterAll(async () => {
    await database?.dispose();
  });

  it('resumes where it stopped and completes with nothing lost or doubled', async () => {
    const { db, before } = database;
    await migrate(db, { now, ...policies });
    const { policies: stored } = await requireStorageSettings(db);
    await pauseJobs(db, 'timescale');
    const engine = storageEngine('timescale');
    const stop = new Error('the process died');
    let seen = 0;
    const crashed = await engine
      .moveStoredSamples(db, {
        now,
        policies: stored,
        maxBatches: 100,
        afterBatch: () => {
          if (++seen === 3) throw stop;
        },
      })
      .catch((err: unknown) => err);
    expect(crashed).toBe(stop);
    // A crash before an aggregate's batch recorded its progress: the copy is done again.
    await db.sql`update storage_moves set done_until = '-infinity'`;
    await refreshRollups(db, { now });

    for (let run = 0; run < 100; run++) {
      const { pending } = await engine.moveStoredSamples(db, {
        now,
        policies: stored,
        maxBatches: 2,
      });
      if (pending === 0) break;
      // The refresh jobs (paused here) would have moved the watermarks by then.
      await refreshRollups(db, { now });
    }
    const [left] = await db.sql<{ pending: number; old: number }[]>`
      select (select count(*)::int from storage_moves where finished_at is null) as pending,
        (select count(*)::int from pg_class where relname like 'samples%\\_v21') as old`;
    expect(left).toEqual({ pending: 0, old: 0 });
    // Each aggregate retired once it moved (migrations 36 and 37).
    const retired = await db.sql<{ rollup: string }[]>`
      select rollup from retired_rollups order by rollup`;
    expect(retired.map((row) => row.rollup)).toEqual(['samples_1h', 'samples_1m']);
    expect(await points(db)).toEqual(before.points);
    expectSameBuckets(await buckets(db, 'samples_1m'), before.minutes);
    expectSameBuckets(await buckets(db, 'samples_1h'), before.hours);
    for (const rollup of ['samples_1m', 'samples_1h'] as const) {
      expect(await doubled(db, rollup)).toEqual([]);
    }
    expect(await scalableFloat8(db, baseMs)).toEqual([]);
  });
});
