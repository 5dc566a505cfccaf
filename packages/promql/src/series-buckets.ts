/**
 * A series read from a rollup tier instead of its raw samples. A tier of width `w` keeps, per
 * series and bucket, what the range functions that add up a window need of the bucket's
 * samples (count, sum, min, max) and what a counter's increase needs (the last sample, and the
 * values before the drops, counter resets, since the previous bucket's last). Bucket `e` covers
 * `(e − w, e]`, `e` a multiple of `w`: left-open, so that Prometheus 2.x's window `[t − R, t]`
 * (both ends inclusive), with `t` and `R` multiples of `w`, is exactly the buckets that end in
 * `(t − R, t]` plus, when the bucket ending at `t − R` has its last sample at `t − R`, that one
 * sample. Over such windows, `count_over_time`, `sum_over_time`, `avg_over_time`,
 * `min_over_time`, `max_over_time`, `last_over_time` and `present_over_time` answer as the raw
 * samples would (sums added in another order, so to the last bits of a double), and so do
 * instant selectors at multiples of `w` with a lookback that is one. `rate`, `increase` and
 * `delta` answer the change between the last sample at or before the window's start and the
 * last one in it, counter resets counted, per second of the time between them, times the part of
 * the window the series was there for (bucketsRate says how that part is found; `rate` divides
 * the increase by the range), without Prometheus' extrapolation; those, other
 * windows and the functions that need every sample are approximate, and the evaluator says so.
 *
 * The series' points are each bucket's last sample (a staleness marker is a point of its own
 * when it is a bucket's last). A tier that does not keep the last sample's time gives the
 * bucket's end when the sample was there, else the millisecond before (`exactTimes` false).
 */
export type SeriesBuckets = {
  widthMs: number;
  /** Whether the points' times are the samples' own. */
  exactTimes: boolean;
  /** One entry per point of the series that is not a staleness marker, in time order. */
  count: ArrayLike<number>;
  sum: ArrayLike<number>;
  min: ArrayLike<number>;
  max: ArrayLike<number>;
  /**
   * The value before each drop among the bucket's samples, the first one compared with the
   * last sample of the bucket just before (when that one has samples), summed.
   */
  resetSum: ArrayLike<number>;
};

/** A tier's aggregates besides `count`, which a source always reads. */
export type BucketAggregate = 'sum' | 'min' | 'max' | 'resetSum';

const everyAggregate: readonly BucketAggregate[] = ['sum', 'min', 'max', 'resetSum'];

/**
 * What the evaluator reads of a tier's aggregates when a selection feeds `func` (its
 * `bucketFunctions` and the functions of the last samples); a source may leave the others NaN
 * and save their reading. Every other function, and a selection that feeds none, reads them all.
 */
const aggregatesReadBy = new Map<string, readonly BucketAggregate[]>([
  ['count_over_time', []],
  ['sum_over_time', ['sum']],
  ['avg_over_time', ['sum']],
  ['min_over_time', ['min']],
  ['max_over_time', ['max']],
  ['last_over_time', []],
  ['present_over_time', []],
  ['absent_over_time', []],
]);

export function bucketAggregatesRead(func: string | null): readonly BucketAggregate[] {
  return (func === null ? undefined : aggregatesReadBy.get(func)) ?? everyAggregate;
}

/** The end of the bucket of width `widthMs` that holds a sample at `timeMs`. */
export function bucketEndOf(timeMs: number, widthMs: number): number {
  return Math.ceil(timeMs / widthMs) * widthMs;
}

/** What a window of buckets adds up to (a scratch object the evaluator reuses). */
export type BucketWindow = { count: number; sum: number; min: number; max: number };

export function emptyBucketWindow(): BucketWindow {
  return { count: 0, sum: 0, min: 0, max: 0 };
}

/**
 * Adds up the buckets of the points [lo, hi) (`times`: the buckets' last samples, hi > lo) for
 * the window [mint, maxt], into `into`. Returns whether that is exactly what the raw samples in
 * the window add up to: the first bucket lies within the window, or only its last sample does,
 * and the bucket after the window (point `hi`) starts after it.
 */
export function addUpBuckets(
  times: ArrayLike<number>,
  values: ArrayLike<number>,
  buckets: SeriesBuckets,
  lo: number,
  hi: number,
  mint: number,
  maxt: number,
  into: BucketWindow,
): boolean {
  const w = buckets.widthMs;
  let exact = hi >= times.length || bucketEndOf(times[hi]!, w) - w >= maxt;
  if (times[lo] === mint && (buckets.exactTimes || bucketEndOf(mint, w) === mint)) {
    // Only the bucket's last sample lies in the window.
    const v = values[lo]!;
    into.count = 1;
    into.sum = v;
    into.min = v;
    into.max = v;
  } else {
    if (bucketEndOf(times[lo]!, w) - w < mint) exact = false;
    into.count = buckets.count[lo]!;
    into.sum = buckets.sum[lo]!;
    into.min = buckets.min[lo]!;
    into.max = buckets.max[lo]!;
  }
  for (let k = lo + 1; k < hi; k++) {
    into.count += buckets.count[k]!;
    into.sum += buckets.sum[k]!;
    if (buckets.min[k]! < into.min) into.min = buckets.min[k]!;
    if (buckets.max[k]! > into.max) into.max = buckets.max[k]!;
  }
  return exact;
}

