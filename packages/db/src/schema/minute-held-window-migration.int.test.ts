// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { refreshRollups } from '../maintenance/run-maintenance.js';
import type { HostSample } from '../samples/sample-batch.js';
import { createSampleStore } from '../samples/sample-store.js';
import { cleanDatabase } from '../testing/clean-database.js';
import { migrate, migrateWith } from './migrate.js';
import { migrations } from './migrations.js';

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;
const orgId = 'org_steady';

/** Two hosts, two metrics, a point every 30 s from `startMs`. */
function fleet(startMs: number, points: number): HostSample[] {
  return Array.from({ length: points }, (_, p) =>
    ['steady-1', 'steady-2'].map((host, h): HostSample => ({
      orgId,
      host,
      timeMs: startMs + p * 30_000,
      metrics: {
        cpu: Math.round(500 + 400 * Math.sin((p + h) / 17)) / 10,
        noise: (0.1 + 0.2) * (1 + p / 7) * (h + 1),
      },
      tags: {},
      containers: [],
      processes: [],
    })),
  ).flat();
}

type Point = { host: string; metric: string; ms: number; value: number };
type Bucket = {
  series: string;
  ms: number;
  avg: number;
  min: number;
  max: number;
  count: string;
};

async function points(db: Database): Promise<Point[]> {
  return await db.sql<Point[]>`
    select v.name as host, r.metric, (extract(epoch from s.time) * 1000)::float8 as ms,
      sample_value(s.mantissa, s.scale, s.value) as value
    from samples s join series r on r.id = s.series_id join services v on v.id = r.service_id
    order by 1, 2, 3
  `;
}

async function buckets(db: Database, view: 'samples_1m' | 'samples_1h'): Promise<Bucket[]> {
  return await db.sql<Bucket[]>`
    select r.service_id || ' ' || r.metric as series,
      (extract(epoch from o.bucket) * 1000)::float8 as ms, o.avg, o.min, o.max, o.count
    from ${db.sql(view)} o join series r on r.id = o.series_id
    order by r.service_id, r.metric, o.bucket
  `;
}

/** samples_1m's jobs: procedure, and compress_after or end_offset. */
async function minuteJobs(db: Database): Promise<[string, string | undefined][]> {
  const jobs = await db.sql<{ proc: string; config: Record<string, string> }[]>`
    select j.proc_name as proc, j.config
    from timescaledb_information.jobs j
    left join timescaledb_information.continuous_aggregates c
      on c.materialization_hypertable_name = j.hypertable_name
    where coalesce(c.view_name, j.hypertable_name) = 'samples_1m'
    order by j.proc_name`;
  return jobs.map((j) => [j.proc, j.config['compress_after'] ?? j.config['end_offset']]);
}

async function pauseJobs(db: Database, engine: 'postgres' | 'timescale') {
  if (engine !== 'timescale') return;
  await db.sql`
    select alter_job(job_id, scheduled => false) from timescaledb_information.jobs
    where hypertable_schema = current_schema()`;
}

