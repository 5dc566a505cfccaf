import type { Sql } from '../core/database.js';
import { unscaled } from './scaled-value.js';
import { epochMs, timestamp } from './sql-time.js';

/**
 * The rows of a rollup tier: per series and bucket `(bucket_ms − width, bucket_ms]`, what
 * PromQL reads of the bucket's samples (promql's series-buckets.ts states the semantics, and its
 * bucketSeries is the reference these rows are tested against):
 *
 * - `count`, and `last_ms`, the time of the last sample;
 * - `sum`, `min`, `max`, `last` and `reset_sum` (the values before the drops among the bucket's
 *   samples, the first compared with the last of the bucket just before) as mantissas at one
 *   `scale` (storage/scaled-value.ts), exactly as raw values are stored: each bucket's samples
 *   at the largest decimal scale among them, or at their one binary shift. A sum exact in an
 *   int8 decodes to the double nearest to it;
 * - where no such scale holds them all (a float8 sample, decimal and binary scales mixed, a
 *   sum past the int8 range), `scale` is `unscaled` and the `_f` columns hold the values as
 *   doubles;
 * - `stale_ms`: a staleness marker after the bucket's last sample (the series ended there), the
 *   newest; a bucket with only markers has count 0.
 *
 * Samples the aggregates skip (unaggregated_samples: NaN, ±Inf, beyond ±1e100) are not in them.
 */
export type SampleTierRow = {
  /** Which of the series asked for (computeSampleTierRows). */
  series: number;
  bucket_ms: string;
  count: number;
  scale: number;
  sum: string | null;
  min: string | null;
  max: string | null;
  last: string | null;
  reset_sum: string | null;
  sum_f: number | null;
  min_f: number | null;
  max_f: number | null;
  last_f: number | null;
  reset_sum_f: number | null;
  last_ms: string | null;
  stale_ms: string | null;
};

/** The largest decimal scale (scaled-value.ts), the scale reset sums are added at. */
const sumScale = 22;

const int8Max = '9223372036854775807';

/**
 * The statement that computes a tier of `widthMs` from the raw samples in the buckets ending
 * in `(from_ms, to_ms]` (parameters $1 and $2, multiples of the width), of the stored series
 * $3 (bigint[]), each counted as the series $4 (int[], the same length): a series of PromQL may
 * be stored under several ids. The bucket before them is read too, for the drop into the first
 * one. Through `raw_scaled_samples`, so on either engine and during a storage move alike.
 */
function sampleTierRowsQuery(widthMs: number): string {
  return `${tierRowsCte(widthMs, false)}
  select series::int as series, bucket_ms::text as bucket_ms, count, scale,
    sum::text as sum, min::text as min, max::text as max, last::text as last,
    reset_sum::text as reset_sum, sum_f, min_f, max_f, last_f, reset_sum_f,
    last_ms::text as last_ms, stale_ms::text as stale_ms
  from tier_rows`;
}

/** The float8 `value`'s 64 bits as a bigint (read back by series/read-tier-series.ts). */
const float8Bits = (value: string): string =>
  `('x' || encode(float8send(${value}), 'hex'))::bit(64)::bigint`;

/**
 * The statement that stores a tier of `widthMs` (the same parameters as sampleTierRowsQuery, $4
 * the stored ids again) in `table`, as kept-tiers.ts lays it out: values as mantissas, or as the
 * bits of their doubles where `scale` is `unscaled`; where `exactTimes` is false, the last
 * sample's time only as the bucket's end when it was there, else the millisecond before, and a
 * closing staleness marker at the bucket's end (what series-buckets.ts reads as `exactTimes`
 * false).
 */
export function storeSampleTierRowsQuery(
  widthMs: number,
  table: string,
  exactTimes: boolean,
): string {
  const bits = (column: string): string => `coalesce(${column}, ${float8Bits(`${column}_f`)})`;
  const lastMs = exactTimes
    ? 'last_ms'
    : 'case when last_ms = bucket_ms then bucket_ms else bucket_ms - 1 end';
  const staleMs = exactTimes ? 'stale_ms' : 'case when stale_ms is not null then bucket_ms end';
  return `${tierRowsCte(widthMs, true)}
  insert into ${table}
    (series_id, bucket_ms, count, scale, sum, min, max, last, reset_sum, last_ms, stale_ms)
  select series, bucket_ms, count, scale, ${bits('sum')}, ${bits('min')}, ${bits('max')},
    ${bits('last')}, ${bits('reset_sum')}, ${lastMs}, ${staleMs}
  from tier_rows`;
}

