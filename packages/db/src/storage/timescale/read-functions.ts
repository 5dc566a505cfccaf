/**
 * Readers of stored samples (PromQL, remote read, the metrics history, investigations) read
 * through three SQL functions, never through the tables, because the tables differ by engine
 * and, during a storage move, by layout:
 *
 * - `raw_samples(series_ids, from_ms, to_ms)`: `(series_id, time_ms, value)` of every sample of
 *   those series with `from_ms ≤ time_ms ≤ to_ms`, each value decoded exactly as stored
 *   (`sample_value`), each (series, millisecond) once, in no particular order;
 * - `raw_scaled_samples(series_ids, from_ms, to_ms)`: the same samples as `(series_id, time_ms,
 *   scaled, value)`, for readers that decode values themselves (series/scaled-codes.ts): `scaled`
 *   is `mantissa × 128 + scale + 64` for a value stored as a scaled integer (its low 7 bits the
 *   scale, never 0), `value` null; otherwise `scaled` is null and `value` the float8. Decoding in
 *   SQL (`sample_value`) was a fifth of the server's time for a PromQL read;
 * - `samples_1m_buckets(…)` and `samples_1h_buckets(…)`: `(bucket_ms, series_id, avg, min, max,
 *   count, sum)` of the buckets starting in `[from_ms, to_ms)`, real-time (complete up to the
 *   newest sample). Since migrations 36 and 37 both are ../retired-rollups.ts's: the buckets
 *   the rollup materialized, then those of the raw samples.
 *
 * Times are epoch milliseconds. Each function is one SQL statement (language sql, stable, not
 * strict), which PostgreSQL inlines into the caller's query: the caller's bounds prune chunks
 * and partitions as if it named the tables itself.
 */

import { scaledCode, scaledValue } from '../scaled-code.js';
import { epochMs, timestamp } from '../sql-time.js';

/*
 * This file: those functions on TimescaleDB, over the millisecond layout of migration 24, made
 * again when a storage move finishes a step. postgres/read-functions.ts: on plain PostgreSQL.
 */

/** The `samples` layout before migration 24 (timestamptz, float8), kept while it moves. */
export const previousLayout = '_v21';

const rawSignature = `raw_samples(series_ids bigint[], from_ms bigint, to_ms bigint)
  returns table (series_id bigint, time_ms bigint, value double precision)
  language sql stable`;

const newRawRows = `select s.series_id, s.time, sample_value(s.mantissa, s.scale, s.value)
    from samples s
    where s.series_id = any(series_ids) and s.time >= from_ms and s.time <= to_ms`;

/** `raw_samples` once every stored sample is in the millisecond layout. */
export const rawSamplesFunction = `create or replace function ${rawSignature}
  as $$ ${newRawRows} $$`;

const rawScaledSignature = `raw_scaled_samples(series_ids bigint[], from_ms bigint, to_ms bigint)
  returns table (series_id bigint, time_ms bigint, scaled bigint, value double precision)
  language sql stable`;

const newScaledRows = `select s.series_id, s.time, ${scaledCode('s')}, ${scaledValue('s')}
    from samples s
    where s.series_id = any(series_ids) and s.time >= from_ms and s.time <= to_ms`;

/** `raw_scaled_samples` once every stored sample is in the millisecond layout. */
export const rawScaledSamplesFunction = `create or replace function ${rawScaledSignature}
  as $$ ${newScaledRows} $$`;

type Rollup = 'samples_1m' | 'samples_1h';

const bucketSignature = (rollup: Rollup): string => `${rollup}_buckets(
    series_ids bigint[], from_ms bigint, to_ms bigint)
  returns table (bucket_ms bigint, series_id bigint, avg double precision,
    min double precision, max double precision, count bigint, sum double precision)
  language sql stable`;

const newBuckets = (rollup: Rollup, where = ''): string =>
  `select n.bucket, n.series_id, n.sum / n.count, n.min, n.max, n.count, n.sum
    from ${rollup} n
    where n.series_id = any(series_ids) and n.bucket >= from_ms and n.bucket < to_ms ${where}`;

/** `samples_1m_buckets` or `samples_1h_buckets` once the aggregate holds every bucket. */
export function bucketsFunction(rollup: Rollup): string {
  return `create or replace function ${bucketSignature(rollup)}
  as $$ ${newBuckets(rollup)} $$`;
}

/**
 * The raw move's state (stored-sample-move.ts), one row joined into a query as `m`: a chunk of
 * the previous layout moves series by series, newest chunk first, and a moved row stays in it
 * until the whole chunk is dropped.
 */
