import type { TransactionSql } from '../../core/database.js';
import { hourMs } from '../rollups.js';
import type { StoragePolicies } from '../storage-mode.js';
import { headCompressLagMs } from './head-chunks.js';
import { rollupRetiredAtMs } from '../retired-rollups.js';

/** What a refresh covers, in hours back from now: `[now − startHours, now − endHours)`. */
type RefreshWindow = { startHours: number; endHours: number };

/** Each continuous aggregate's refresh window, from the policies. */
export type RefreshWindows = { samples_1m: RefreshWindow; samples_1h: RefreshWindow };

/**
 * How late a sample may arrive and still be rolled up: the refresh jobs look this far back.
 * Only invalidated buckets are recomputed inside a window, so a wide one costs nothing while
 * nothing arrives late, and it no longer holds off the aggregates' compression (see
 * applyTimescalePolicies). A week covers an agent that buffered through an outage; a sample
 * older than that is stored and read raw (PromQL, investigations) but not counted in the
 * rollups.
 */
const lateSampleWindowDays = 7;

/**
 * The refresh windows: as far back as a late sample is rolled up, never further back than the
 * raw samples are kept (both aggregates read them), and never as wide as an aggregate's own
 * retention (TimescaleDB refuses a refresh window reaching into data its retention drops).
 */
export function refreshWindows(policies: StoragePolicies): RefreshWindows {
  const days = Math.min(
    lateSampleWindowDays,
    policies.rawRetentionDays,
    policies.rollup1mRetentionDays - 1,
    policies.rollup1hRetentionDays - 1,
  );
  // samples_1m is materialized only for buckets about to leave the raw retention: until then
  // real-time aggregation computes it from the raw samples (a minute of a 30 s series is two
  // of them), and a materialized minute weighed 11.5 bytes per raw sample compressed, 68
  // uncompressed, against 3.4 for the raw samples themselves (docs/benchmarks/storage.md, "Storage").
  // The window reaches back as far as samples are kept raw (the latest a sample is accepted),
  // never into what samples_1m's own retention drops.
  const minuteStartHours =
    Math.min(policies.rollup1mRetentionDays - 1, policies.rawRetentionDays) * 24;
  const minuteEndHours = Math.max(0, minuteStartHours - materializedBeforeRawRetentionHours);
  return {
    samples_1m: { startHours: minuteStartHours, endHours: minuteEndHours },
    samples_1h: { startHours: days * 24, endHours: 0 },
  };
}

/**
 * How long before the raw retention (or samples_1m's own, if shorter) drops a minute's samples
 * the minute is materialized: the hourly refresh has three chances, so a scheduler stopped for
 * up to two hours loses no minute. Each hour held costs ~0.095 bytes per raw sample at steady
 * state (a materialized minute weighs ~68 bytes per raw sample uncompressed, over 720 hours of
 * raw retention; docs/benchmarks/storage.md, "Storage"): 12 hours held cost 1.14, 3 cost 0.29.
 */
const materializedBeforeRawRetentionHours = 3;

/**
 * Hours after an aggregate's chunk ended that it is compressed: past the last refresh that
 * materializes its newest buckets (samples_1h's runs every 30 minutes, an hour behind).
 */
const aggregateCompressAfterHours = 2;

/**
 * How often the raw samples' compression job runs: a head chunk waits for it after
 * `COMPRESS_AFTER_HOURS` (half this on average), unindexed and scanned whole by every read of
 * a few series until then (head-chunks.ts), at ~60 bytes an uncompressed row against ~3
 * compressed; each run that finds nothing to compress costs a catalog lookup.
 */
const rawCompressionJobInterval = '1 minute';

/**
 * How often `consolidate_sample_chunks` looks for compressed chunks due a consolidation
 * (head-chunks.ts): a growing one at 1, 2 and 4 hours, and each once full; its merged batches
 * read and weigh more until then.
 */
const consolidationJobInterval = '30 minutes';

/** Tables made by migrations after the policies were first applied (see applyTimescalePolicies). */
const laterTableNames = [
  'stale_markers',
  'unaggregated_samples',
  'exemplars',
  'histogram_chunks',
] as const;
type LaterTable = (typeof laterTableNames)[number];

function isLaterTable(table: string): table is LaterTable {
  return (laterTableNames as readonly string[]).includes(table);
}

type Job = { job_id: number; proc_name: string; hypertable_name: string; config: unknown };

/** The jobs applyTimescalePolicies creates: procedure and the table or view it works on. */
const expectedJobs = [
  ['policy_refresh_continuous_aggregate', 'samples_1m'],
  ['policy_refresh_continuous_aggregate', 'samples_1h'],
  ['policy_compression', 'samples'],
  ['policy_compression', 'samples_1m'],
  ['policy_compression', 'samples_1h'],
  ['policy_retention', 'samples'],
  ['policy_retention', 'snapshots'],
  ['policy_retention', 'samples_1m'],
  ['policy_retention', 'samples_1h'],
  ['policy_retention', 'stale_markers'],
  ['policy_retention', 'unaggregated_samples'],
  ['policy_retention', 'exemplars'],
  ['policy_retention', 'histogram_chunks'],
] as const;

