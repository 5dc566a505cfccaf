import type { Sql } from '../core/database.js';
import type { KeptTier } from '../storage/kept-tiers.js';
import { decodeScaled, unscaled } from '../storage/scaled-value.js';
import type { BucketAggregate } from '@monitor/promql';
import type { Float64Allocator } from './binary-arrays.js';
import { binaryArray, createConstantArrays } from './binary-arrays.js';
import { allSettled } from './cancelable.js';
import { copyOut } from './copy-out.js';

/**
 * Buckets of a tier as columns, one entry per bucket: values as doubles, times as the tier
 * presents them, `staleMs` NaN where no staleness marker ends the bucket. Columns, not an object
 * per bucket: for 2 million buckets those objects' allocation and collection cost the api about
 * a second (docs/benchmarks/promql.md, "90 days from the hourly tier").
 */
export type TierBuckets = {
  length: number;
  bucketMs: Float64Array;
  count: Float64Array;
  sum: Float64Array;
  min: Float64Array;
  max: Float64Array;
  last: Float64Array;
  resetSum: Float64Array;
  lastMs: Float64Array;
  staleMs: Float64Array;
};

/** Empty columns of `length` buckets from `allocate`. */
export function allocateTierBuckets(length: number, allocate: Float64Allocator): TierBuckets {
  return {
    length,
    bucketMs: allocate(length),
    count: allocate(length),
    sum: allocate(length),
    min: allocate(length),
    max: allocate(length),
    last: allocate(length),
    resetSum: allocate(length),
    lastMs: allocate(length),
    staleMs: allocate(length),
  };
}

/** Reads of at least this many stored series are split over two connections. */
const parallelReadMinSeries = 200;

/** `stale_ms` where a bucket ends in no staleness marker. */
const noMarker = '-9223372036854775808';

/** What each bucket brings, one int8[] each (doubles' bits where a value is `unscaled`). */
const columns = [
  'bucket_ms',
  'count',
  'scale',
  'coalesce(last, 0)',
  'coalesce(last_ms, 0)',
  `coalesce(stale_ms, ${noMarker})`,
];

/** …and the aggregates asked for, after those. */
const aggregateColumns: Record<BucketAggregate, string> = {
  sum: 'coalesce(sum, 0)',
  min: 'coalesce(min, 0)',
  max: 'coalesce(max, 0)',
  resetSum: 'coalesce(reset_sum, 0)',
};

/**
 * The buckets `tier` stored (storage/kept-tiers.ts) that end in `(fromMs, toMs]`, of `series`
 * (each the stored ids of one series), per series in the order given, one set of columns per
 * stored id (readTierSeries combines them), its buckets in no particular order. Through COPY's
 * binary format, an int8[] per series and column: a row's fields as text cost the api most of a
 * read of many buckets (7 s for 2 million), and packing each row into one bytea the server (2.9
 * s, against 0.75 for the arrays). Decoded into `allocate`'s arrays. Of the aggregates, only
 * those in `read`: the others are NaN (one shared array, read-only), and the server decompresses
 * none of their values.
 */
