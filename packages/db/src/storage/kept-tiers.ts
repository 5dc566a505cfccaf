import type { Database, Sql, TransactionSql } from '../core/database.js';
import { run } from './ddl.js';
import { hourMs, minuteMs } from './rollups.js';
import { storeSampleTierRowsQuery } from './sample-tiers.js';
import type { StorageMode, StoragePolicies } from './storage-mode.js';

/*
 * The rollup tiers kept beyond the raw retention (issue 57; docs/benchmarks/storage.md,
 * "Rollup tiers for issue 57"). While a bucket's raw samples are kept, a tier is computed from
 * them as it is read (sample-tiers.ts); a few hours before the raw retention drops them, the
 * writer's maintenance stores each tier's rows, and reads take those from then on. The rows are
 * the ones sample-tiers.ts computes, so an answer does not change when its buckets are stored:
 *
 * - `sample_tier_5m` keeps the last sample's time only as "at the bucket's end or the
 *   millisecond before" (its exact time cost more than every value of the row together), in
 *   7-day chunks;
 * - `sample_tier_1h` keeps it exactly, in 30-day chunks;
 * - on TimescaleDB both are hypertables compressed by series, ordered by bucket, a day at a
 *   time as they fill (compressFilledDays); on plain PostgreSQL they are plain tables.
 *
 * A sample that arrives after its bucket was stored (more than RAW_RETENTION_DAYS − 6 h late) is
 * kept raw until the retention drops it, but not in the tiers.
 *
 * Storing costs about 3 µs of database CPU per raw sample and tier on a 2-core machine (one
 * statement per tier, hour and 2,000 series; the raw samples' scan is a tenth of it, the window
 * functions and grouping the rest).
 *
 * `tier_fills` holds, per tier, the buckets stored for every series (ending in
 * `(filled_from_ms, filled_to_ms]`), and within the next window the last series id done (`series_cursor`): the
 * fill commits a batch of series at a time and resumes after a crash where it stopped.
 */

export type KeptTier = {
  /** As `max_source_resolution` names it. */
  name: '5m' | '1h';
  table: 'sample_tier_5m' | 'sample_tier_1h';
  widthMs: number;
  /** Whether the last samples keep their own times (series-buckets.ts `exactTimes`). */
  exactTimes: boolean;
  /** TimescaleDB chunks: most reads of a few series touch one or two. */
  chunkMs: number;
  /** How long the tier is kept, in days. */
  retentionDays(policies: StoragePolicies): number;
};

const dayMs = 24 * hourMs;

/**
 * The tiers, finest first. The 5-minute tier takes the finer rollup's retention
 * (ROLLUP_1M_RETENTION_DAYS, 90 days by default), the hourly one ROLLUP_1H_RETENTION_DAYS.
 */
export const keptTiers: readonly KeptTier[] = [
  {
    name: '5m',
    table: 'sample_tier_5m',
    widthMs: 5 * minuteMs,
    exactTimes: false,
    chunkMs: 7 * dayMs,
    retentionDays: (policies) => policies.rollup1mRetentionDays,
  },
  {
    name: '1h',
    table: 'sample_tier_1h',
    widthMs: hourMs,
    exactTimes: true,
    chunkMs: 30 * dayMs,
    retentionDays: (policies) => policies.rollup1hRetentionDays,
  },
];

/** The tier of a width, if one is kept. */
export function keptTierOf(widthMs: number): KeptTier | undefined {
  return keptTiers.find((tier) => tier.widthMs === widthMs);
}

/**
 * How long before the raw retention drops a bucket's samples its tiers are stored: the writer's
 * maintenance (about every minute) may be stopped this long and lose nothing.
 */
const fillBeforeRawRetentionMs = 6 * hourMs;

/** Buckets are stored a window at a time (a multiple of every tier's width)… */
const fillWindowMs = hourMs;
/** …for this many series a transaction. */
const fillSeriesBatch = 2_000;

const tierColumns = `series_id bigint not null,
  bucket_ms bigint not null,
  count integer not null,
  scale smallint not null,
  sum bigint,
  min bigint,
  max bigint,
  last bigint,
  reset_sum bigint,
  last_ms bigint,
  stale_ms bigint`;

const fillsTable = `create table tier_fills (
  tier text primary key,
  filled_from_ms bigint not null,
  filled_to_ms bigint not null,
  series_cursor bigint not null default 0,
  compressed_to_ms bigint not null default 0,
  filled_at timestamptz not null default now()
)`;

