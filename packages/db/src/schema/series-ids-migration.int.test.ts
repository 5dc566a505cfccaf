// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { refreshRollups } from '../maintenance/run-maintenance.js';
import { cleanDatabase } from '../testing/clean-database.js';
import { migrateWith } from './migrate.js';
import { migrations } from './migrations.js';

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;
const dayMs = 24 * hourMs;

/** One stored point, whatever the layout: the text keys and the exact value. */
type Point = { service_id: string; metric: string; time: string; value: number };
type RollupRow = {
  service_id: string;
  metric: string;
  bucket: string;
  avg: number;
  min: number;
  max: number;
  count: string;
  sum: number;
};

/** Every migration before 24, which moves samples into a layout of its own. */
const upTo24 = migrations.filter((migration) => migration.version < 24);

const byKey = <T extends { service_id: string; metric: string }>(rows: readonly T[], at: keyof T) =>
  [...rows].sort(
    (a, b) =>
      a.service_id.localeCompare(b.service_id) ||
      a.metric.localeCompare(b.metric) ||
      String(a[at]).localeCompare(String(b[at])),
  );

describe.each(['postgres', 'timescale'] as const)('migration 16 (series ids) on %s', (engine) => {
  let db: Database;
  let dispose: () => Promise<void>;
  const now = new Date();
  const hourStart = Math.floor(now.getTime() / hourMs) * hourMs;
  // TimescaleDB: the retention the test applies by hand below, so that no refresh window
  // reaches past the raw samples it keeps (plain mode keeps them all).
  const retention = engine === 'timescale' ? { rawRetentionDays: 3 } : {};
  let before: Point[];
  let minutesBefore: RollupRow[];
  let hoursBefore: RollupRow[];

  beforeAll(async () => {
    ({ db, dispose } = await cleanDatabase(engine, `series_migration_${engine}`));
    await migrateWith(
      db,
      migrations.filter((migration) => migration.version < 16),
      { now, compressAfterHours: 24, ...retention },
    );
    await db.sql`
      insert into services (id, org_id, name, last_seen) values
        ('svc_a', 'org_m', 'a', ${now}), ('svc_b', 'org_m', 'b', ${now}),
        ('svc_c', 'org_other', 'c', ${now})
    `;
    // Five days of points every 20 minutes for two services and three metrics (integers, so
    // sums are exact whatever order they are added in), a few odd values, a metric name that
    // COPY's text format escapes, a point beyond the daily partitions (plain mode: the default
    // partition) and one of a service deleted by hand (no services row).
    await db.sql`
      insert into samples (time, service_id, metric, value)
      select ${new Date(hourStart)}::timestamptz - m * interval '20 minutes', s, k, m % 97
      from generate_series(0, 5 * 24 * 3) as m,
        unnest(array['svc_a', 'svc_b']) as s,
        unnest(array['cpu', 'mem', E'odd\\tname']) as k
    `;
    await db.sql`
      insert into samples (time, service_id, metric, value) values
        (${new Date(hourStart + 10 * minuteMs)}, 'svc_c', 'cpu', ${0.1 + 0.2}),
        (${new Date(hourStart + 10 * minuteMs + 1)}, 'svc_c', 'cpu', ${5e-324}),
        (${new Date(hourStart + 10 * minuteMs + 2)}, 'svc_c', 'cpu', ${-1e100}),
        (${new Date(hourStart + 10 * dayMs)}, 'svc_c', 'cpu', 42),
        (${new Date(hourStart - hourMs)}, 'svc_gone', 'cpu', 7)
    `;
    if (engine === 'timescale') {
      // This test makes the state of the jobs' work by hand, at known times: the scheduler's
      // own jobs (created at version 15) must not race it. Migration 16 re-creates them.
      await db.sql`
        select alter_job(job_id, scheduled => false) from timescaledb_information.jobs
        where hypertable_schema = current_schema()`;
      // Rollups as the policies leave them, then raw samples older than three days dropped (the
      // retention the policies say, so no refresh reaches past them) and compressed as
      // retention and compression would: the aggregates' history outlives them.
      await db.sql`call refresh_continuous_aggregate('samples_1m', null, ${new Date(hourStart)}::timestamptz)`;
      await db.sql`call refresh_continuous_aggregate('samples_1h', null, ${new Date(hourStart)}::timestamptz)`;
      await db.sql`select drop_chunks('samples', older_than => ${new Date(now.getTime() - 3 * dayMs)}::timestamptz)`;
      await db.sql`
        select compress_chunk(c, if_not_compressed => true) from show_chunks('samples', older_than => ${new Date(now.getTime() - dayMs)}::timestamptz) c
      `;
    } else {
      // Rollup rows as refreshRollups leaves them, history older than the raw samples included.
      for (const [table, widthMs] of [
        ['samples_1m', minuteMs],
        ['samples_1h', hourMs],
      ] as const) {
        await db.sql`
          insert into ${db.sql(table)} (bucket, service_id, metric, avg, min, max, count, sum)
          select ${new Date(hourStart - 90 * dayMs)}::timestamptz + b * ${widthMs} * interval '1 millisecond',
            s, 'cpu', b, b, b, 1, b
          from generate_series(0, 9) as b, unnest(array['svc_a', 'svc_c']) as s
        `;
      }
      await db.sql`update rollup_watermarks set watermark = ${new Date(hourStart)}`;
    }
    before = await db.sql<Point[]>`
      select service_id, metric, to_char(time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as time, value
      from samples
    `;
    minutesBefore = await db.sql<RollupRow[]>`
      select service_id, metric, bucket::text, avg, min, max, count, sum from samples_1m
    `;
    hoursBefore = await db.sql<RollupRow[]>`
      select service_id, metric, bucket::text, avg, min, max, count, sum from samples_1h
    `;
    // Up to the layout migration 24 replaces (its own test moves this one into it).
    const applied = await migrateWith(db, upTo24, { now, compressAfterHours: 24, ...retention });
    expect(applied.applied.map((migration) => migration.version)[0]).toBe(16);
  });

  afterAll(async () => {
    await dispose?.();
  });

  it('keeps every sample, read back through series', async () => {
    expect(before.length).toBeGreaterThan(engine === 'timescale' ? 1000 : 2000);
    const after = await db.sql<Point[]>`
      select r.service_id, r.metric,
        to_char(s.time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as time, s.value
      from samples s join series r on r.id = s.series_id
    `;
    expect(byKey(after, 'time')).toEqual(byKey(before, 'time'));
    const columns = await db.sql<{ column_name: string; data_type: string }[]>`
      select column_name, data_type from information_schema.columns
      where table_schema = current_schema() and table_name = 'samples' order by ordinal_position
    `;
    expect(columns).toEqual([
      { column_name: 'time', data_type: 'timestamp with time zone' },
      { column_name: 'series_id', data_type: 'bigint' },
      { column_name: 'value', data_type: 'double precision' },
    ]);
    const leftovers = await db.sql`
      select relname from pg_class where relname like '%\\_v15%' and relkind in ('r', 'p', 'v', 'm', 'i')
    `;
    expect(leftovers).toEqual([]);
  });

  it('keeps the rollups, their history older than the raw samples included', async () => {
    if (engine === 'timescale') await refreshRollups(db, { now });
    const rollups = (table: string) => db.sql<RollupRow[]>`
      select r.service_id, r.metric, o.bucket::text, o.avg, o.min, o.max, o.count, o.sum
      from ${db.sql(table)} o join series r on r.id = o.series_id
      where o.bucket < ${new Date(hourStart)}
    `;
    const older = (rows: readonly RollupRow[]) =>
      rows.filter((row) => new Date(row.bucket).getTime() < hourStart);
    expect(minutesBefore.length).toBeGreaterThan(0);
    expect(byKey(await rollups('samples_1m'), 'bucket')).toEqual(
      byKey(older(minutesBefore), 'bucket'),
    );
    expect(byKey(await rollups('samples_1h'), 'bucket')).toEqual(
      byKey(older(hoursBefore), 'bucket'),
    );
  });

  it('keeps the storage layout of its mode', async () => {
    const indexes = await db.sql<{ indexname: string }[]>`
      select indexname from pg_indexes
      where schemaname = current_schema() and tablename = 'samples' order by 1
    `;
    expect(indexes.map((row) => row.indexname)).toEqual([
      'samples_series_id_time_key',
      'samples_time_idx',
    ]);
    if (engine === 'postgres') {
      const partitions = await db.sql<{ name: string }[]>`
        select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = 'samples'::regclass order by 1
      `;
      expect(partitions.map((row) => row.name)).toContain('samples_default');
      const [inDefault] = await db.sql<
        { n: number }[]
      >`select count(*)::int as n from samples_default`;
      expect(inDefault?.n).toBe(1);
      return;
    }
    const [settings] = await db.sql<{ segmentby: string }[]>`
      select string_agg(attname, ',' order by segmentby_column_index) as segmentby
      from timescaledb_information.compression_settings
      where hypertable_name = 'samples' and segmentby_column_index is not null
    `;
    expect(settings?.segmentby).toBe('series_id');
    const jobs = await db.sql<{ proc_name: string; name: string }[]>`
      select proc_name, coalesce(hypertable_name, '') as name from timescaledb_information.jobs
      where proc_name in ('policy_retention', 'policy_compression', 'policy_refresh_continuous_aggregate')
      order by 1, 2
    `;
    expect(jobs.map((job) => job.proc_name)).toEqual([
      'policy_compression',
      'policy_compression',
      'policy_compression',
      'policy_refresh_continuous_aggregate',
      'policy_refresh_continuous_aggregate',
      'policy_retention',
      'policy_retention',
      'policy_retention',
      'policy_retention',
      // stale_markers' (migration 21)
      'policy_retention',
      // unaggregated_samples' (migration 23)
      'policy_retention',
    ]);
    const [compressed] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from timescaledb_information.chunks
      where hypertable_name = 'samples' and is_compressed
    `;
    expect(compressed?.n).toBeGreaterThan(0);
  });
});
