// @services timescale
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../core/database.js';
import { createSampleStore } from '../../samples/sample-store.js';
import type { HostSample } from '../../samples/sample-batch.js';
import { migrate, migrateBefore } from '../../schema/migrate.js';
import { createServiceQueries } from '../../services/service-queries.js';
import { cleanDatabase, migratedDatabase } from '../../testing/clean-database.js';
import { refreshOptions } from './aggregate-refresh.js';

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;
const dayMs = 24 * hourMs;

/**
 * The storage jobs as TimescaleDB's scheduler runs them on a real server: nothing here calls a
 * policy's procedure or refreshes an aggregate. The intervals are shortened through the
 * policies (`jobIntervalSeconds`, `compressAfterHours`, the retentions), and the test waits,
 * bounded, for what each job must have done.
 */
describe('TimescaleDB storage jobs, run by the scheduler', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  const orgId = uniqueOrgId('org_policies');
  const now = Date.now();
  // Recent history: 20 to 21 hours at 1 minute, ending 26 hours ago, so its chunks ended over an
  // hour ago (compressible at compressAfterHours 1) and stay within 2 days (kept), an hour
  // clear of the retention itself.
  const recentFrom = Math.floor((now - 46 * hourMs) / hourMs) * hourMs;
  const recentTo = Math.floor((now - 26 * hourMs) / hourMs) * hourMs;
  // Old history, rolled up under the first policies and dropped by the second (4 days for the
  // aggregates). Retention drops whole chunks, and the aggregates' are a day long, aligned on
  // UTC midnights: the history ends an hour before the last midnight at least 4 days back, so
  // its chunks of every table have ended by then, and it stays within samples_1h's refresh
  // window (the last 7 days) whatever the hour. (Ending before a week boundary, as it did when
  // samples_1h's chunks were 7 days long, left it older than that window from Wednesday 23:00
  // to Monday, and the test waited for a refresh that rightly never came.)
  const oldTo = Math.floor((now - 4 * dayMs) / dayMs) * dayMs - hourMs;
  const oldFrom = oldTo - 2 * hourMs;
  // Middle history in the daily chunk that ends at the one UTC midnight between 4 and 3 days
  // ago: its samples_1h chunk is past the second policies' compression (3 days) and within
  // their retention (4 days).
  const midnight = Math.floor((now - 3 * dayMs) / dayMs) * dayMs;
  const middleFrom = midnight - 2 * hourMs;
  const middleTo = midnight - hourMs;
  let serviceId: string;

  const sample = (timeMs: number, value: number): HostSample =>
    buildHostSample({
      orgId,
      host: 'db-1',
      timeMs,
      metrics: { cpu_usage: value, memory_usage: 100 - value },
      containers: [{ id: 'c1', name: 'postgres', status: 'running' }],
    });

  const history = (step: '1m' | '1h', from: number, to: number) =>
    createServiceQueries(db, { staleAfterSeconds: 300 }).readMetricSeries({
      orgId,
      serviceId,
      metric: 'cpu_usage',
      step,
      from: new Date(from),
      to: new Date(to),
    });

  /** Polls `check` until it holds (bounded), then returns its last answer. */
  async function eventually<T>(
    what: string,
    check: () => Promise<T>,
    holds: (value: T) => boolean,
  ) {
    let value = await check();
    for (let attempt = 0; attempt < 600 && !holds(value); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      value = await check();
    }
    if (!holds(value))
      throw new Error(`${what} did not happen within 120 s: ${JSON.stringify(value)}`);
    return value;
  }

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('timescale', 'storage_jobs'));
    // The samples go in before the jobs run every second: a refresh at work while a write
    // commits moves the watermark over buckets it did not see, and they read again only at its
    // next run (TimescaleDB's real-time aggregates; a late sample waits for the refresh).
    const samples: HostSample[] = [];
    for (let t = oldFrom; t < oldTo; t += minuteMs) samples.push(sample(t, (t / minuteMs) % 97));
    for (let t = middleFrom; t < middleTo; t += minuteMs)
      samples.push(sample(t, (t / minuteMs) % 7));
    for (let t = recentFrom; t < recentTo; t += minuteMs) {
      samples.push(sample(t, (t / minuteMs) % 89), sample(t + 20_000, ((t / minuteMs) % 89) + 0.5));
    }
    await createSampleStore(db).writeBatch({ samples });
    // First policies: everything kept for weeks, nothing compressed yet.
    await migrate(db, {
      rawRetentionDays: 30,
      snapshotRetentionDays: 30,
      rollup1mRetentionDays: 40,
      rollup1hRetentionDays: 40,
      compressAfterHours: 1_000,
      jobIntervalSeconds: 1,
    });
    const [row] = await db.sql<{ id: string }[]>`
      select id from services where org_id = ${orgId} and name = 'db-1'`;
    serviceId = row!.id;
  });

  afterAll(async () => {
    await dispose?.();
  });

  it('compresses old chunks of samples and drops what is past retention, refreshing nothing', async () => {
    const before1m = await history('1m', recentFrom, recentTo);
    const before1h = await history('1h', recentFrom, recentTo);
    expect(before1m).toHaveLength((recentTo - recentFrom) / minuteMs);
    expect(before1h).toHaveLength((recentTo - recentFrom) / hourMs);

    // samples_1m and samples_1h, retired by migrations 36 and 37, have no refresh job and
    // materialize nothing: their buckets are computed from the raw samples as they are read.
    const materialized = async (view: 'samples_1m' | 'samples_1h'): Promise<number> => {
      const [table] = await db.sql<{ schema: string; name: string }[]>`
        select materialization_hypertable_schema as schema, materialization_hypertable_name as name
        from timescaledb_information.continuous_aggregates where view_name = ${view}`;
      const [count] = await db.sql<{ buckets: number }[]>`
        select count(*)::int as buckets from ${db.sql(table!.schema)}.${db.sql(table!.name)}
        where bucket < ${now}`;
      return count!.buckets;
    };
    const [refreshJobs] = await db.sql<{ jobs: number }[]>`
      select count(*)::int as jobs from timescaledb_information.jobs
      where proc_name = 'policy_refresh_continuous_aggregate'`;
    expect(refreshJobs!.jobs).toBe(0);

    // Second policies: compress raw samples after an hour, keep them and snapshots 2 days and
    // the aggregates 4 (so late samples count for 2 days and the aggregates compress after 3);
    // the scheduler picks the new jobs up at once.
    await migrate(db, {
      rawRetentionDays: 2,
      snapshotRetentionDays: 2,
      rollup1mRetentionDays: 4,
      rollup1hRetentionDays: 4,
      compressAfterHours: 1,
      jobIntervalSeconds: 1,
    });
    const compressed = await eventually(
      'compression of the recent chunks',
      () =>
        db.sql<{ compressed: boolean }[]>`
          select bool_and(is_compressed) as compressed from timescaledb_information.chunks
          where hypertable_name = 'samples'
            and range_end_integer <= ${now - 2 * hourMs} and range_end_integer > ${now - 2 * dayMs}
        `.then(([row]) => row?.compressed ?? false),
      (value) => value,
    );
    expect(compressed).toBe(true);
    const oldRows = () =>
      db.sql<{ raw: number; snapshots: number }[]>`
        select (select count(*)::int from samples where time < ${oldTo}) as raw,
          (select count(*)::int from snapshots where time < ${new Date(oldTo)}) as snapshots
      `.then(([row]) => row!);
    expect(
      await eventually(
        'retention of raw samples and snapshots',
        oldRows,
        (rows) => rows.raw + rows.snapshots === 0,
      ),
    ).toEqual({ raw: 0, snapshots: 0 });
    for (const view of ['samples_1m', 'samples_1h'] as const) {
      expect(await materialized(view)).toBe(0);
    }

    // The same points, now read from compressed chunks.
    expect(await history('1m', recentFrom, recentTo)).toEqual(before1m);
    expect(await history('1h', recentFrom, recentTo)).toEqual(before1h);

    // Every storage job has run and succeeded by itself. A run may fail now and then while the
    // jobs work on the same aggregates at once (TimescaleDB runs it again at the next interval),
    // so the test waits for each one's last run to have succeeded; a job that only ever fails
    // (as every one did on PostgreSQL 15.20 without the portal patch) never gets there.
    const stats = await eventually(
      'a successful last run of every storage job',
      () =>
        db.sql<{ proc: string; target: string; successes: number; status: string }[]>`
          select j.proc_name as proc, j.hypertable_name as target,
            s.total_successes::int as successes, s.last_run_status as status
          from timescaledb_information.jobs j join timescaledb_information.job_stats s using (job_id)
          where j.hypertable_name is not null or j.proc_name = 'consolidate_sample_chunks'
        `,
      (rows) => rows.length > 0 && rows.every((row) => row.status === 'Success'),
    );
    expect(new Set(stats.map((row) => row.proc))).toEqual(
      new Set(['policy_compression', 'policy_retention', 'consolidate_sample_chunks']),
    );
    for (const row of stats) expect(row.successes, `${row.proc} ${row.target}`).toBeGreaterThan(0);
  });
});

