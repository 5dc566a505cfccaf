import type { Sql } from '../core/database.js';
import type { KeptTier } from '../storage/kept-tiers.js';
import { decodeScaled, unscaled } from '../storage/scaled-value.js';
import { binaryArray } from './binary-arrays.js';
import { copyOut } from './copy-out.js';

/** A bucket of a tier: its values as doubles, its times as the tier presents them. */
export type TierBucket = {
  bucketMs: number;
  count: number;
  sum: number;
  min: number;
  max: number;
  last: number;
  resetSum: number;
  lastMs: number;
  staleMs: number | null;
};

/** Reads of at least this many stored series are split over two connections. */
const parallelReadMinSeries = 200;

/** `stale_ms` where a bucket ends in no staleness marker. */
const noMarker = '-9223372036854775808';

/** What each bucket brings, one int8[] each (doubles' bits where a value is `unscaled`). */
const columns = [
  'bucket_ms',
  'count',
  'scale',
  'coalesce(sum, 0)',
  'coalesce(min, 0)',
  'coalesce(max, 0)',
  'coalesce(last, 0)',
  'coalesce(reset_sum, 0)',
  'coalesce(last_ms, 0)',
  `coalesce(stale_ms, ${noMarker})`,
];

/**
 * The buckets `tier` stored (storage/kept-tiers.ts) that end in `(fromMs, toMs]`, of `series`
 * (each the stored ids of one series), per series in the order given, one bucket per stored id
 * (readTierSeries combines them), in no particular order. Through COPY's binary format, an
 * int8[] per series and column: a row's fields as text cost the api most of a read of many
 * buckets (7 s for 2 million), and packing each row into one bytea the server (2.9 s, against
 * 0.75 for the arrays).
 */
export async function readKeptTierBuckets(
  sql: Sql,
  tier: KeptTier,
  range: { fromMs: number; toMs: number },
  series: readonly (readonly string[])[],
  signal: AbortSignal,
): Promise<TierBucket[][]> {
  const indexOf = new Map<string, number>();
  series.forEach((group, i) => {
    for (const id of group) {
      if (!/^[0-9]+$/.test(id)) throw new Error(`not a series id: ${id}`);
      indexOf.set(id, i);
    }
  });
  const out: TierBucket[][] = series.map(() => []);
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
  await Promise.all(
    halves.map((part) =>
      copyOut(
        sql,
        `select series_id, ${columns.map((c) => `array_agg((${c})::bigint)`).join(', ')}
          from ${tier.table}
          where series_id = any('{${part.join(',')}}'::bigint[])
            and bucket_ms > ${range.fromMs} and bucket_ms <= ${range.toMs}
          group by series_id`,
        ([id, ...arrays]) => {
          if (!id || arrays.length !== columns.length) {
            throw new Error('expected rows of (series_id, an array per column)');
          }
          const views = arrays.map((bytes) => binaryArray(bytes));
          const length = views[0]!.length;
          if (views.some((array) => array.length !== length)) {
            throw new Error('expected arrays of one length');
          }
          const buckets = out[indexOf.get(id.readBigInt64BE(0).toString())!]!;
          for (let i = 0, at = 24; i < length; i++, at += 12) {
            buckets.push(storedBucket(views, at, tier.exactTimes));
          }
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
 * The bucket at byte `at` of the columns' arrays. No closure per bucket: two of them took a
 * third of a 2-million-bucket read (their allocation, and under tsx the naming of each).
 */
function storedBucket(
  columns: readonly { view: DataView }[],
  at: number,
  exactTimes: boolean,
): TierBucket {
  const bucketMs = int8At(columns[0]!.view, at);
  const scale = int8At(columns[2]!.view, at);
  const lastMs = int8At(columns[8]!.view, at);
  const stale = columns[9]!.view;
  const marker = !(stale.getInt32(at) === -2_147_483_648 && stale.getUint32(at + 4) === 0);
  return {
    bucketMs,
    count: int8At(columns[1]!.view, at),
    sum: valueAt(columns[3]!.view, at, scale),
    min: valueAt(columns[4]!.view, at, scale),
    max: valueAt(columns[5]!.view, at, scale),
    last: valueAt(columns[6]!.view, at, scale),
    resetSum: valueAt(columns[7]!.view, at, scale),
    lastMs: exactTimes || lastMs === bucketMs ? lastMs : bucketMs - 1,
    staleMs: !marker ? null : exactTimes ? int8At(stale, at) : bucketMs,
  };
}
