import type { Queryable, TransactionSql } from '../core/database.js';
import { run } from './ddl.js';
import type { Rollup } from './rollups.js';
import { hourMs, minuteMs, rollupValueBound } from './rollups.js';
import { epochMs, timestamp } from './sql-time.js';
import type { StorageMode } from './storage-mode.js';

/*
 * Issue 57: the materialized rollups are retired, samples_1m by migration 36 and samples_1h by
 * migration 37. Per raw sample they summarize they cost more than the samples themselves
 * (float8 min, max and sum per bucket: 2.6 times for the minutes beyond the raw retention, and
 * samples_1h alone 0.37 bytes a raw sample within it, a tenth of the raw samples), while the
 * kept tiers (kept-tiers.ts) keep the same history exactly for a fifth of the raw bytes (5
 * minutes) and a fortieth (1 hour). From the migration on nothing is materialized into a retired
 * rollup; what it holds stays readable until its retention (ROLLUP_1M_RETENTION_DAYS,
 * ROLLUP_1H_RETENTION_DAYS) drops it, so the history endpoint answers the same for it
 * (services/metric-history.ts). `retired_rollups` records where its rows end: `<rollup>_buckets`
 * computes the buckets from there on from the raw samples as they are read (as the aggregate's
 * real-time part did), and the history reads the rollup's tier where the raw samples are gone.
 */

const retiredRollupsTable = `create table if not exists retired_rollups (
  rollup text primary key,
  materialized_to_ms bigint not null,
  retired_at timestamptz not null default now()
)`;

/** The migration that retires each rollup. */
const retiringMigration: Record<Rollup, number> = { samples_1m: 36, samples_1h: 37 };

/**
 * The retiring migration on TimescaleDB: the aggregate's refresh job goes and it shows only what
 * it materialized (its real-time part would compute the buckets from raw samples that are
 * going). Its compression and retention jobs stay (policies.ts). A database still moving the
 * aggregate of migration 24 (timescale/stored-sample-move.ts) keeps refreshing it until the move
 * is done, which then retires it (`retireMovedRollup`).
 */
export async function retireTimescaleRollup(sql: TransactionSql, rollup: Rollup): Promise<void> {
  await run(sql, [retiredRollupsTable]);
  const [moving] = await sql<{ any: boolean }[]>`
    select exists (select from storage_moves where step = ${rollup} and finished_at is null)
      as any`;
  if (moving?.any !== true) await retireAggregate(sql, rollup);
  // Migration 36's samples_1m_buckets named its bound in a sub-select (see
  // retiredBucketsFunction): written again with the constant.
  await writeRetiredBucketsFunctions(sql, 'timescale');
}

/** Every retired rollup's `<rollup>_buckets`, as retiredBucketsFunction makes it. */
export async function writeRetiredBucketsFunctions(
  sql: TransactionSql,
  mode: StorageMode,
): Promise<void> {
  const retired = await sql<{ rollup: Rollup; to_ms: string }[]>`
    select rollup, materialized_to_ms::text as to_ms from retired_rollups order by rollup`;
  await run(
    sql,
    retired.map((row) => retiredBucketsFunction(row.rollup, mode, Number(row.to_ms))),
  );
}

/** The end of migration 24's move of a rollup, once its retiring migration asked for it. */
export async function retireMovedRollup(sql: TransactionSql, rollup: Rollup): Promise<void> {
  const [asked] = await sql<{ applied: boolean }[]>`
    select to_regclass('retired_rollups') is not null
      and exists (select from schema_migrations where version = ${retiringMigration[rollup]})
      as applied`;
  if (asked?.applied === true) await retireAggregate(sql, rollup);
}

async function retireAggregate(sql: TransactionSql, rollup: Rollup): Promise<void> {
  // An aggregate never refreshed has the smallest bigint as its watermark.
  await sql`
    insert into retired_rollups (rollup, materialized_to_ms)
    select ${rollup}, greatest(_timescaledb_functions.cagg_watermark(c.mat_hypertable_id), 0)
    from _timescaledb_catalog.continuous_agg c
    where c.user_view_schema = current_schema() and c.user_view_name = ${rollup}`;
  await freezeAggregate(sql, rollup);
  await writeRetiredBucketsFunctions(sql, 'timescale');
}

