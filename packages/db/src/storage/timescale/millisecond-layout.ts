import type { TransactionSql } from '../../core/database.js';
import { run } from '../ddl.js';
import { hourMs } from '../rollups.js';
import {
  movingRawScaledSamplesFunction,
  movingReadFunctions,
  previousLayout,
  rawScaledSamplesFunction,
  readFunctions,
} from './read-functions.js';
import { materializationTable } from './tables.js';

/**
 * The raw samples' chunk interval since migration 24. A chunk is compressed whole once it
 * ended and `COMPRESS_AFTER_HOURS` passed: with daily chunks a day to two stayed uncompressed at
 * ~100 bytes a row, more than the whole compressed month (docs/benchmarks/storage.md, "Storage"). Small
 * chunks keep that window small; much smaller ones give each series too few rows per
 * compressed batch for compression to work well (measured in the same place).
 */
const rawChunkIntervalMs = 6 * hourMs;

/**
 * What TimescaleDB's policies take for "now" on a hypertable whose time is an integer: epoch
 * milliseconds.
 */
const epochMsNowFunction = `create or replace function unix_now_ms() returns bigint
  language sql stable parallel safe
  as $$ select (extract(epoch from now()) * 1000)::bigint $$`;

/**
 * By time, a BRIN index (as on plain PostgreSQL), not TimescaleDB's default btree: only the
 * aggregates' refresh reads the raw samples by time alone, and a chunk being written is in time
 * order, so a block range's bounds find its rows as well, where a btree took an insertion per
 * stored row (docs/benchmarks/compare.md, "Against VictoriaMetrics").
 */
const sampleTimeIndex = 'create index samples_time_idx on samples using brin (time)';

/**
 * `samples` since migration 24: time as epoch milliseconds (bigint), the value as a scaled
 * integer (`mantissa`, `scale`, storage/scaled-value.ts) or, when no scale holds it exactly,
 * as the float8 `value`. Compressed, each column is an integer that TimescaleDB stores with
 * delta-of-delta and simple8b: a scrape's jitter of a few milliseconds costs a few bits a
 * sample where a timestamptz's microseconds cost ten more, and a scaled value about half of
 * Gorilla's bytes (docs/benchmarks/storage.md, "Storage"). Agents' times are whole milliseconds
 * (remote-write's, and every time a Date holds), so nothing is lost.
 */
export const millisecondSamplesTable: readonly string[] = [
  epochMsNowFunction,
  `create table samples (
    time bigint not null,
    series_id bigint not null,
    value double precision,
    mantissa bigint,
    scale smallint
  )`,
  `select create_hypertable('samples', by_range('time', ${rawChunkIntervalMs}::bigint),
    create_default_indexes => false)`,
  sampleTimeIndex,
  `select set_integer_now_func('samples', 'unix_now_ms')`,
  // The dedup key: replays and an agent's own retries store each point once. It carries the
  // value columns, so that reading a series from the chunk still being written (PromQL, the
  // newest minutes of the history) is an index-only scan: that chunk's rows land time-major,
  // and a series' rows sit on as many heap pages as it has samples (docs/benchmarks/promql.md,
  // "PromQL"). It costs the uncompressed rows about 18 bytes each, a few hundredths of a
  // byte per sample at steady state.
  `create unique index samples_series_id_time_key on samples (series_id, time)
    include (mantissa, scale, value)`,
  // Compressed in ascending time, the order readers want: a series' batches then come out
  // already in order (delta-of-delta compresses either order the same).
  `alter table samples set (
    timescaledb.compress,
    timescaledb.compress_segmentby = 'series_id',
    timescaledb.compress_orderby = 'time'
  )`,
];

/** A sample's value, decoded (storage/scaled-value.ts). */
const value = 'sample_value(mantissa, scale, value)';

/**
 * samples_1m and samples_1h over the millisecond layout, both from the raw samples, real-time
 * (materialized_only = false: what the refresh has not materialized yet is computed from the
 * raw samples). No average is stored: readers divide the sum by the count (read-functions.ts),
 * as the average itself was computed, so each bucket's average is the same double, and an
 * aggregate's compressed rows are a column smaller. samples_1h is not built on samples_1m:
 * samples_1m is materialized only for minutes about to leave the raw retention (policies.ts),
 * and TimescaleDB refreshes a hierarchical aggregate only up to what its parent materialized.
 */
export const millisecondAggregates: readonly string[] = (
  [
    ['samples_1m', 60_000],
    ['samples_1h', hourMs],
  ] as const
).map(
  ([view, bucketMs]) => `create materialized view ${view}
    with (timescaledb.continuous, timescaledb.materialized_only = false) as
    select time_bucket(${bucketMs}::bigint, time) as bucket, series_id,
      min(${value}) as min, max(${value}) as max, count(*) as count, sum(${value}) as sum
    from samples
    group by 1, 2
    with no data`,
);

