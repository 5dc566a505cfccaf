// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { refreshRollups } from '../maintenance/run-maintenance.js';
import type { HostSample } from '../samples/sample-batch.js';
import { createSampleStore } from '../samples/sample-store.js';
import { cleanDatabase, migratedDatabase } from '../testing/clean-database.js';
import { storageEngine } from '../storage/engine.js';
import { migrate, migrateWith } from './migrate.js';
import { requireStorageSettings } from './storage-settings.js';
import { migrations } from './migrations.js';

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;
const orgId = 'org_scaled';
const host = 'scaled-1';

/** Three series as agents send them, a point every 20 s: one decimal, two, and any double. */
function fleet(startMs: number, points: number): HostSample[] {
  // Large, but within ±1e100 however far `p` goes: values beyond go to unaggregated_samples,
  // which the aggregates skip by design (unaggregated-samples.int.test.ts), in either layout.
  const odd = [0.1 + 0.2, -0, 5e-324, 1e98, -1e98, 1 / 3, 2 ** 60, 123456.78901234567];
  return Array.from({ length: points }, (_, p) => ({
    orgId,
    host,
    timeMs: startMs + p * 20_000,
    metrics: {
      cpu: Math.round(500 + 400 * Math.sin(p / 17)) / 10,
      load: Math.round(100 + 90 * Math.cos(p / 29)) / (p % 3 === 0 ? 10 : 100),
      noise: odd[p % odd.length]! * (1 + p / 7),
    },
    tags: {},
    containers: [],
    processes: [],
  }));
}

type Point = { metric: string; ms: number; value: number | string };
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

/** −0 as text, so that equality tells it from +0. */
const withSign = <T extends { value: number | string }>(rows: T[]) =>
  rows.map((row) => ({ ...row, value: Object.is(row.value, -0) ? '-0' : row.value }));

const farFutureMs = Date.UTC(9999, 0, 1);

/**
 * The stored points of the float8 layout (before migration 24), in (metric, time) order, those
 * beyond ±1e100 included (the store keeps them apart from the aggregated samples).
 */
async function float8Points(db: Database) {
  return withSign(
    await db.sql<Point[]>`
      select p.metric, (extract(epoch from p.time) * 1000)::float8 as ms, p.value from (
        select r.metric, s.time, s.value from samples s join series r on r.id = s.series_id
        union all
        select r.metric, u.time, u.value
        from unaggregated_samples u join series r on r.id = u.series_id
      ) p
      order by p.metric, p.time
    `,
  );
}

/** The stored points as readers read them (older than `beforeMs` if given), same order. */
async function points(db: Database, beforeMs = farFutureMs) {
  return withSign(
    await db.sql<Point[]>`
      select p.metric, p.ms::float8 as ms, p.value from (
        select r.metric, s.time_ms as ms, s.value
        from raw_samples(array(select id from series), 0, ${beforeMs - 1}) s
        join series r on r.id = s.series_id
        union all
        select r.metric, (extract(epoch from u.time) * 1000)::bigint, u.value
        from unaggregated_samples u join series r on r.id = u.series_id
        where u.time < ${new Date(beforeMs)}
      ) p
      order by p.metric, p.ms
    `,
  );
}

/** An aggregate of the float8 layout, as it answers. */
async function float8Buckets(db: Database, view: 'samples_1m' | 'samples_1h') {
  return await db.sql<Bucket[]>`
    select r.metric, (extract(epoch from o.bucket) * 1000)::float8 as bucket, o.avg, o.min,
      o.max, o.count, o.sum
    from ${db.sql(view)} o join series r on r.id = o.series_id
    order by r.metric, o.bucket
  `;
}

