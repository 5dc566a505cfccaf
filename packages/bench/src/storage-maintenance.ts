import type { Database } from '@monitor/db';

/**
 * The bench's own maintenance steps (by hand: this measures sizes, not the scheduler), and the
 * storage proposal applied to the bench's database: the continuous aggregates made again with
 * a chunk interval of their own and compression, exactly as the schema would declare them.
 */

/** The proposed aggregates, built beside the shipped ones, then swapped in under their names. */
export const proposedRollups = ['samples_1m_proposed', 'samples_1h_proposed'] as const;

/** What the proposal changes, in words for the report. */
export const proposalChanges = [
  'samples_1m and samples_1h: chunk_interval 1 day (the default is 10 × the raw chunk interval, 10 days)',
  'both compressed: segmentby series_id, orderby bucket; every chunk but the newest compressed',
  '(compression policies added: 1 day for samples_1m, 3 days for samples_1h; paused like the others)',
];

const aggregateOptions = `timescaledb.continuous, timescaledb.materialized_only = false,
  timescaledb.chunk_interval = '1 day'`;
/** TimescaleDB takes compression settings of an aggregate only once it exists. */
const compressionOptions = `timescaledb.compress,
  timescaledb.compress_segmentby = 'series_id', timescaledb.compress_orderby = 'bucket'`;

/**
 * The statements of the proposal, as the rollups migration would run them: the same queries
 * as the shipped aggregates, with their own chunk interval and compression.
 */
function proposalStatements(names: { minute: string; hour: string }): string[] {
  return [
    `create materialized view ${names.minute} with (${aggregateOptions}) as
      select time_bucket(interval '1 minute', time) as bucket, series_id,
        avg(value) as avg, min(value) as min, max(value) as max,
        count(*) as count, sum(value) as sum
      from samples
      group by 1, 2
      with no data`,
    `create materialized view ${names.hour} with (${aggregateOptions}) as
      select time_bucket(interval '1 hour', bucket) as bucket, series_id,
        sum(sum) / sum(count) as avg, min(min) as min, max(max) as max,
        sum(count)::bigint as count, sum(sum) as sum
      from ${names.minute}
      group by 1, 2
      with no data`,
    `alter materialized view ${names.minute} set (${compressionOptions})`,
    `alter materialized view ${names.hour} set (${compressionOptions})`,
    // TimescaleDB wants compress_after past the refresh policy's start_offset (2 hours for the
    // minutes, 2 days for the hours), so a refresh never rewrites compressed buckets.
    `select add_compression_policy('${names.minute}', compress_after => interval '1 day')`,
    `select add_compression_policy('${names.hour}', compress_after => interval '3 days')`,
  ];
}

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

/** Compresses every chunk of `relation` (a hypertable or an aggregate) that ends by `olderThan`. */
export async function compressOlderChunks(
  db: Database,
  relation: string,
  olderThan: Date,
): Promise<number> {
  const rows = await db.sql`
    select compress_chunk(c, if_not_compressed => true)
    from show_chunks(${relation}::regclass, older_than => ${olderThan}::timestamptz) c
  `;
  return rows.length;
}

/** Creates the proposed aggregates (their policies paused at once) and refreshes them in full. */
export async function applyProposal(db: Database): Promise<void> {
  const [minute, hour] = proposedRollups;
  for (const statement of proposalStatements({ minute, hour })) await db.sql.unsafe(statement);
  await pauseJobs(db);
  await refreshRollups(db, proposedRollups);
}

/** Drops the shipped aggregates and gives the proposed ones their names. */
export async function swapInProposal(db: Database): Promise<void> {
  const [minute, hour] = proposedRollups;
  await db.sql.begin(async (sql) => {
    await sql`drop materialized view samples_1h`;
    await sql`drop materialized view samples_1m`;
    await sql.unsafe(`alter materialized view ${minute} rename to samples_1m`);
    await sql.unsafe(`alter materialized view ${hour} rename to samples_1h`);
  });
}