describe.each(['postgres', 'timescale'] as const)(
  'migration 25 (samples_1m materialized 3 hours before the raw retention) on %s',
  (engine) => {
    const now = new Date();
    // 30 hours ending 2 hours ago: several 6-hour raw chunks, compressed before the migration
    // as the policy leaves them, and one uncompressed.
    const startMs = Math.floor(now.getTime() / hourMs) * hourMs - 32 * hourMs;
    const samples = fleet(startMs, 30 * 120);
    // Within 2 hours of now: as late as plain PostgreSQL's refresh looks back.
    const later = fleet(startMs + 31 * hourMs, 60);
    let db: Database;
    let dispose: () => Promise<void>;
    let before: { points: Point[]; minutes: Bucket[]; hours: Bucket[] };
    let minuteJobsBefore: [string, string | undefined][] = [];

    beforeAll(async () => {
      ({ db, dispose } = await cleanDatabase(engine, `minute_held_window_${engine}`));
      await migrateWith(
        db,
        migrations.filter((migration) => migration.version < 25),
        { now },
      );
      await pauseJobs(db, engine);
      await createSampleStore(db).writeBatch({ samples });
      await refreshRollups(db, { now });
      if (engine === 'timescale') {
        await db.sql`
          select compress_chunk(c, if_not_compressed => true)
          from show_chunks('samples', older_than => ${new Date(now.getTime() - 3 * hourMs)}::timestamptz) c`;
      }
      before = {
        points: await points(db),
        minutes: await buckets(db, 'samples_1m'),
        hours: await buckets(db, 'samples_1h'),
      };
      if (engine === 'timescale') {
        // samples_1m's jobs as the previous release made them (this code's policies already
        // make the new ones): materialized 12 hours before the raw retention.
        await db.sql`select remove_continuous_aggregate_policy('samples_1m', if_exists => true)`;
        await db.sql`select remove_compression_policy('samples_1m', if_exists => true)`;
        await db.sql`
          select add_continuous_aggregate_policy('samples_1m', start_offset => interval '720 hours',
            end_offset => interval '708 hours', schedule_interval => interval '1 hour',
            initial_start => now() + interval '1 hour')`;
        await db.sql`
          select add_compression_policy('samples_1m', compress_after => interval '710 hours',
            schedule_interval => interval '1 hour')`;
        minuteJobsBefore = await minuteJobs(db);
      }
      const applied = await migrate(db, { now });
      expect(applied.applied.map((migration) => migration.version)).toContain(25);
      await pauseJobs(db, engine);
    });

    afterAll(async () => {
      await dispose?.();
    });

    it('keeps every sample and every bucket', async () => {
      expect(before.points).toHaveLength(samples.length * 2);
      expect(before.hours.length).toBeGreaterThanOrEqual(2 * 2 * 30);
      expect(await points(db)).toEqual(before.points);
      expect(await buckets(db, 'samples_1m')).toEqual(before.minutes);
      expect(await buckets(db, 'samples_1h')).toEqual(before.hours);
    });

    it('stores and rolls up samples written after it, and reads the older ones back the same', async () => {
      await createSampleStore(db).writeBatch({ samples: later });
      // An hour on: plain PostgreSQL refreshes samples_1h once a new hour completed, looking 2
      // hours back from its watermark (these samples are 2 hours old).
      await refreshRollups(db, { now: new Date(now.getTime() + hourMs) });
      if (engine === 'timescale') {
        // What the compression job does: every raw chunk that ended.
        await db.sql`
          select compress_chunk(c, if_not_compressed => true)
          from show_chunks('samples', older_than => now()) c`;
      }
      const after = await points(db);
      expect(after).toHaveLength((samples.length + later.length) * 2);
      const cut = later[0]!.timeMs;
      expect(after.filter((p) => p.ms < cut)).toEqual(before.points);
      const hours = await buckets(db, 'samples_1h');
      expect(hours.filter((b) => b.ms < cut)).toEqual(before.hours);
      const newest = hours.filter((b) => b.ms >= cut);
      expect(newest.reduce((n, b) => n + Number(b.count), 0)).toBe(later.length * 2);
    });

    // Plain PostgreSQL refreshes its rollups itself (no jobs): nothing to make again there.
    if (engine === 'timescale') {
      it("makes samples_1m's jobs again: materialized 3 hours before the raw retention, compressed 2 hours after", async () => {
        expect(minuteJobsBefore).toEqual([
          ['policy_compression', '710:00:00'],
          ['policy_refresh_continuous_aggregate', '708:00:00'],
          ['policy_retention', undefined],
        ]);
        expect(await minuteJobs(db)).toEqual([
          ['policy_compression', '719:00:00'],
          ['policy_refresh_continuous_aggregate', '717:00:00'],
          ['policy_retention', undefined],
        ]);
      });
    }
  },
);