/** The aggregate's refresh job gone, its real-time part off (also after a conversion). */
export async function freezeAggregate(sql: TransactionSql, rollup: Rollup): Promise<void> {
  await sql`select remove_continuous_aggregate_policy(${rollup}::regclass, if_exists => true)`;
  await run(sql, [`alter materialized view ${rollup} set (timescaledb.materialized_only = true)`]);
}

/** The retiring migration on plain PostgreSQL: the refresh stops at the table's watermark. */
export async function recordPostgresRollupRetired(
  sql: TransactionSql,
  rollup: Rollup,
): Promise<void> {
  await run(sql, [retiredRollupsTable]);
  await sql`
    insert into retired_rollups (rollup, materialized_to_ms)
    select ${rollup}, coalesce(
      (select greatest((extract(epoch from watermark) * 1000)::bigint, 0) from rollup_watermarks
        where rollup = ${rollup}), 0)`;
  await writeRetiredBucketsFunctions(sql, 'postgres');
}

/**
 * Where a rollup's materialized rows end (epoch milliseconds), or undefined while it is
 * refreshed (a database before its retiring migration).
 */
export async function rollupRetiredAtMs(
  sql: Queryable,
  rollup: Rollup,
): Promise<number | undefined> {
  // Two statements: one naming a table that does not exist fails as it is parsed.
  const [table] = await sql<{ exists: boolean }[]>`
    select to_regclass('retired_rollups') is not null as exists`;
  if (table?.exists !== true) return undefined;
  const [row] = await sql<{ to_ms: string }[]>`
    select materialized_to_ms::text as to_ms from retired_rollups where rollup = ${rollup}`;
  return row === undefined ? undefined : Number(row.to_ms);
}

const bucketWidth: Record<Rollup, number> = { samples_1m: minuteMs, samples_1h: hourMs };

/**
 * `<rollup>_buckets` (timescale/read-functions.ts states its contract) once the rollup is
 * retired: its materialized buckets before `retiredAtMs` (its `materialized_to_ms`), then the
 * buckets of the raw samples. That bound is written into the function as a constant: a
 * sub-select in `raw_samples`' arguments kept PostgreSQL from inlining it, and the function's
 * rows were then gathered before they were grouped (60 ms for one series' 30 days, against 4
 * for the same hours materialized). The raw part's bounds are times, so the planner prunes
 * chunks and partitions by them.
 */
function retiredBucketsFunction(rollup: Rollup, mode: StorageMode, retiredAtMs: number): string {
  if (!Number.isSafeInteger(retiredAtMs)) throw new RangeError(`not a time: ${retiredAtMs}`);
  const retiredAt = `${retiredAtMs}::bigint`;
  const width = bucketWidth[rollup];
  const bucketMs = mode === 'timescale' ? 'n.bucket' : epochMs('n.bucket');
  const bucketBefore = (ms: string) =>
    mode === 'timescale' ? `n.bucket < ${ms}` : `n.bucket < ${timestamp(ms)}`;
  const bucketFrom =
    mode === 'timescale' ? 'n.bucket >= from_ms' : `n.bucket >= ${timestamp('from_ms')}`;
  // Clamped as each engine's buckets were: the plain refresh clamps (rollupValueBound), the
  // continuous aggregate did not.
  const rawValue =
    mode === 'timescale'
      ? 's.value'
      : `least(greatest(s.value, ${-rollupValueBound}::float8), ${rollupValueBound}::float8)`;
  return `create or replace function ${rollup}_buckets(
    series_ids bigint[], from_ms bigint, to_ms bigint)
  returns table (bucket_ms bigint, series_id bigint, avg double precision,
    min double precision, max double precision, count bigint, sum double precision)
  language sql stable
  as $$ select ${bucketMs}, n.series_id, n.sum / n.count, n.min, n.max, n.count, n.sum
    from ${rollup} n
    where n.series_id = any(series_ids) and ${bucketFrom} and ${bucketBefore('to_ms')}
      and ${bucketBefore(retiredAt)}
    union all
    select r.time_ms / ${width} * ${width}, r.series_id, sum(r.v) / count(*), min(r.v), max(r.v),
      count(*), sum(r.v)
    from (
      select s.series_id, s.time_ms, ${rawValue} as v
      from raw_samples(series_ids, greatest(from_ms, ${retiredAt}), to_ms - 1) s
    ) r
    group by 1, 2 $$`;
}
