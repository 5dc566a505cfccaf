import type { Database } from '@monitor/db';

/**
 * The bench's own maintenance steps, by hand: this measures sizes, not the scheduler. (The
 * aggregates' compression measured here as a proposal shipped as migration 20.)
 */

/** Stops every policy job of the database, so nothing runs while the bench loads and measures. */
export async function pauseJobs(db: Database): Promise<void> {
  await db.sql`
    select alter_job(job_id, scheduled => false)
    from timescaledb_information.jobs
    where hypertable_name is not null
  `;
}

/** A full refresh of each aggregate, in order (the hourly one reads the minute one). */
export async function refreshRollups(db: Database, views: readonly string[]): Promise<void> {
  for (const view of views) {
    // Outside a transaction, as TimescaleDB requires; `view` is one of our constant names.
    await db.sql.unsafe(`call refresh_continuous_aggregate('${view}', null, null)`);
  }
}

/**
 * Compresses every chunk of `relation` (a hypertable or an aggregate) that ends by `olderThan`,
 * given in the time dimension's own type (epoch milliseconds for the samples and their
 * aggregates since migration 24).
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
