import type { Queryable, TransactionSql } from '../core/database.js';
import { run } from './ddl.js';
import { rollupValueBound } from './rollups.js';
import { epochMs, timestamp } from './sql-time.js';
import type { StorageMode } from './storage-mode.js';

/*
 * Issue 57: samples_1m is retired (migration 36). Its 1-minute buckets beyond the raw retention
 * cost 2.6 times the raw samples they summarize (float8 min, max and sum per minute), while the
 * 5-minute tier (kept-tiers.ts) keeps the same 90 days exactly for a fifth of the raw bytes.
 * From the migration on nothing is materialized into it; what it holds stays readable until
 * ROLLUP_1M_RETENTION_DAYS drops it, so the history endpoint answers the same for it
 * (services/metric-history.ts). `retired_rollups` records where those rows end:
 * `samples_1m_buckets` computes the minutes from there on from the raw samples as they are read
 * (as the aggregate's real-time part did), and the history reads the 5-minute tier where the
 * raw samples are gone.
 */

const retiredRollupsTable = `create table retired_rollups (
  rollup text primary key,
  materialized_to_ms bigint not null,
  retired_at timestamptz not null default now()
)`;

/**
 * Migration 36 on TimescaleDB: the aggregate's refresh job goes and it shows only what it
 * materialized (its real-time part would compute the minutes from raw samples that are
 * going). Its compression and retention jobs stay (policies.ts). A database still moving the
 * aggregate of migration 24 (timescale/stored-sample-move.ts) keeps refreshing it until the move
 * is done, which then retires it (`retireMovedMinuteRollup`).
 */
export async function retireTimescaleMinuteRollup(sql: TransactionSql): Promise<void> {
  await run(sql, [retiredRollupsTable]);
  const [moving] = await sql<{ any: boolean }[]>`
    select exists (select from storage_moves where step = 'samples_1m' and finished_at is null)
      as any`;
  if (moving?.any !== true) await retireMinuteAggregate(sql);
}

/** The end of migration 24's move of samples_1m, once migration 36 asked for its retirement. */
export async function retireMovedMinuteRollup(sql: TransactionSql): Promise<void> {
  const [table] = await sql<{ exists: boolean }[]>`
    select to_regclass('retired_rollups') is not null as exists`;
  if (table?.exists === true) await retireMinuteAggregate(sql);
}

async function retireMinuteAggregate(sql: TransactionSql): Promise<void> {
  // An aggregate never refreshed has the smallest bigint as its watermark.
  await sql`
    insert into retired_rollups (rollup, materialized_to_ms)
    select 'samples_1m', greatest(_timescaledb_functions.cagg_watermark(c.mat_hypertable_id), 0)
    from _timescaledb_catalog.continuous_agg c
    where c.user_view_schema = current_schema() and c.user_view_name = 'samples_1m'`;
  await freezeMinuteAggregate(sql);
  await run(sql, [retiredMinuteBucketsFunction('timescale')]);
}

/** The aggregate's refresh job gone, its real-time part off (also after a conversion). */
export async function freezeMinuteAggregate(sql: TransactionSql): Promise<void> {
  await sql`select remove_continuous_aggregate_policy('samples_1m'::regclass, if_exists => true)`;
  await run(sql, [`alter materialized view samples_1m set (timescaledb.materialized_only = true)`]);
}

/** Migration 36 on plain PostgreSQL: the refresh stops at the table's watermark. */
export async function recordPostgresMinuteRollupRetired(sql: TransactionSql): Promise<void> {
  await run(sql, [retiredRollupsTable]);
  await sql`
    insert into retired_rollups (rollup, materialized_to_ms)
    select 'samples_1m', coalesce(
      (select greatest((extract(epoch from watermark) * 1000)::bigint, 0) from rollup_watermarks
        where rollup = 'samples_1m'), 0)`;
  await run(sql, [retiredMinuteBucketsFunction('postgres')]);
}

/**
 * Where samples_1m's materialized rows end (epoch milliseconds), or undefined while it is
 * refreshed (a database before migration 36).
 */
export async function minuteRollupRetiredAtMs(sql: Queryable): Promise<number | undefined> {
  // Two statements: one naming a table that does not exist fails as it is parsed.
  const [table] = await sql<{ exists: boolean }[]>`
    select to_regclass('retired_rollups') is not null as exists`;
  if (table?.exists !== true) return undefined;
  const [row] = await sql<{ to_ms: string }[]>`
    select materialized_to_ms::text as to_ms from retired_rollups where rollup = 'samples_1m'`;
  return row === undefined ? undefined : Number(row.to_ms);
}

/**
 * `samples_1m_buckets` (timescale/read-functions.ts states its contract) once samples_1m is
 * retired: its materialized minutes before `materialized_to_ms`, then the minutes of the raw
 * samples. The raw part's bounds are times, so the planner prunes chunks and partitions by
 * them.
 */
export function retiredMinuteBucketsFunction(mode: StorageMode): string {
  const retiredAt = `(select r.materialized_to_ms from retired_rollups r where r.rollup = 'samples_1m')`;
  const bucketMs = mode === 'timescale' ? 'n.bucket' : epochMs('n.bucket');
  const bucketBefore = (ms: string) =>
    mode === 'timescale' ? `n.bucket < ${ms}` : `n.bucket < ${timestamp(ms)}`;
  const bucketFrom =
    mode === 'timescale' ? 'n.bucket >= from_ms' : `n.bucket >= ${timestamp('from_ms')}`;
  // Clamped as each engine's minutes were: the plain refresh clamps (rollupValueBound), the
  // continuous aggregate did not.
  const rawValue =
    mode === 'timescale'
      ? 's.value'
      : `least(greatest(s.value, ${-rollupValueBound}::float8), ${rollupValueBound}::float8)`;
  return `create or replace function samples_1m_buckets(
    series_ids bigint[], from_ms bigint, to_ms bigint)
  returns table (bucket_ms bigint, series_id bigint, avg double precision,
    min double precision, max double precision, count bigint, sum double precision)
  language sql stable
  as $$ select ${bucketMs}, n.series_id, n.sum / n.count, n.min, n.max, n.count, n.sum
    from samples_1m n
    where n.series_id = any(series_ids) and ${bucketFrom} and ${bucketBefore('to_ms')}
      and ${bucketBefore(retiredAt)}
    union all
    select r.time_ms / 60000 * 60000, r.series_id, sum(r.v) / count(*), min(r.v), max(r.v),
      count(*), sum(r.v)
    from (
      select s.series_id, s.time_ms, ${rawValue} as v
      from raw_samples(series_ids, greatest(from_ms, ${retiredAt}), to_ms - 1) s
    ) r
    group by 1, 2 $$`;
}