/** An aggregate as readers read it (its read function). */
async function buckets(db: Database, rollup: 'samples_1m' | 'samples_1h') {
  return await db.sql<Bucket[]>`
    select r.metric, o.bucket_ms::float8 as bucket, o.avg, o.min, o.max, o.count, o.sum
    from ${db.sql.unsafe(`${rollup}_buckets`)}(array(select id from series), 0, ${farFutureMs}) o
    join series r on r.id = o.series_id
    order by r.metric, o.bucket_ms
  `;
}

/**
 * Equal buckets: counts, minima and maxima exactly; sums and averages up to the order their
 * samples were added in (TimescaleDB's compressed chunks give them back newest first, and an
 * aggregate computed again may add them in another order, in any layout), within the error
 * bound of a float sum (count × the largest magnitude × 2^-52), with room for rounding.
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

/** Writes `samples` as the float8 layout (migration 21) stores them: `value` only. */
async function writeFloat8(db: Database, samples: readonly HostSample[]) {
  await db.sql`
    insert into services (id, org_id, name, last_seen)
    values ('svc_scaled', ${orgId}, ${host}, now()) on conflict do nothing`;
  await db.sql`
    insert into series (service_id, metric)
    select 'svc_scaled', m from unnest(array['cpu', 'load', 'noise']) m
    on conflict do nothing`;
  const rows = samples.flatMap((s) =>
    Object.entries(s.metrics).map(([metric, value]) => ({ timeMs: s.timeMs, metric, value })),
  );
  // In the sample store's order (series, then time), so that sums add up in the same order.
  rows.sort((a, b) => a.metric.localeCompare(b.metric) || a.timeMs - b.timeMs);
  await db.sql`
    insert into samples (time, series_id, value)
    select timestamptz 'epoch' + t * interval '1 millisecond', r.id, v
    from unnest(${rows.map((r) => r.timeMs)}::float8[], ${rows.map((r) => r.metric)}::text[],
      ${rows.map((r) => (Object.is(r.value, -0) ? '-0' : String(r.value)))}::text[]::float8[])
      as u(t, m, v)
    join series r on r.service_id = 'svc_scaled' and r.metric = u.m
  `;
}