/**
 * The aggregates' chunks and compression: a day of buckets a chunk, segmented by series. For
 * samples_1h a day is 24 rows a series, which compress a little worse than a week's 168
 * (0.34 against about 0.29 bytes per raw sample), but a week-long chunk waited three and a half
 * days on average before its compression, at 1.09 (docs/benchmarks/storage.md, "Storage"): a day is
 * about 0.03 bytes per raw sample less at steady state. Their materialization
 * hypertables get the raw samples' "now" too: their compression jobs need one (their retention
 * jobs take the raw hypertable's).
 */
export async function compressMillisecondAggregates(sql: TransactionSql): Promise<void> {
  for (const [view, intervalMs] of [
    ['samples_1m', 24 * hourMs],
    ['samples_1h', 24 * hourMs],
  ] as const) {
    const table = await materializationTable(sql, view);
    await sql`select set_chunk_time_interval(${table}::regclass, ${intervalMs}::bigint)`;
    await sql`select set_integer_now_func(${table}::regclass, 'unix_now_ms')`;
    await sql.unsafe(`alter materialized view ${view} set (timescaledb.compress,
      timescaledb.compress_segmentby = 'series_id', timescaledb.compress_orderby = 'bucket')`);
  }
}

/**
 * Version 24, TimescaleDB: the millisecond layout. A database with nothing stored gets it at
 * once. Otherwise nothing stored is copied here: the migration is one transaction, and copying
 * a big database in it would hold ingest off for its whole length. The previous `samples` and
 * its aggregates are kept, renamed (`…_v21`) and frozen (their jobs removed), new samples go to
 * the new layout from now on, and `storage_moves` records what a running service moves in
 * batches afterwards (stored-sample-move.ts): the raw samples, newest chunk first, then the
 * aggregates' materialized rows older than the new aggregates can compute. Readers read through
 * the read functions (read-functions.ts), which answer from both layouts until the move is done.
 */
export async function scaleSampleValues(sql: TransactionSql): Promise<void> {
  const stored = async (relation: string): Promise<boolean> => {
    const [row] = await sql.unsafe<{ any: boolean }[]>(
      `select exists (select from ${relation}) as any`,
    );
    return row?.any === true;
  };
  const previousRows =
    (await stored('samples')) ||
    (await stored(await materializationTable(sql, 'samples_1m'))) ||
    (await stored(await materializationTable(sql, 'samples_1h')));
  await run(sql, [
    `alter table samples rename to samples${previousLayout}`,
    `alter index samples_time_idx rename to samples${previousLayout}_time_idx`,
    `alter index samples_series_id_time_key rename to samples${previousLayout}_series_id_time_key`,
    `alter materialized view samples_1h rename to samples_1h${previousLayout}`,
    `alter materialized view samples_1m rename to samples_1m${previousLayout}`,
  ]);
  // Frozen: what the old objects hold now is what moves.
  for (const relation of ['samples_1h', 'samples_1m', 'samples']) {
    const old = `${relation}${previousLayout}`;
    if (relation !== 'samples') {
      await sql`select remove_continuous_aggregate_policy(${old}::regclass, if_exists => true)`;
    }
    await sql`select remove_compression_policy(${old}::regclass, if_exists => true)`;
    await sql`select remove_retention_policy(${old}::regclass, if_exists => true)`;
  }
  await run(sql, [...millisecondSamplesTable, ...millisecondAggregates]);
  await compressMillisecondAggregates(sql);
  if (!previousRows) {
    await run(sql, [
      `drop materialized view samples_1h${previousLayout}`,
      `drop materialized view samples_1m${previousLayout}`,
      `drop table samples${previousLayout}`,
      ...readFunctions,
    ]);
    return;
  }
  await sql`
    insert into storage_moves (step, before, moved_from)
    values ('samples', now(), now()), ('samples_1m', now(), null), ('samples_1h', now(), null)
  `;
  await run(sql, movingReadFunctions);
}

/**
 * Version 30: `raw_scaled_samples` (read-functions.ts), over both layouts while the samples of
 * migration 24 still move.
 */
export async function createScaledSampleReads(sql: TransactionSql): Promise<void> {
  const [moving] = await sql<{ any: boolean }[]>`
    select exists (select from storage_moves where step = 'samples' and finished_at is null) as any`;
  await sql.unsafe(
    moving?.any === true ? movingRawScaledSamplesFunction : rawScaledSamplesFunction,
  );
}

/**
 * Version 31: `samples`' time index made the BRIN index that the layout has since (see
 * `sampleTimeIndex`), where migration 24 made TimescaleDB's default btree.
 */
export async function indexSampleTimesByRange(sql: TransactionSql): Promise<void> {
  const [index] = await sql<{ method: string }[]>`
    select am.amname as method from pg_class c join pg_am am on am.oid = c.relam
    where c.oid = to_regclass('samples_time_idx')`;
  if (index?.method !== 'btree') return;
  await run(sql, ['drop index samples_time_idx', sampleTimeIndex]);
}