const moveState = `(select ${epochMs('moved_from')} as moved_from_ms,
    ${epochMs('chunk_start')} as chunk_start_ms, next_series_id, ${epochMs('before')} as before_ms
    from storage_moves where step = 'samples') m`;

/**
 * Where a series' raw samples stand in a move: those at or past the returned time are in the
 * new layout, those before it in the previous one.
 */
const boundaryMs = (series: string): string => `case
    when m.next_series_id is not null and ${series} < m.next_series_id then m.chunk_start_ms
    else m.moved_from_ms end`;

/**
 * The rows of the previous layout a reader still reads there while the samples move: each
 * series' rows below its boundary (see `boundaryMs`), except a sample stored again in the new
 * layout since (an agent's retry of an old sample), which is read from there. `values` are the
 * columns after `(series_id, time_ms)`, over the previous layout's float8 `o.value`.
 */
const previousLayoutRows = (
  values: string,
): string => `select o.series_id, ${epochMs('o.time')}, ${values}
    from samples${previousLayout} o cross join ${moveState}
    where o.series_id = any(series_ids)
      and o.time >= ${timestamp('from_ms')} and o.time <= ${timestamp('to_ms')}
      and ${epochMs('o.time')} < ${boundaryMs('o.series_id')}
      and not exists (select from samples n
        where n.series_id = o.series_id and n.time = ${epochMs('o.time')})`;

/** `raw_samples` while the samples of the previous layout move. */
const movingRawSamplesFunction = `create or replace function ${rawSignature}
  as $$ ${newRawRows}
    union all
    ${previousLayoutRows('o.value')} $$`;

/** `raw_scaled_samples` while the samples move: the previous layout's values are float8. */
export const movingRawScaledSamplesFunction = `create or replace function ${rawScaledSignature}
  as $$ ${newScaledRows}
    union all
    ${previousLayoutRows('null, o.value')} $$`;

/** The bucket width of each aggregate, in milliseconds. */
const bucketMs: Record<Rollup, number> = { samples_1m: 60_000, samples_1h: 3_600_000 };

/**
 * The buckets while a move is under way, per series:
 * - below the series' boundary, the previous layout's aggregate (its materialized rows, and
 *   its real-time part over the raw samples not moved yet);
 * - from the boundary up to the bucket of the migration, computed from the raw samples moved
 *   into the new layout: the new aggregate has not materialized them (they land below its
 *   watermark, and its refresh window may never reach them);
 * - from the bucket of the migration on, the new aggregate.
 */
function movingBucketsFunction(rollup: Rollup): string {
  const width = bucketMs[rollup];
  const migratedBucket = `m.before_ms / ${width} * ${width}`;
  const value = 'sample_value(s.mantissa, s.scale, s.value)';
  return `create or replace function ${bucketSignature(rollup)}
  as $$ select ${epochMs('o.bucket')}, o.series_id, o.avg, o.min, o.max, o.count, o.sum
    from ${rollup}${previousLayout} o cross join ${moveState}
    where o.series_id = any(series_ids)
      and o.bucket >= ${timestamp('from_ms')} and o.bucket < ${timestamp('to_ms')}
      and ${epochMs('o.bucket')} < ${boundaryMs('o.series_id')}
    union all
    select time_bucket(${width}::bigint, s.time), s.series_id, sum(${value}) / count(*),
      min(${value}), max(${value}), count(*), sum(${value})
    from samples s cross join ${moveState}
    where s.series_id = any(series_ids)
      and s.time >= (from_ms + ${width - 1}) / ${width} * ${width}
      and s.time < (to_ms + ${width - 1}) / ${width} * ${width}
      and s.time >= ${boundaryMs('s.series_id')} and s.time < ${migratedBucket}
    group by 1, 2
    union all
    ${newBuckets(rollup)}
      and n.bucket >= (select ${migratedBucket} from ${moveState}) $$`;
}

/** Every read function as a database in the middle of a move needs it. */
export const movingReadFunctions: readonly string[] = [
  movingRawSamplesFunction,
  movingRawScaledSamplesFunction,
  movingBucketsFunction('samples_1m'),
  movingBucketsFunction('samples_1h'),
];

/** Every read function over the millisecond layout alone. */
export const readFunctions: readonly string[] = [
  rawSamplesFunction,
  rawScaledSamplesFunction,
  bucketsFunction('samples_1m'),
  bucketsFunction('samples_1h'),
];