/**
 * A refresh commits batch by batch (10 buckets each), and each batch moves the aggregate's
 * watermark to what it materialized: readers must never find a bucket below the watermark that
 * is not materialized yet, as they did while TimescaleDB's default order (newest batch first)
 * was at work on a long window. On a database whose samples_1h still has its refresh job: one
 * before migration 37 (or still moving it for migration 24, stored-sample-move.ts).
 */
describe('a refresh policy stopped after its first batch', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  const orgId = uniqueOrgId('org_refresh_order');

  beforeAll(async () => {
    // The default policies: the refreshes wait their first interval; the other jobs are due at
    // once, and a compression of the head chunks the test writes could deadlock with the refresh
    // it runs, so they are paused: nothing runs but the job the test runs itself.
    ({ db, dispose } = await cleanDatabase('timescale', 'refresh_order'));
    await migrateBefore(db, 37);
    await db.sql`
      select alter_job(job_id, scheduled => false) from timescaledb_information.jobs
      where proc_schema = current_schema() or hypertable_schema = current_schema()`;
  });

  afterAll(async () => {
    await dispose?.();
  });

  it('leaves every hour of a 20-hour window readable', async () => {
    const to = Math.floor((Date.now() - 2 * hourMs) / hourMs) * hourMs;
    const from = to - 20 * hourMs;
    const samples: HostSample[] = [];
    for (let t = from; t < to; t += 5 * minuteMs) {
      samples.push(buildHostSample({ orgId, host: 'web-1', timeMs: t, metrics: { cpu_usage: 1 } }));
    }
    await createSampleStore(db).writeBatch({ samples });
    const [service] = await db.sql<{ id: string }[]>`
      select id from services where org_id = ${orgId} and name = 'web-1'`;
    const hours = () =>
      createServiceQueries(db, { staleAfterSeconds: 300 }).readMetricSeries({
        orgId,
        serviceId: service!.id,
        metric: 'cpu_usage',
        step: '1h',
        from: new Date(from),
        to: new Date(to),
      });
    expect(await hours()).toHaveLength(20);

    const [job] = await db.sql<{ id: number; config: Record<string, unknown> }[]>`
      select job_id as id, config from timescaledb_information.jobs
      where proc_name = 'policy_refresh_continuous_aggregate' and hypertable_name = 'samples_1h'`;
    await db.sql`select alter_job(${job!.id},
      config => ${db.sql.json({ ...job!.config, max_batches_per_execution: 1 })}::jsonb)`;
    await db.sql`call run_job(${job!.id})`;

    // Part of the window is materialized, the rest is not yet.
    const [table] = await db.sql<{ schema: string; name: string }[]>`
      select materialization_hypertable_schema as schema, materialization_hypertable_name as name
      from timescaledb_information.continuous_aggregates where view_name = 'samples_1h'`;
    const [materialized] = await db.sql<{ buckets: number }[]>`
      select count(*)::int as buckets from ${db.sql(table!.schema)}.${db.sql(table!.name)}
      where bucket >= ${from} and bucket < ${to}`;
    expect(materialized!.buckets).toBeGreaterThan(0);
    expect(materialized!.buckets).toBeLessThan(20);
    const read = await hours();
    expect(read).toHaveLength(20);
    expect(read!.every((bucket) => bucket.count === 12)).toBe(true);
  });

  it('asks our own refreshes for the same order, in options TimescaleDB reads', async () => {
    // A jsonb string (what a parameter typed jsonb became) would be ignored: null here.
    const [row] = await db.sql<{ newestFirst: string | null }[]>`
      select (${refreshOptions(db.sql)}) ->> 'refresh_newest_first' as "newestFirst"`;
    expect(row!.newestFirst).toBe('false');
  });

  it('makes the refresh jobs of an earlier version, newest first, again at the next migration', async () => {
    const refreshJobs = () =>
      db.sql<{ id: number; config: Record<string, unknown> }[]>`
        select job_id as id, config from timescaledb_information.jobs
        where proc_name = 'policy_refresh_continuous_aggregate'`;
    // As the jobs were made before they asked for oldest first: TimescaleDB's default.
    for (const job of await refreshJobs()) {
      const config = { ...job.config };
      delete config['refresh_newest_first'];
      await db.sql`select alter_job(${job.id}, config => ${JSON.stringify(config)}::text::jsonb)`;
    }
    // The same settings as before: nothing else would make the jobs again.
    await migrateBefore(db, 37);
    // samples_1h's: samples_1m has none since migration 36.
    const jobs = await refreshJobs();
    expect(jobs).toHaveLength(1);
    for (const job of jobs) expect(job.config['refresh_newest_first']).toBe(false);
  });
});
