import type { Database } from '../core/database.js';
import { refreshOptions } from '../storage/timescale/aggregate-refresh.js';

/**
 * Maintenance by hand, for a run that measures sizes and reads rather than the scheduler: the
 * policies' jobs paused, and their work (refresh, compress, drop, vacuum) done when asked.
 */

/** Stops every policy job of the database, so nothing runs while a load is written and measured. */
export async function pausePolicyJobs(db: Database): Promise<void> {
  await db.sql`
    select alter_job(job_id, scheduled => false)
    from timescaledb_information.jobs
    where hypertable_name is not null
  `;
}

const aggregateViews = ['samples_1m', 'samples_1h'] as const;
/** A continuous aggregate of the samples, by its view's name. */
type AggregateView = (typeof aggregateViews)[number];

/**
 * A refresh of each aggregate, in order (the hourly one reads the minute one), over its whole
 * range or up to `until`. Outside a transaction, as TimescaleDB requires.
 */
export async function refreshAggregates(
  db: Database,
  views: readonly AggregateView[],
  until?: Date,
): Promise<void> {
  for (const view of views) {
    if (!aggregateViews.includes(view)) throw new Error(`not an aggregate: ${String(view)}`);
    await db.sql`call refresh_continuous_aggregate(${view}::regclass, null,
      ${until === undefined ? db.sql`null` : db.sql`${until}`},
      options => ${refreshOptions(db.sql)})`;
  }
}

/**
 * Compresses every chunk of `relation` (a hypertable or an aggregate) that ends by `olderThan`,
 * given in the time dimension's own type (epoch milliseconds for the samples and their
 * aggregates since migration 24); resolves the chunks it went through.
 */
export async function compressOlderChunks(
  db: Database,
  relation: string,
  olderThan: Date,
): Promise<number> {
  const [dimension] = await db.sql<{ integer: boolean }[]>`
    select d.integer_interval is not null as integer
    from timescaledb_information.dimensions d
    where (d.hypertable_schema, d.hypertable_name) in (
      select hypertable_schema, hypertable_name from timescaledb_information.hypertables
      where hypertable_schema = current_schema() and hypertable_name = ${relation}
      union all
      select materialization_hypertable_schema, materialization_hypertable_name
      from timescaledb_information.continuous_aggregates
      where view_schema = current_schema() and view_name = ${relation})`;
  const bound =
    dimension?.integer === true
      ? db.sql`${olderThan.getTime()}::bigint`
      : db.sql`${olderThan}::timestamptz`;
  const rows = await db.sql`
    select compress_chunk(c, if_not_compressed => true)
    from show_chunks(${relation}::regclass, older_than => ${bound}) c
  `;
  return rows.length;
}

/**
 * Runs `consolidate_sample_chunks` (storage/timescale/head-chunks.ts) as its job would: every
 * compressed samples chunk that no head chunk merges into any more, recompressed once.
 */
export async function consolidateSampleChunks(db: Database): Promise<void> {
  await db.sql`call consolidate_sample_chunks(0, null)`;
}

/**
 * Recompresses every compressed samples chunk in memory, the newest too, which its job leaves
 * until it is full: what the consolidated layout weighs, measured on a short history.
 */
export async function recompressSampleChunks(db: Database): Promise<number> {
  const rows = await db.sql`
    select compress_chunk(format('%I.%I', chunk_schema, chunk_name)::regclass, recompress => true)
    from timescaledb_information.chunks
    where hypertable_schema = current_schema() and hypertable_name = 'samples' and is_compressed
  `;
  return rows.length;
}

/** Drops the raw samples' chunks older than `olderThan`, in the float8 layout's timestamptz time. */
export async function dropTimestampRawChunks(db: Database, olderThan: Date): Promise<void> {
  await db.sql`select drop_chunks('samples', older_than => ${olderThan}::timestamptz)`;
}

/**
 * What autovacuum would have done by now: statistics for the planner and dead row versions
 * made reusable. The whole database, or the listed tables.
 */
export async function vacuumAnalyze(db: Database, tables?: readonly string[]): Promise<void> {
  if (tables === undefined) await db.sql`vacuum analyze`;
  else await db.sql`vacuum analyze ${db.sql(tables as string[])}`;
}

/** The storage move's steps that finished. */
export async function listFinishedStorageMoves(db: Database): Promise<string[]> {
  const rows = await db.sql<{ step: string }[]>`
    select step from storage_moves where finished_at is not null`;
  return rows.map((row) => row.step);
}
