import type { FloatHistogram, HistogramBucket } from './float-histogram.js';
import { allBuckets } from './float-histogram.js';

/** A classic histogram bucket: its `le` and cumulative count. */
export type Bucket = { upperBound: number; count: number };

/** Prometheus' `vectorByValueHeap.Less`: NaN sorts first. */
export function valueLess(a: number, b: number): boolean {
  if (Number.isNaN(a)) return true;
  return a < b;
}

function coalesceBuckets(buckets: Bucket[]): Bucket[] {
  let last = { ...buckets[0]! };
  let i = 0;
  for (const b of buckets.slice(1)) {
    if (b.upperBound === last.upperBound) {
      last.count += b.count;
    } else {
      buckets[i] = last;
      last = { ...b };
      i++;
    }
  }
  buckets[i] = last;
  return buckets.slice(0, i + 1);
}

function ensureMonotonic(buckets: Bucket[]): void {
  let max = buckets[0]!.count;
  for (let i = 1; i < buckets.length; i++) {
    const count = buckets[i]!.count;
    if (count > max) max = count;
    else if (count < max) buckets[i]!.count = max;
  }
}

/** First index in [0, n) for which `pred` holds (Go's sort.Search). */
function search(n: number, pred: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (!pred(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** histogram_quantile over classic buckets, as Prometheus 2.42's `bucketQuantile`. */
export function bucketQuantile(q: number, input: Bucket[]): number {
  if (Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  let buckets = [...input].sort((a, b) => a.upperBound - b.upperBound);
  if (buckets[buckets.length - 1]!.upperBound !== Infinity) return NaN;
  buckets = coalesceBuckets(buckets);
  ensureMonotonic(buckets);
  if (buckets.length < 2) return NaN;
  const observations = buckets[buckets.length - 1]!.count;
  if (observations === 0) return NaN;
  let rank = q * observations;
  const b = search(buckets.length - 1, (i) => buckets[i]!.count >= rank);
  if (b === buckets.length - 1) return buckets[buckets.length - 2]!.upperBound;
  if (b === 0 && buckets[0]!.upperBound <= 0) return buckets[0]!.upperBound;
  let bucketStart = 0;
  const bucketEnd = buckets[b]!.upperBound;
  let count = buckets[b]!.count;
  if (b > 0) {
    bucketStart = buckets[b - 1]!.upperBound;
    count -= buckets[b - 1]!.count;
    rank -= buckets[b - 1]!.count;
  }
  return bucketStart + (bucketEnd - bucketStart) * (rank / count);
}

/** The φ-quantile of values (the `quantile` aggregation and quantile_over_time). */
export function quantile(q: number, input: number[]): number {
  if (input.length === 0 || Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const values = [...input].sort((a, b) => (valueLess(a, b) ? -1 : valueLess(b, a) ? 1 : 0));
  const n = values.length;
  const rank = q * (n - 1);
  const lowerIndex = Math.max(0, Math.floor(rank));
  const upperIndex = Math.min(n - 1, lowerIndex + 1);
  const weight = rank - Math.floor(rank);
  return values[lowerIndex]! * (1 - weight) + values[upperIndex]! * weight;
}

/** Neumaier's improved Kahan step, as Prometheus' `kahanSumInc`. */
export function kahanSumInc(inc: number, sum: number, c: number): [number, number] {
  const t = sum + inc;
  if (Math.abs(sum) >= Math.abs(inc)) c += sum - t + inc;
  else c += inc - t + sum;
  return [t, c];
}

/**
 * The q-quantile of a native histogram's observations, interpolated linearly within the bucket
 * it falls in (Prometheus 2.42's histogramQuantile; ±Inf for q outside [0, 1]).
 */
export function nativeHistogramQuantile(q: number, h: FloatHistogram): number {
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  if (h.count === 0 || Number.isNaN(q)) return NaN;
  // Go's zero Bucket when h has none.
  let bucket: HistogramBucket = {
    lower: 0,
    upper: 0,
    lowerInclusive: false,
    upperInclusive: false,
    count: 0,
    index: 0,
  };
  let count = 0;
  let rank = q * h.count;
  for (const b of allBuckets(h)) {
    bucket = b;
    count += b.count;
    if (count >= rank) break;
  }
  let { lower, upper } = bucket;
  if (lower < 0 && upper > 0) {
    // In the zero bucket of a histogram with buckets on one side only: 0 bounds it there.
    if (h.negativeBuckets.length === 0 && h.positiveBuckets.length > 0) lower = 0;
    else if (h.positiveBuckets.length === 0 && h.negativeBuckets.length > 0) upper = 0;
  }
  // Numerical inaccuracies could make the count exceed h's.
  if (count > h.count) count = h.count;
  // The rank not reached (observations of NaN): the highest bucket's upper bound.
  if (count < rank) return upper;
  rank -= count - bucket.count;
  return lower + (upper - lower) * (rank / bucket.count);
}

/**
 * The fraction of a native histogram's observations between lower and upper, interpolated
 * linearly within buckets (Prometheus 2.42's histogramFraction).
 */
export function nativeHistogramFraction(lower: number, upper: number, h: FloatHistogram): number {
  if (h.count === 0 || Number.isNaN(lower) || Number.isNaN(upper)) return NaN;
  if (lower >= upper) return 0;
  let rank = 0;
  let lowerRank = 0;
  let upperRank = 0;
  let lowerSet = false;
  let upperSet = false;
  for (const b of allBuckets(h)) {
    if (b.lower < 0 && b.upper > 0) {
      if (h.negativeBuckets.length === 0 && h.positiveBuckets.length > 0) b.lower = 0;
      else if (h.positiveBuckets.length === 0 && h.negativeBuckets.length > 0) b.upper = 0;
    }
    if (!lowerSet && b.lower >= lower) {
      lowerRank = rank;
      lowerSet = true;
    }
    if (!upperSet && b.lower >= upper) {
      upperRank = rank;
      upperSet = true;
    }
    if (lowerSet && upperSet) break;
    if (!lowerSet && b.lower < lower && b.upper > lower) {
      lowerRank = rank + (b.count * (lower - b.lower)) / (b.upper - b.lower);
      lowerSet = true;
    }
    if (!upperSet && b.lower < upper && b.upper > upper) {
      upperRank = rank + (b.count * (upper - b.lower)) / (b.upper - b.lower);
      upperSet = true;
    }
    if (lowerSet && upperSet) break;
    rank += b.count;
  }
  if (!lowerSet || lowerRank > h.count) lowerRank = h.count;
  if (!upperSet || upperRank > h.count) upperRank = h.count;
  return (upperRank - lowerRank) / h.count;
}