/** Migration 35 on TimescaleDB. */
export async function createTimescaleKeptTiers(sql: TransactionSql): Promise<void> {
  for (const tier of keptTiers) {
    await run(sql, [
      `create table ${tier.table} (${tierColumns})`,
      `select create_hypertable('${tier.table}', by_range('bucket_ms', ${tier.chunkMs}::bigint))`,
      // The chunk being filled is read by series; compressed ones are segmented by it.
      `create index ${tier.table}_series_id_bucket_ms on ${tier.table} (series_id, bucket_ms)`,
      `alter table ${tier.table} set (
        timescaledb.compress,
        timescaledb.compress_segmentby = 'series_id',
        timescaledb.compress_orderby = 'bucket_ms'
      )`,
    ]);
  }
  await run(sql, [fillsTable]);
}

/** Migration 35 on plain PostgreSQL: rows appended in bucket order, pruned by bucket. */
export async function createPostgresKeptTiers(sql: TransactionSql): Promise<void> {
  for (const tier of keptTiers) {
    await run(sql, [
      `create table ${tier.table} (${tierColumns})`,
      `create index ${tier.table}_series_id_bucket_ms on ${tier.table} (series_id, bucket_ms)`,
      `create index ${tier.table}_bucket_ms on ${tier.table} using brin (bucket_ms)`,
    ]);
  }
  await run(sql, [fillsTable]);
}

/** What one fill run did. */
export type KeptTierUpkeep = {
  /** Per tier: where its stored buckets end after the run, and rows written. */
  filled: { tier: KeptTier['name']; filledToMs: number; rows: number }[];
  /** Chunks compressed (TimescaleDB) now that they are filled. */
  compressed: number;
  /** Chunks dropped (TimescaleDB) or rows deleted (plain) past the tiers' retention. */
  pruned: number;
};

/**
 * Stores each tier's buckets that end up to `fillBeforeRawRetentionMs` before the raw retention
 * drops them, at most `maxWindows` hours of buckets per tier and about `budgetMs` in all (a
 * backlog resumes next run), then compresses the chunks
 * filled and drops what is past each tier's retention. A tier never filled starts at the raw
 * retention's edge (older samples are going). Safe to run from several processes: a tier's
 * fill row is locked while a batch is written, and the batch commits with its cursor.
 */
export async function maintainKeptTiers(
  db: Database,
  options: {
    now: Date;
    policies: StoragePolicies;
    mode: StorageMode;
    maxWindows: number;
    /** Wall-clock time the run may spend storing, shared by the tiers; undefined: no limit. */
    budgetMs?: number;
  },
): Promise<KeptTierUpkeep> {
  const { now, policies, mode } = options;
  const rawEdgeMs = now.getTime() - policies.rawRetentionDays * dayMs;
  const horizonMs =
    Math.floor((rawEdgeMs + fillBeforeRawRetentionMs) / fillWindowMs) * fillWindowMs;
  const upkeep: KeptTierUpkeep = { filled: [], compressed: 0, pruned: 0 };
  for (const tier of keptTiers) {
    const startMs = Math.floor(rawEdgeMs / fillWindowMs) * fillWindowMs;
    let rows = 0;
    let windows = 0;
    let filledToMs = startMs;
    // Each tier its share, so that a long backlog of one does not starve the other.
    const deadline = performance.now() + (options.budgetMs ?? Infinity) / keptTiers.length;
    for (;;) {
      const step = await fillBatch(db, tier, { startMs, horizonMs });
      rows += step.rows;
      filledToMs = step.filledToMs;
      if (step.done) break;
      if (step.windowDone && ++windows >= options.maxWindows) break;
      if (performance.now() > deadline) break;
    }
    upkeep.filled.push({ tier: tier.name, filledToMs, rows });
    const cutoffMs = now.getTime() - tier.retentionDays(policies) * dayMs;
    if (mode === 'timescale') {
      upkeep.compressed += await compressFilledDays(db.sql, tier, filledToMs);
      upkeep.pruned += await dropChunksBefore(db.sql, tier, cutoffMs);
    } else {
      const deleted = await db.sql.unsafe(`delete from ${tier.table} where bucket_ms <= $1`, [
        cutoffMs,
      ]);
      upkeep.pruned += deleted.count;
    }
  }
  return upkeep;
}

/**
 * One transaction of the fill: the next batch of series of the window after `filled_to_ms`, or,
 * when no series is left, the window marked done.
 */
