/**
 * A series read from a rollup tier instead of its raw samples. A tier of width `w` keeps, per
 * series and bucket, what PromQL's range functions need of the bucket's samples: count, sum,
 * min, max, the first and last sample, and the counter resets between them. Bucket `e` covers
 * `(e − w, e]`, `e` a multiple of `w`: left-open, so that Prometheus 2.x's window `[t − R, t]`
 * (both ends inclusive), with `t` and `R` multiples of `w`, is exactly the buckets that end in
 * `(t − R, t]` plus, when the bucket ending at `t − R` has its last sample at `t − R`, that one
 * sample. Such windows answer as the raw samples would (sums in another order, so to the last
 * bits of a double); others, and functions that need every sample, answer approximately, and the
 * evaluator says so.
 *
 * The series' points are each bucket's last sample (staleness markers stay points of their own
 * when one is a bucket's last), so an instant selector at a multiple of `w` reads what it would
 * read from the raw samples, for any lookback.
 */
export type SeriesBuckets = {
  widthMs: number;
  /** One entry per point of the series that is not a staleness marker, in time order. */
  count: ArrayLike<number>;
  sum: ArrayLike<number>;
  min: ArrayLike<number>;
  max: ArrayLike<number>;
  firstMs: ArrayLike<number>;
  firstValue: ArrayLike<number>;
  /** The value before each drop between the bucket's samples (a counter reset), summed. */
  resetSum: ArrayLike<number>;
  resets: ArrayLike<number>;
  changes: ArrayLike<number>;
};

/** The end of the bucket of width `widthMs` that holds a sample at `timeMs`. */
export function bucketEndOf(timeMs: number, widthMs: number): number {
  return Math.ceil(timeMs / widthMs) * widthMs;
}

/** What a window of buckets adds up to (a scratch object the evaluator reuses). */
export type BucketWindow = {
  count: number;
  sum: number;
  min: number;
  max: number;
  firstMs: number;
  firstValue: number;
  lastMs: number;
  lastValue: number;
  resetSum: number;
  resets: number;
  changes: number;
};

export function emptyBucketWindow(): BucketWindow {
  return {
    count: 0,
    sum: 0,
    min: 0,
    max: 0,
    firstMs: 0,
    firstValue: 0,
    lastMs: 0,
    lastValue: 0,
    resetSum: 0,
    resets: 0,
    changes: 0,
  };
}

/**
 * Adds up the buckets of the points [lo, hi) (`times`, `values`: the buckets' last samples) for
 * the window [mint, maxt] (hi > lo), into `into`. Returns whether that is exactly what the raw samples in
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
  let exact = hi >= times.length || buckets.firstMs[hi]! > maxt;
  let k = lo;
  const lastOfFirst = values[lo]!;
  if (times[lo] === mint && buckets.firstMs[lo]! < mint) {
    // Only the bucket's last sample lies in the window.
    into.count = 1;
    into.sum = lastOfFirst;
    into.min = lastOfFirst;
    into.max = lastOfFirst;
    into.firstMs = mint;
    into.firstValue = lastOfFirst;
    into.resetSum = 0;
    into.resets = 0;
    into.changes = 0;
  } else {
    if (buckets.firstMs[lo]! < mint) exact = false;
    into.count = buckets.count[lo]!;
    into.sum = buckets.sum[lo]!;
    into.min = buckets.min[lo]!;
    into.max = buckets.max[lo]!;
    into.firstMs = buckets.firstMs[lo]!;
    into.firstValue = buckets.firstValue[lo]!;
    into.resetSum = buckets.resetSum[lo]!;
    into.resets = buckets.resets[lo]!;
    into.changes = buckets.changes[lo]!;
  }
  let previous = lastOfFirst;
  for (k = lo + 1; k < hi; k++) {
    const first = buckets.firstValue[k]!;
    // Between the previous bucket's last sample and this one's first.
    if (first < previous) {
      into.resets++;
      into.resetSum += previous;
    }
    if (first !== previous) into.changes++;
    into.count += buckets.count[k]!;
    into.sum += buckets.sum[k]!;
    if (buckets.min[k]! < into.min) into.min = buckets.min[k]!;
    if (buckets.max[k]! > into.max) into.max = buckets.max[k]!;
    into.resetSum += buckets.resetSum[k]!;
    into.resets += buckets.resets[k]!;
    into.changes += buckets.changes[k]!;
    previous = values[k]!;
  }
  into.lastMs = times[hi - 1]!;
  into.lastValue = values[hi - 1]!;
  return exact;
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
    firstMs: number[];
    firstValue: number[];
    resetSum: number[];
    resets: number[];
    changes: number[];
  };
};

/**
 * The tier of width `widthMs` of a series' samples (in time order; `stale[i]` 1 marks a
 * staleness marker): what a tier stores, computed in memory. The reference for the tiers a
 * database keeps, and the in-memory source's tiers.
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
    buckets: {
      widthMs,
      count: [],
      sum: [],
      min: [],
      max: [],
      firstMs: [],
      firstValue: [],
      resetSum: [],
      resets: [],
      changes: [],
    },
  };
  const b = out.buckets;
  let i = 0;
  while (i < timestampsMs.length) {
    const end = bucketEndOf(timestampsMs[i]!, widthMs);
    let j = i;
    while (j < timestampsMs.length && timestampsMs[j]! <= end) j++;
    let count = 0;
    let sum = 0;
    let min = 0;
    let max = 0;
    let firstMs = 0;
    let firstValue = 0;
    let lastMs = 0;
    let lastValue = 0;
    let resetSum = 0;
    let resets = 0;
    let changes = 0;
    for (let k = i; k < j; k++) {
      if (stale[k] === 1) continue;
      const t = timestampsMs[k]!;
      const v = values[k]!;
      if (count === 0) {
        firstMs = t;
        firstValue = v;
        min = v;
        max = v;
      } else {
        if (v < lastValue) {
          resets++;
          resetSum += lastValue;
        }
        if (v !== lastValue) changes++;
        if (v < min) min = v;
        if (v > max) max = v;
      }
      count++;
      sum += v;
      lastMs = t;
      lastValue = v;
    }
    if (count > 0) {
      out.timestampsMs.push(lastMs);
      out.values.push(lastValue);
      out.stale.push(0);
      b.count.push(count);
      b.sum.push(sum);
      b.min.push(min);
      b.max.push(max);
      b.firstMs.push(firstMs);
      b.firstValue.push(firstValue);
      b.resetSum.push(resetSum);
      b.resets.push(resets);
      b.changes.push(changes);
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