/**
 * The rows as a CTE `tier_rows` (see sampleTierRowsQuery), `series` the $4 entry; or, `byStoredId`,
 * each stored id's own (`series` the id, and no $4).
 */
function tierRowsCte(widthMs: number, byStoredId: boolean): string {
  const bucketOf = (ms: string): string => `(${ms} + ${widthMs - 1}) / ${widthMs} * ${widthMs}`;
  const value = 'sample_value(s.mantissa, s.scale, s.value)';
  // A drop from a sample of the same bucket or of the one just before.
  const drop = `v < prev_v and prev_ms > bucket_ms - ${2 * widthMs}`;
  // A mantissa at the bucket's scale `top` (exact in numeric).
  const atTop = (column: string): string => `${column} * 10::numeric ^ (top - scale)`;
  // Every value of the bucket, and every value before a drop, at the one scale `top`.
  const singleScale = `min(bottom) = max(top)
    and coalesce(min(reset_bottom), max(top)) = max(top)
    and coalesce(max(reset_top), max(top)) = max(top)`;
  const asInt8 = (expr: string): string =>
    `case when abs(${expr}) <= ${int8Max} then (${expr})::bigint end`;
  // Joined to the ids only where several count as one: the join would repeat the scan of the
  // samples per id (a parameterized scan of each id, with the whole list in its condition).
  const stored = byStoredId
    ? `select r.series_id, r.time_ms, r.scaled >> 7 as mantissa,
      ((r.scaled & 127) - 64)::smallint as scale, r.value
    from raw_scaled_samples($3::bigint[], $1::bigint - ${widthMs} + 1, $2::bigint) r`
    : `select i.series_id, r.time_ms, r.scaled >> 7 as mantissa,
      ((r.scaled & 127) - 64)::smallint as scale, r.value
    from raw_scaled_samples($3::bigint[], $1::bigint - ${widthMs} + 1, $2::bigint) r
    join ids i on i.id = r.series_id`;
  const markersOf = byStoredId
    ? `select m.series_id, m.time from stale_markers m where m.series_id = any($3::bigint[])`
    : `select i.series_id, m.time from stale_markers m join ids i on i.id = m.series_id`;
  return `with ids as (
    select * from unnest($3::bigint[], ${byStoredId ? '$3' : '$4'}::bigint[]) as i(id, series_id)
  ), stored as (
    ${stored}
  ), ordered as (
    select s.series_id, s.time_ms, ${bucketOf('s.time_ms')} as bucket_ms,
      s.mantissa, s.scale, ${value} as v,
      lag(${value}) over w as prev_v, lag(s.time_ms) over w as prev_ms,
      lag(s.mantissa) over w as prev_m, lag(s.scale) over w as prev_scale,
      coalesce(lead(s.time_ms) over w > ${bucketOf('s.time_ms')}, true) as is_last
    from stored s
    window w as (partition by s.series_id order by s.time_ms)
  ), by_scale as (
    select series_id, bucket_ms, scale, count(*) as count,
      sum(mantissa) as sum_m, min(mantissa) as min_m, max(mantissa) as max_m,
      max(mantissa) filter (where is_last) as last_m,
      sum(prev_m) filter (where ${drop}) as reset_m,
      sum(prev_m::numeric * 10::numeric ^ (${sumScale} - prev_scale))
        filter (where ${drop} and prev_scale >= 0) as reset_at_sum_scale,
      -- Doubles added in time order: the same bits however the rows were scanned.
      sum(v order by time_ms) as sum_f, min(v) as min_f, max(v) as max_f,
      max(v) filter (where is_last) as last_f,
      sum(prev_v order by time_ms) filter (where ${drop}) as reset_sum_f,
      max(time_ms) as last_ms,
      -- The scale of a drop's previous sample, which may lie in the bucket before.
      min(prev_scale) filter (where ${drop}) as reset_bottom,
      max(prev_scale) filter (where ${drop}) as reset_top,
      coalesce(bool_or(${drop} and prev_m is null), false) as reset_from_float
    from ordered
    where bucket_ms > $1::bigint
    group by series_id, bucket_ms, scale
  ), scaled as (
    select *,
      max(scale) over bucket as top, min(scale) over bucket as bottom,
      bool_or(scale is null) over bucket as has_float
    from by_scale
    window bucket as (partition by series_id, bucket_ms)
  ), combined as (
    select series_id, bucket_ms,
      not bool_or(has_float) and not bool_or(reset_from_float)
        and (min(bottom) >= 0 and coalesce(min(reset_bottom), 0) >= 0
            and coalesce(max(reset_top), max(top)) <= max(top)
          or ${singleScale}) as exact,
      max(top) as top, sum(count)::int as count,
      sum(${atTop('sum_m')}) as sum_m, min(${atTop('min_m')}) as min_m,
      max(${atTop('max_m')}) as max_m, max(${atTop('last_m')}) as last_m,
      case when ${singleScale} then sum(reset_m)
        else sum(reset_at_sum_scale) / 10::numeric ^ (${sumScale} - max(top)) end as reset_m,
      sum(sum_f order by scale) as sum_f, min(min_f) as min_f, max(max_f) as max_f, max(last_f) as last_f,
      sum(reset_sum_f order by scale) as reset_sum_f, max(last_ms) as last_ms
    from scaled
    group by series_id, bucket_ms
  ), rows as (
    select *, ${asInt8('sum_m')} as sum_i, ${asInt8('min_m')} as min_i,
      ${asInt8('max_m')} as max_i, ${asInt8('last_m')} as last_i,
      ${asInt8('coalesce(reset_m, 0)')} as reset_i
    from combined
  ), exact_rows as (
    select *, coalesce(exact, false) and sum_i is not null and min_i is not null and max_i is not null
      and last_i is not null and reset_i is not null as stored_exactly
    from rows
  ), markers as (
    select m.series_id, ${bucketOf(epochMs('m.time'))} as bucket_ms,
      max(${epochMs('m.time')}) as stale_ms
    from (${markersOf}) m
    where m.time > ${timestamp('$1::bigint')} and m.time <= ${timestamp('$2::bigint')}
    group by 1, 2
  ), tier_rows as (
  select coalesce(r.series_id, m.series_id) as series,
    coalesce(r.bucket_ms, m.bucket_ms) as bucket_ms, coalesce(r.count, 0) as count,
    case when r.stored_exactly then r.top else ${unscaled} end::smallint as scale,
    case when r.stored_exactly then r.sum_i end as sum,
    case when r.stored_exactly then r.min_i end as min,
    case when r.stored_exactly then r.max_i end as max,
    case when r.stored_exactly then r.last_i end as last,
    case when r.stored_exactly then r.reset_i end as reset_sum,
    case when not r.stored_exactly then r.sum_f end as sum_f,
    case when not r.stored_exactly then r.min_f end as min_f,
    case when not r.stored_exactly then r.max_f end as max_f,
    case when not r.stored_exactly then r.last_f end as last_f,
    case when not r.stored_exactly then coalesce(r.reset_sum_f, 0) end as reset_sum_f,
    r.last_ms,
    case when r.last_ms is null or m.stale_ms > r.last_ms then m.stale_ms end as stale_ms
  from exact_rows r full join markers m on m.series_id = r.series_id and m.bucket_ms = r.bucket_ms
  )`;
}

/**
 * The tier of `widthMs` over the buckets ending in `(fromMs, toMs]` of `series` (each the
 * stored ids of one series), computed now from the raw samples; a row's `series` is the index
 * of its series there. A query that can be canceled (series/cancelable.ts).
 */
export function computeSampleTierRows(
  sql: Sql,
  widthMs: number,
  range: { fromMs: number; toMs: number },
  series: readonly (readonly string[])[],
): PromiseLike<SampleTierRow[]> & { cancel(): unknown } {
  const ids = series.flat();
  for (const id of ids) if (!/^[0-9]+$/.test(id)) throw new Error(`not a series id: ${id}`);
  const indexes = series.flatMap((group, i) => group.map(() => i));
  return sql.unsafe<SampleTierRow[]>(sampleTierRowsQuery(widthMs), [
    range.fromMs,
    range.toMs,
    ids,
    indexes,
  ]);
}