export async function readKeptTierBuckets(
  sql: Sql,
  tier: KeptTier,
  range: { fromMs: number; toMs: number },
  series: readonly (readonly string[])[],
  read: readonly BucketAggregate[],
  allocate: Float64Allocator,
  signal: AbortSignal,
): Promise<TierBuckets[][]> {
  const indexOf = new Map<string, number>();
  series.forEach((group, i) => {
    for (const id of group) {
      if (!/^[0-9]+$/.test(id)) throw new Error(`not a series id: ${id}`);
      indexOf.set(id, i);
    }
  });
  const out: TierBuckets[][] = series.map(() => []);
  if (indexOf.size === 0) return out;
  if (!Number.isSafeInteger(range.fromMs) || !Number.isSafeInteger(range.toMs)) {
    throw new Error(`not a time range in milliseconds: ${range.fromMs}…${range.toMs}`);
  }
  // Large reads in two halves, each on a connection of its own: the server decompresses and
  // aggregates on both cores while the rows of either are decoded here.
  const ids = [...indexOf.keys()];
  const halves =
    ids.length >= parallelReadMinSeries
      ? [ids.slice(0, ids.length >> 1), ids.slice(ids.length >> 1)]
      : [ids];
  const selected = [...columns, ...read.map((name) => aggregateColumns[name])];
  const notRead = createConstantArrays(Number.NaN);
  await allSettled(
    halves.map((part) =>
      copyOut(
        sql,
        `select series_id, ${selected.map((c) => `array_agg((${c})::bigint)`).join(', ')}
          from ${tier.table}
          where series_id = any('{${part.join(',')}}'::bigint[])
            and bucket_ms > ${range.fromMs} and bucket_ms <= ${range.toMs}
          group by series_id`,
        ([id, ...arrays]) => {
          if (!id || arrays.length !== selected.length) {
            throw new Error('expected rows of (series_id, an array per column)');
          }
          const views = arrays.map((bytes) => binaryArray(bytes));
          const length = views[0]!.length;
          if (views.some((array) => array.length !== length)) {
            throw new Error('expected arrays of one length');
          }
          const aggregate = (name: BucketAggregate): Float64Array =>
            read.includes(name) ? allocate(length) : notRead(length);
          const buckets: TierBuckets = {
            length,
            bucketMs: allocate(length),
            count: allocate(length),
            sum: aggregate('sum'),
            min: aggregate('min'),
            max: aggregate('max'),
            last: allocate(length),
            resetSum: aggregate('resetSum'),
            lastMs: allocate(length),
            staleMs: allocate(length),
          };
          decodeStoredBuckets(
            views.map((array) => array.view),
            read,
            buckets,
            tier.exactTimes,
          );
          out[indexOf.get(id.readBigInt64BE(0).toString())!]!.push(buckets);
        },
        signal,
      ),
    ),
  );
  return out;
}

/** An int8 as the nearest double (exact up to 2^53, as a mantissa or a time is). */
const int8At = (view: DataView, at: number): number =>
  view.getInt32(at) * 4_294_967_296 + view.getUint32(at + 4);

/** A value at `scale`: its mantissa, or the bits of a double where the tier could not scale it. */
function valueAt(view: DataView, at: number, scale: number): number {
  return scale === unscaled ? view.getFloat64(at) : decodeScaled(int8At(view, at), scale);
}

/**
 * The columns' arrays (`columns`, then `read`'s) into `out`: a loop per column, no closure or
 * object per bucket.
 */
function decodeStoredBuckets(
  views: readonly DataView[],
  read: readonly BucketAggregate[],
  out: TierBuckets,
  exactTimes: boolean,
) {
  const bucketCol = views[0]!;
  const countCol = views[1]!;
  const scaleCol = views[2]!;
  const lastCol = views[3]!;
  const lastMsCol = views[4]!;
  const staleCol = views[5]!;
  const scales = new Int32Array(out.length);
  for (let i = 0, at = 24; i < out.length; i++, at += 12) {
    const bucketMs = int8At(bucketCol, at);
    const scale = int8At(scaleCol, at);
    const lastMs = int8At(lastMsCol, at);
    const marker = !(staleCol.getInt32(at) === -2_147_483_648 && staleCol.getUint32(at + 4) === 0);
    scales[i] = scale;
    out.bucketMs[i] = bucketMs;
    out.count[i] = int8At(countCol, at);
    out.last[i] = valueAt(lastCol, at, scale);
    out.lastMs[i] = exactTimes || lastMs === bucketMs ? lastMs : bucketMs - 1;
    out.staleMs[i] = !marker ? Number.NaN : exactTimes ? int8At(staleCol, at) : bucketMs;
  }
  for (const name of ['sum', 'min', 'max', 'resetSum'] as const) {
    const column = read.indexOf(name);
    if (column === -1) continue; // NaN, as the columns were made
    const values = out[name];
    const view = views[columns.length + column]!;
    for (let i = 0, at = 24; i < out.length; i++, at += 12) {
      values[i] = valueAt(view, at, scales[i]!);
    }
  }
}