/**
 * A tier's `rate`, `increase` or `delta` over the points [lo, hi) of the window [mint, maxt]:
 * the change from the last sample at or before mint (point lo when it is at mint, else the one
 * before lo) to the window's last, counter resets counted for a counter, per second of the time
 * between those two samples, times the part of the window the series was there for (the
 * increase; per second of the range for a rate). Where the window's start falls inside a bucket
 * the first sample is up to a bucket earlier: divided by the range instead, a `rate(x[2h1m])`
 * over hourly buckets read half again too high. NaN without two samples.
 */
export function bucketsRate(
  times: ArrayLike<number>,
  values: ArrayLike<number>,
  buckets: SeriesBuckets,
  lo: number,
  hi: number,
  window: { mint: number; rangeMs: number },
  kind: { isCounter: boolean; isRate: boolean },
): number {
  const from = times[lo] === window.mint || lo === 0 ? lo : lo - 1;
  if (hi - 1 <= from) return Number.NaN;
  let change = values[hi - 1]! - values[from]!;
  if (kind.isCounter) for (let k = from + 1; k < hi; k++) change += buckets.resetSum[k]!;
  const firstMs = times[from]!;
  const lastMs = times[hi - 1]!;
  const perSecond = change / ((lastMs - firstMs) / 1000);
  // The part of the window the series was there for: from its start, unless its first sample
  // is inside the window with no sample of its bucket before the start (the series began
  // there); to its end while a later point follows (the window ends inside that point's
  // bucket). Without one, as Prometheus extrapolates: to the end when it is less than 1.1
  // sample intervals after the last sample, else half an interval past it (the series stopped).
  const maxt = window.mint + window.rangeMs;
  const begunBefore =
    firstMs <= window.mint ||
    (buckets.count[from]! > 1 &&
      bucketEndOf(firstMs, buckets.widthMs) - buckets.widthMs < window.mint);
  const fromMs = begunBefore ? window.mint : firstMs;
  let toMs = maxt;
  if (hi === times.length) {
    let samples = 0;
    for (let k = from + 1; k < hi; k++) samples += buckets.count[k]!;
    const intervalMs = (lastMs - firstMs) / samples;
    if (maxt - lastMs >= 1.1 * intervalMs) toMs = Math.min(maxt, lastMs + intervalMs / 2);
  }
  const increase = perSecond * ((toMs - fromMs) / 1000);
  return kind.isRate ? increase / (window.rangeMs / 1000) : increase;
}

/** A series as a tier holds it: the points the evaluator reads, with their buckets. */
export type BucketedSeries = {
  timestampsMs: number[];
  values: number[];
  stale: number[];
  buckets: SeriesBuckets & {
    count: number[];
    sum: number[];
    min: number[];
    max: number[];
    resetSum: number[];
  };
};

/**
 * The tier of width `widthMs` of a series' samples (in time order; `stale[i]` 1 marks a
 * staleness marker), with the samples' own times: what a tier stores, computed in memory. The
 * reference for the tiers a database keeps, and the in-memory source's tiers.
 */
export function bucketSeries(
  timestampsMs: ArrayLike<number>,
  values: ArrayLike<number>,
  stale: ArrayLike<number>,
  widthMs: number,
): BucketedSeries {
  const out: BucketedSeries = {
    timestampsMs: [],
    values: [],
    stale: [],
    buckets: { widthMs, exactTimes: true, count: [], sum: [], min: [], max: [], resetSum: [] },
  };
  const b = out.buckets;
  // The last sample of the bucket before, while the next bucket is the one just after it.
  let previousEnd = Number.NaN;
  let previousLast = Number.NaN;
  let i = 0;
  while (i < timestampsMs.length) {
    const end = bucketEndOf(timestampsMs[i]!, widthMs);
    let j = i;
    while (j < timestampsMs.length && timestampsMs[j]! <= end) j++;
    let count = 0;
    let sum = 0;
    let min = 0;
    let max = 0;
    let lastMs = 0;
    let last = previousEnd === end - widthMs ? previousLast : Number.NaN;
    let resetSum = 0;
    for (let k = i; k < j; k++) {
      if (stale[k] === 1) continue;
      const v = values[k]!;
      if (v < last) resetSum += last;
      if (count === 0 || v < min) min = v;
      if (count === 0 || v > max) max = v;
      count++;
      sum += v;
      lastMs = timestampsMs[k]!;
      last = v;
    }
    if (count > 0) {
      out.timestampsMs.push(lastMs);
      out.values.push(last);
      out.stale.push(0);
      b.count.push(count);
      b.sum.push(sum);
      b.min.push(min);
      b.max.push(max);
      b.resetSum.push(resetSum);
      previousEnd = end;
      previousLast = last;
    }
    // A bucket that ends in a staleness marker ends its series there, for instant selectors.
    if (stale[j - 1] === 1) {
      out.timestampsMs.push(timestampsMs[j - 1]!);
      out.values.push(Number.NaN);
      out.stale.push(1);
    }
    i = j;
  }
  return out;
}