async function fillBatch(
  db: Database,
  tier: KeptTier,
  bounds: { startMs: number; horizonMs: number },
): Promise<{ rows: number; filledToMs: number; windowDone: boolean; done: boolean }> {
  return await db.sql.begin(async (sql) => {
    await sql`set local lock_timeout = '10s'`;
    // The statement is costed far above what it does: compiling it took longer than a batch's
    // sorts (in memory at this size) once it was run.
    await sql`set local jit = off`;
    await sql`set local work_mem = '64MB'`;
    await sql`
      insert into tier_fills (tier, filled_from_ms, filled_to_ms)
      values (${tier.name}, ${bounds.startMs}, ${bounds.startMs})
      on conflict (tier) do nothing`;
    const [fill] = await sql<{ filled_to_ms: string; series_cursor: string }[]>`
      select filled_to_ms::text, series_cursor::text from tier_fills
      where tier = ${tier.name} for update`;
    const filledToMs = Number(fill!.filled_to_ms);
    if (filledToMs + fillWindowMs > bounds.horizonMs) {
      return { rows: 0, filledToMs, windowDone: false, done: true };
    }
    // In the ids' order as numbers (the cursor compares them so), given back as text.
    const ids = (
      await sql<{ id: string }[]>`
        select s.id::text as id from series s where s.id > ${fill!.series_cursor}::bigint
        order by s.id limit ${fillSeriesBatch}`
    ).map((row) => row.id);
    if (ids.length === 0) {
      const next = filledToMs + fillWindowMs;
      await sql`
        update tier_fills set filled_to_ms = ${next}, series_cursor = 0, filled_at = now()
        where tier = ${tier.name}`;
      return { rows: 0, filledToMs: next, windowDone: true, done: false };
    }
    const written = await sql.unsafe(
      storeSampleTierRowsQuery(tier.widthMs, tier.table, tier.exactTimes),
      [filledToMs, filledToMs + fillWindowMs, ids],
    );
    await sql`
      update tier_fills set series_cursor = ${ids.at(-1)!}::bigint, filled_at = now()
      where tier = ${tier.name}`;
    return { rows: written.count, filledToMs, windowDone: false, done: false };
  });
}

/**
 * Compresses what the fill stored up to the last whole day before `filledToMs` (UTC), once a
 * day: the chunks that hold any of it, the one being filled too, which TimescaleDB recompresses
 * with what came since (a compressed chunk takes rows, kept apart until then). So at most a day
 * and a few hours of a tier sit uncompressed, about 10 times a compressed row's bytes, whatever
 * its chunks' length (docs/capacity.md).
 */
async function compressFilledDays(sql: Sql, tier: KeptTier, filledToMs: number): Promise<number> {
  const dayEndMs = Math.floor(filledToMs / dayMs) * dayMs;
  const [fill] = await sql<{ compressed_to_ms: string }[]>`
    select compressed_to_ms::text from tier_fills where tier = ${tier.name}`;
  const compressedToMs = Number(fill?.compressed_to_ms ?? dayEndMs);
  if (dayEndMs <= compressedToMs) return 0;
  const rows = await sql<{ chunk: string }[]>`
    select compress_chunk(format('%I.%I', chunk_schema, chunk_name)::regclass)::text as chunk
    from timescaledb_information.chunks
    where hypertable_schema = current_schema() and hypertable_name = ${tier.table}
      and range_end_integer > ${compressedToMs} and range_start_integer < ${dayEndMs}
    order by range_start_integer`;
  await sql`update tier_fills set compressed_to_ms = ${dayEndMs} where tier = ${tier.name}`;
  return rows.length;
}

async function dropChunksBefore(sql: Sql, tier: KeptTier, cutoffMs: number) {
  const rows = await sql.unsafe<{ chunk: string }[]>(
    `select drop_chunks('${tier.table}', older_than => $1::bigint)::text as chunk`,
    [cutoffMs],
  );
  return rows.length;
}

/** Where a tier's stored buckets end (0 where none are stored yet). */
export async function readFilledToMs(sql: Sql, tier: KeptTier): Promise<number> {
  const [row] = await sql<{ filled_to_ms: string }[]>`
    select filled_to_ms::text from tier_fills where tier = ${tier.name}`;
  return row === undefined ? 0 : Number(row.filled_to_ms);
}

/** The buckets each tier has stored, `(fromMs, toMs]`, of the tiers that stored any. */
export async function readFilledRanges(
  sql: Sql,
): Promise<{ tier: KeptTier; fromMs: number; toMs: number }[]> {
  const rows = await sql<{ tier: string; from_ms: string; to_ms: string }[]>`
    select tier, filled_from_ms::text as from_ms, filled_to_ms::text as to_ms from tier_fills
    where filled_to_ms > filled_from_ms`;
  return keptTiers.flatMap((tier) => {
    const row = rows.find((r) => r.tier === tier.name);
    return row === undefined
      ? []
      : [{ tier, fromMs: Number(row.from_ms), toMs: Number(row.to_ms) }];
  });
}