describe.each(['postgres', 'timescale'] as const)(
  'migration 24 (scaled values) on %s',
  (engine) => {
    const now = new Date();
    const startMs = Math.floor(now.getTime() / hourMs) * hourMs - 4 * hourMs;
    const samples = fleet(startMs, 3 * 180);
    const later = fleet(startMs + 3 * hourMs + minuteMs, 60);
    let float8: { db: Database; dispose: () => Promise<void> };
    let scaled: { db: Database; dispose: () => Promise<void> };
    let before: { points: Point[]; minutes: Bucket[]; hours: Bucket[] };

    beforeAll(async () => {
      float8 = await cleanDatabase(engine, `scaled_migration_${engine}`);
      await migrateWith(
        float8.db,
        migrations.filter((migration) => migration.version < 24),
        { now },
      );
      await pauseJobs(float8.db, engine);
      await writeFloat8(float8.db, samples);
      // Plain PostgreSQL's refresh is this version's code, which reads the columns of
      // migration 24: its rollups are read as the views compute them from the raw samples.
      if (engine === 'timescale') await refreshRollups(float8.db, { now });
      before = {
        points: await float8Points(float8.db),
        minutes: await float8Buckets(float8.db, 'samples_1m'),
        hours: await float8Buckets(float8.db, 'samples_1h'),
      };
      if (engine === 'timescale') {
        // Compressed as the policy leaves older chunks: the migration reads them too.
        await float8.db.sql`select compress_chunk(c) from show_chunks('samples') c`;
      }

      scaled = await migratedDatabase(engine, `scaled_layout_${engine}`);
      await pauseJobs(scaled.db, engine);
      await createSampleStore(scaled.db).writeBatch({ samples });
      // Computed as they were in the float8 layout (refreshed, or from the raw samples): the
      // same samples added up in the same order.
      if (engine === 'timescale') await refreshRollups(scaled.db, { now });
    });

    afterAll(async () => {
      await float8?.dispose();
      await scaled?.dispose();
    });

    it('stores the same samples as the float8 layout did, bit for bit', async () => {
      expect(before.points).toHaveLength(3 * 540);
      expect(await points(scaled.db)).toEqual(before.points);
      const [split] = await scaled.db.sql<{ scaled: number; float8: number }[]>`
      select count(mantissa)::int as scaled, count(value)::int as float8 from samples`;
      // cpu and load scale; `noise` holds −0, 17-digit doubles and 2^60 (float8) among others.
      expect(split!.scaled).toBeGreaterThan(2 * 540);
      expect(split!.float8).toBeGreaterThan(0);
    });

    it('answers the 1-minute and 1-hour aggregates as the float8 layout did', async () => {
      expect(before.minutes.length).toBeGreaterThan(3 * 170);
      expect(before.hours.length).toBeGreaterThanOrEqual(3 * 3);
      // Counts, minima and maxima the same; sums and averages up to the order the samples are
      // added in, which a plan chooses (TimescaleDB: samples_1h also sums an hour's samples, no
      // longer its minutes' sums).
      expectSameBuckets(await buckets(scaled.db, 'samples_1m'), before.minutes);
      expectSameBuckets(await buckets(scaled.db, 'samples_1h'), before.hours);
    });

    it('migrates the float8 layout with nothing lost, new writers going on', async () => {
      const { db } = float8;
      await migrate(db, { now });
      await pauseJobs(db, engine);
      expect(await points(db)).toEqual(before.points);
      expectSameBuckets(await buckets(db, 'samples_1m'), before.minutes);
      expectSameBuckets(await buckets(db, 'samples_1h'), before.hours);

      // A writer of the new version goes on at once. On plain PostgreSQL, where the layout keeps
      // its tables, one of the old version still running during a rolling upgrade does too (its
      // rows: `value` only); on TimescaleDB it cannot write the new layout's times (its batches
      // fail and wait in Kafka until it is replaced).
      const oldWriter = engine === 'postgres' ? later.slice(30) : [];
      await createSampleStore(db).writeBatch({
        samples: later.slice(0, later.length - oldWriter.length),
      });
      if (oldWriter.length > 0) await writeFloat8(db, oldWriter);
      else await createSampleStore(db).writeBatch({ samples: later.slice(30) });
      const expectEverything = async () => {
        const expected = new Map<string, number>();
        for (const s of [...samples, ...later]) {
          for (const [metric, value] of Object.entries(s.metrics)) {
            expected.set(`${metric} ${s.timeMs}`, value);
          }
        }
        const after = await points(db);
        expect(after).toHaveLength(expected.size);
        expect(await points(db, later[0]!.timeMs)).toEqual(before.points);
        for (const row of after.filter((p) => p.ms >= later[0]!.timeMs)) {
          const value = row.value === '-0' ? -0 : row.value;
          expect(Object.is(value, expected.get(`${row.metric} ${row.ms}`))).toBe(true);
        }
        // The buckets of the samples written before keep their answers.
        const minutes = await buckets(db, 'samples_1m');
        expectSameBuckets(
          minutes.filter((b) => b.bucket < later[0]!.timeMs),
          before.minutes,
        );
      };
      await refreshRollups(db, { now: new Date() });
      await expectEverything();

      // And once the old layout moved into the new one.
      const { policies } = await requireStorageSettings(db);
      for (let run = 0; run < 50; run++) {
        const moved = await storageEngine(engine).moveStoredSamples(db, {
          now: new Date(),
          policies,
          maxBatches: 20,
        });
        if (moved.pending === 0) break;
        await refreshRollups(db, { now: new Date() });
      }
      const [left] = await db.sql<{ pending: number }[]>`
        select count(*)::int as pending from storage_moves where finished_at is null`;
      expect(left?.pending).toBe(0);
      await expectEverything();
    });
  },
);