/**
 * Whether a refresh job goes oldest batch first (see below): jobs made before that went newest
 * first, TimescaleDB's default, and are made again.
 */
function refreshesOldestFirst(config: unknown): boolean {
  return (
    typeof config === 'object' &&
    config !== null &&
    (config as Record<string, unknown>)['refresh_newest_first'] === false
  );
}

/**
 * (Re)creates every storage job from the policies: the refresh of each continuous aggregate not
 * retired yet (../retired-rollups.ts), compression of sample chunks older than
 * `compressAfterHours` and of the aggregates past their refresh windows, and retention of raw
 * samples (unaggregated ones too), staleness markers, snapshots and each aggregate. The server's job scheduler runs them; nothing here runs one.
 * Replaces only what differs from the stored policies, or when a job is missing (a migration
 * that re-created a table took its jobs along).
 */
export async function applyTimescalePolicies(
  sql: TransactionSql,
  policies: StoragePolicies,
  applied: StoragePolicies | undefined,
): Promise<void> {
  const jobs = await sql<Job[]>`
    select j.job_id, j.proc_name, coalesce(c.view_name, j.hypertable_name) as hypertable_name,
      j.config
    from timescaledb_information.jobs j
    left join timescaledb_information.continuous_aggregates c
      on c.materialization_hypertable_schema = j.hypertable_schema
      and c.materialization_hypertable_name = j.hypertable_name
    where j.hypertable_schema = current_schema()
      or c.view_schema = current_schema()
  `;
  // Migration 20 makes the aggregates compressible; a database migrated to an earlier version
  // (tests of older migrations) gets no compression job for them.
  const compressible = new Set(
    (
      await sql<{ view: string }[]>`
        select view_name as view from timescaledb_information.continuous_aggregates
        where view_schema = current_schema() and compression_enabled
      `
    ).map((row) => row.view),
  );
  // Migrations 21, 23, 38 and 39 make stale_markers, unaggregated_samples, histogram_chunks
  // (which go with the raw samples) and exemplars; a database at an earlier version has no job
  // for them.
  const laterTables = (
    await sql<{ table: LaterTable }[]>`
      select t as table from unnest(${laterTableNames}::text[]) as t
      where to_regclass(t) is not null
    `
  ).map((row) => row.table);
  // Migrations 36 and 37 retire samples_1m and samples_1h: no refresh job, their rows
  // compressed and dropped as before.
  const minuteRetired = (await rollupRetiredAtMs(sql, 'samples_1m')) !== undefined;
  const hourRetired = (await rollupRetiredAtMs(sql, 'samples_1h')) !== undefined;
  const retired = (table: string) =>
    (table === 'samples_1m' && minuteRetired) || (table === 'samples_1h' && hourRetired);
  const expected = expectedJobs.filter(
    ([proc, table]) =>
      (proc !== 'policy_refresh_continuous_aggregate' || !retired(table)) &&
      (proc !== 'policy_compression' || table === 'samples' || compressible.has(table)) &&
      (!isLaterTable(table) || laterTables.includes(table)),
  );
  // Migration 33 makes the head layout and its consolidation job's procedure.
  const [head] = await sql<{ consolidating: boolean; scheduled: boolean }[]>`
    select to_regprocedure('consolidate_sample_chunks(int, jsonb)') is not null as consolidating,
      exists (select from timescaledb_information.jobs
        where proc_schema = current_schema() and proc_name = 'consolidate_sample_chunks')
        as scheduled`;
  const consolidating = head?.consolidating === true;
  const complete =
    expected.every(([proc, table]) =>
      jobs.some((job) => job.proc_name === proc && job.hypertable_name === table),
    ) &&
    (!consolidating || head?.scheduled === true) &&
    jobs
      .filter((job) => job.proc_name === 'policy_refresh_continuous_aggregate')
      .every((job) => refreshesOldestFirst(job.config));
  if (complete && applied !== undefined && samePolicies(applied, policies)) return;

  const windows = refreshWindows(policies);
  const every = (defaultInterval: string) =>
    policies.jobIntervalSeconds === undefined
      ? sql`${defaultInterval}::interval`
      : sql`make_interval(secs => ${policies.jobIntervalSeconds}::int)`;
  // Since migration 24 the raw samples' time, and so the aggregates' buckets, are epoch
  // milliseconds: their jobs take offsets in milliseconds; the other tables' in intervals.
  const [samplesTime] = await sql<{ integer: boolean }[]>`
    select format_type(a.atttypid, null) = 'bigint' as integer
    from pg_attribute a where a.attrelid = 'samples'::regclass and a.attname = 'time'`;
  const integerTime = samplesTime?.integer === true;
  const hours = (value: number) =>
    integerTime
      ? sql`${Math.round(value * hourMs)}::bigint`
      : sql`make_interval(hours => ${value}::int)`;
  const days = (table: string, value: number) =>
    integerTime && ['samples', 'samples_1m', 'samples_1h'].includes(table)
      ? sql`${value * 24 * hourMs}::bigint`
      : sql`make_interval(days => ${value}::int)`;

  for (const view of ['samples_1h', 'samples_1m'] as const) {
    await sql`select remove_continuous_aggregate_policy(${view}::regclass, if_exists => true)`;
    await sql`select remove_retention_policy(${view}::regclass, if_exists => true)`;
    await sql`select remove_compression_policy(${view}::regclass, if_exists => true)`;
  }
  for (const table of ['samples', 'snapshots', ...laterTables]) {
    await sql`select remove_retention_policy(${table}::regclass, if_exists => true)`;
  }
  await sql`select remove_compression_policy('samples'::regclass, if_exists => true)`;

  // The refreshes start one interval after they are made, not at once: a refresh while later
  // migrations still run (or while a test template is being made) would materialize nothing
  // and move the watermark past every sample written after it (the real-time part of an
  // aggregate shows only what lies past its watermark, until the next refresh).
  const minuteEndOffset = integerTime
    ? sql`${Math.max(windows.samples_1m.endHours * hourMs, 60_000)}::bigint`
    : sql`greatest(${hours(windows.samples_1m.endHours)}, interval '1 minute')`;
  // Oldest batch first: a refresh commits batch by batch and each moves the watermark to what
  // it materialized, so TimescaleDB's default (newest first) hid the older buckets of a long
  // window from readers until the last batch committed: below the watermark, yet not stored.
  if (!minuteRetired) {
    await sql`
    select add_continuous_aggregate_policy('samples_1m'::regclass,
      start_offset => ${hours(windows.samples_1m.startHours)},
      end_offset => ${minuteEndOffset},
      schedule_interval => ${every('1 hour')}, initial_start => now() + ${every('1 hour')},
      refresh_newest_first => false)
  `;
  }
  if (!hourRetired) {
    await sql`
    select add_continuous_aggregate_policy('samples_1h'::regclass,
      start_offset => ${hours(windows.samples_1h.startHours)}, end_offset => ${hours(1)},
      schedule_interval => ${every('30 minutes')}, initial_start => now() + ${every('30 minutes')},
      refresh_newest_first => false)
  `;
  }
  // A head chunk waits a little past its end (head-chunks.ts) when nothing else is asked.
  const rawCompressAfter =
    integerTime && policies.compressAfterHours * hourMs < headCompressLagMs
      ? sql`${headCompressLagMs}::bigint`
      : hours(policies.compressAfterHours);
  await sql`
    select add_compression_policy('samples'::regclass,
      compress_after => ${rawCompressAfter},
      schedule_interval => ${every(rawCompressionJobInterval)})
  `;
  if (consolidating) {
    await sql`select delete_job(job_id) from timescaledb_information.jobs
      where proc_schema = current_schema() and proc_name = 'consolidate_sample_chunks'`;
    await sql`
      select add_job('consolidate_sample_chunks', ${every(consolidationJobInterval)},
        initial_start => now() + ${every(consolidationJobInterval)})
    `;
  }
  // An aggregate's chunks are compressed soon after they ended, not past the refresh window:
  // with a week's window a week of samples_1m stayed uncompressed, ~68 bytes per raw sample
  // against ~11.5 compressed (docs/benchmarks/storage.md, "Storage"). TimescaleDB accepts that since
  // 2.19 (timescaledb#7656: compressed chunks take the refresh's deletes and inserts); a late
  // sample's buckets are rewritten in the compressed chunk, which the job compresses again.
  for (const view of ['samples_1m', 'samples_1h'] as const) {
    if (!compressible.has(view)) continue;
    // samples_1m's newest materialized bucket is its window's end old.
    const after = aggregateCompressAfterHours + windows[view].endHours;
    await sql`
      select add_compression_policy(${view}::regclass,
        compress_after => ${hours(after)}, schedule_interval => ${every('1 hour')})
    `;
  }
  const retention: [string, number][] = [
    ['samples', policies.rawRetentionDays],
    ['snapshots', policies.snapshotRetentionDays],
    ['samples_1m', policies.rollup1mRetentionDays],
    ['samples_1h', policies.rollup1hRetentionDays],
  ];
  // Markers end series of the raw samples, and unaggregated samples and histograms are raw
  // samples: they go with them. Exemplars have a retention of their own.
  for (const table of laterTables) {
    retention.push([
      table,
      table === 'exemplars' ? policies.exemplarRetentionDays : policies.rawRetentionDays,
    ]);
  }
  for (const [table, keepDays] of retention) {
    await sql`
      select add_retention_policy(${table}::regclass, drop_after => ${days(table, keepDays)},
        schedule_interval => ${every('1 hour')})
    `;
  }
}

function samePolicies(a: StoragePolicies, b: StoragePolicies): boolean {
  return (
    a.rawRetentionDays === b.rawRetentionDays &&
    a.snapshotRetentionDays === b.snapshotRetentionDays &&
    a.exemplarRetentionDays === b.exemplarRetentionDays &&
    a.rollup1mRetentionDays === b.rollup1mRetentionDays &&
    a.rollup1hRetentionDays === b.rollup1hRetentionDays &&
    a.compressAfterHours === b.compressAfterHours &&
    a.jobIntervalSeconds === b.jobIntervalSeconds
  );
}
