/** A Prometheus histogram read from a /metrics page (all label sets summed). */
export type MetricsHistogram = {
  /** Cumulative counts by upper bound, ascending, `+Inf` last. */
  buckets: [upperBound: number, count: number][];
  sum: number;
  count: number;
};

function sampleValue(line: string): number {
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** The histogram `name` in the text format, its label sets summed bucket by bucket. */
export function histogramOf(text: string, name: string): MetricsHistogram {
  const buckets = new Map<number, number>();
  let sum = 0;
  let count = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}_bucket{`)) {
      const le = /[{,]le="([^"]+)"/.exec(line)?.[1];
      if (le === undefined) continue;
      const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
      buckets.set(bound, (buckets.get(bound) ?? 0) + sampleValue(line));
    } else if (line.startsWith(`${name}_sum`)) {
      sum += sampleValue(line);
    } else if (line.startsWith(`${name}_count`)) {
      count += sampleValue(line);
    }
  }
  return { buckets: [...buckets].sort(([a], [b]) => a - b), sum, count };
}

/** What `after` observed since `before` (two readings of one histogram). */
export function histogramSince(
  after: MetricsHistogram,
  before: MetricsHistogram,
): MetricsHistogram {
  const earlier = new Map(before.buckets);
  return {
    buckets: after.buckets.map(([bound, n]) => [bound, n - (earlier.get(bound) ?? 0)]),
    sum: after.sum - before.sum,
    count: after.count - before.count,
  };
}

/** Observations, their mean, and the upper bounds of the buckets holding the median, p99 and max. */
export type HistogramSummary = {
  count: number;
  mean: number;
  p50AtMost: number;
  p99AtMost: number;
  maxAtMost: number;
};

/** The bucket bounds that hold a histogram's quantiles (Infinity: past the last bound). */
export function summarizeHistogram(histogram: MetricsHistogram): HistogramSummary {
  const { buckets, count } = histogram;
  const atMost = (q: number): number => {
    const rank = Math.max(1, Math.ceil(q * count));
    return buckets.find(([, n]) => n >= rank)?.[0] ?? Number.POSITIVE_INFINITY;
  };
  return {
    count,
    mean: count === 0 ? 0 : histogram.sum / count,
    p50AtMost: count === 0 ? 0 : atMost(0.5),
    p99AtMost: count === 0 ? 0 : atMost(0.99),
    maxAtMost: count === 0 ? 0 : atMost(1),
  };
}
