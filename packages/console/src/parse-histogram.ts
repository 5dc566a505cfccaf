/**
 * A native histogram as the Prometheus API writes one in a matrix's `histograms`: every number a
 * string, the populated buckets only, from the lowest up, each [boundaries, lower, upper, count]
 * (boundaries: 0 upper inclusive, 1 lower inclusive, 2 neither, 3 both). No `buckets` when none
 * is populated.
 */
export type HistogramJson = {
  count: string;
  sum: string;
  buckets?: [number, string, string, string][];
};

/** One populated bucket: the observations in lower..upper, its bounds as inclusive as said. */
export type HistogramBucket = {
  lower: number;
  upper: number;
  lowerInclusive: boolean;
  upperInclusive: boolean;
  count: number;
};

/** A native histogram, its buckets from the lowest up (they do not overlap). */
export type Histogram = { count: number; sum: number; buckets: HistogramBucket[] };

/** A sample value as Prometheus writes it: a Go float, `+Inf`, `-Inf` or `NaN` included. */
export function parseSampleValue(text: string): number {
  switch (text) {
    case '+Inf':
      return Infinity;
    case '-Inf':
      return -Infinity;
    default:
      return Number(text);
  }
}

export function parseHistogram(json: HistogramJson): Histogram {
  return {
    count: parseSampleValue(json.count),
    sum: parseSampleValue(json.sum),
    buckets: (json.buckets ?? []).map(([boundaries, lower, upper, count]) => ({
      lower: parseSampleValue(lower),
      upper: parseSampleValue(upper),
      lowerInclusive: boundaries === 1 || boundaries === 3,
      upperInclusive: boundaries === 0 || boundaries === 3,
      count: parseSampleValue(count),
    })),
  };
}

/** A bucket as mathematicians write an interval: `(0.125, 0.1487]`. */
export function bucketInterval(bucket: HistogramBucket, format: (value: number) => string): string {
  return (
    (bucket.lowerInclusive ? '[' : '(') +
    `${format(bucket.lower)}, ${format(bucket.upper)}` +
    (bucket.upperInclusive ? ']' : ')')
  );
}
