import type { Histogram, HistogramBucket } from './parse-histogram.js';

/**
 * The q-quantile of a native histogram as Prometheus 2.42's `histogram_quantile` computes it:
 * walk the buckets from the lowest until their cumulative count reaches q·count, then
 * interpolate linearly within that bucket's [lower, upper]. The zero bucket (straddling 0) of a
 * histogram with buckets on one side only is bounded by 0 on the other. q < 0 is -Inf, q > 1
 * +Inf, an empty histogram NaN; a rank the buckets never reach (observations of NaN) answers
 * the highest bucket's upper bound.
 *
 * It reads the buckets the API lists, the populated ones, where Prometheus walks the empty
 * ones of its spans too. That changes three edge cases only: q = 0 when the lowest bucket is
 * empty (NaN there), a rank never reached (the last bucket there may be an empty one), and a
 * side whose buckets are all empty (0 still bounds the zero bucket there).
 */
export function histogramQuantile(q: number, h: Histogram): number {
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
  };
  let count = 0;
  let rank = q * h.count;
  for (const each of h.buckets) {
    bucket = each;
    count += each.count;
    if (count >= rank) break;
  }
  let { lower, upper } = bucket;
  if (lower < 0 && upper > 0) {
    const negative = h.buckets.some((each) => each.upper <= 0);
    const positive = h.buckets.some((each) => each.lower >= 0);
    if (!negative && positive) lower = 0;
    else if (negative && !positive) upper = 0;
  }
  // Numerical inaccuracies could make the count exceed h's.
  if (count > h.count) count = h.count;
  if (count < rank) return upper;
  rank -= count - bucket.count;
  return lower + (upper - lower) * (rank / bucket.count);
}
