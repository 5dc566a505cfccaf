import type { BucketSpan, NativeHistogram, TimedHistogram } from '@monitor/schemas';

/** Prometheus client libraries' default schema (bucket factor 1.1 → 2^(1/8)) and zero bucket. */
const schema = 3;
const zeroThreshold = 2.938735877055719e-39;

/** One simulated latency histogram series: its labels and its scrapes. */
export type HistogramSeries = { labels: Record<string, string>; samples: TimedHistogram[] };

/** Deterministic, for runs to compare: mulberry32. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function gaussian(next: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
}

/**
 * The log-normal's probability of each schema-3 bucket index it reaches (bucket i:
 * (2^((i-1)/8), 2^(i/8)]).
 */
function bucketProbabilities(median: number, sigma: number): Map<number, number> {
  const cdf = (x: number) =>
    0.5 * (1 + erf((Math.log(x) - Math.log(median)) / (sigma * Math.SQRT2)));
  const probabilities = new Map<number, number>();
  const center = Math.ceil(Math.log2(median) * 2 ** schema);
  for (let i = center - 60; i <= center + 60; i++) {
    const p = cdf(2 ** (i / 2 ** schema)) - cdf(2 ** ((i - 1) / 2 ** schema));
    if (p > 1e-7) probabilities.set(i, p);
  }
  return probabilities;
}

/** Abramowitz and Stegun 7.1.26: enough for bucket weights. */
function erf(x: number): number {
  const sign = Math.sign(x);
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) *
      t *
      Math.exp(-x * x);
  return sign * y;
}

/**
 * Spans over the bucket indexes in use, as client_golang builds them: a gap of up to two empty
 * buckets is held as zero-count buckets rather than a new span.
 */
function layoutOf(counts: ReadonlyMap<number, number>): { spans: BucketSpan[]; buckets: number[] } {
  const indexes = [...counts.keys()].filter((i) => counts.get(i)! > 0).sort((a, b) => a - b);
  const spans: BucketSpan[] = [];
  const buckets: number[] = [];
  let last: number | undefined;
  for (const index of indexes) {
    if (last !== undefined && index - last <= 3) {
      for (let gap = last + 1; gap < index; gap++) buckets.push(0);
      spans[spans.length - 1]!.length += index - last;
    } else {
      spans.push({ offset: last === undefined ? index : index - last - 1, length: 1 });
    }
    buckets.push(counts.get(index)!);
    last = index;
  }
  return { spans, buckets };
}

/**
 * Request-latency histograms as a fleet's Prometheus scrapes them: `series` series, each with a
 * rate (2–200 requests a second) and a log-normal latency of its own, scraped every
 * `intervalMs` (with a few milliseconds of jitter) for `count` scrapes from `startMs`. Buckets
 * appear as rare latencies first land in them; a tenth of the series restart once (their
 * counts start again from zero). Counts are whole: client libraries' integer histograms.
 */
export function histogramFleet(options: {
  series: number;
  count: number;
  startMs: number;
  intervalMs: number;
  seed?: number;
}): HistogramSeries[] {
  const next = random(options.seed ?? 58);
  const fleet: HistogramSeries[] = [];
  for (let s = 0; s < options.series; s++) {
    const rate = 2 + next() * 198;
    const median = 0.005 * 100 ** next();
    const sigma = 0.6 + next() * 0.6;
    const probabilities = bucketProbabilities(median, sigma);
    const restartAt = s % 10 === 3 ? Math.floor(options.count * next()) : -1;
    const counts = new Map<number, number>();
    let sum = 0;
    const samples: TimedHistogram[] = [];
    for (let i = 0; i < options.count; i++) {
      if (i === restartAt) {
        counts.clear();
        sum = 0;
      }
      const requests = Math.max(
        0,
        Math.round(rate * (options.intervalMs / 1000) * (1 + 0.1 * gaussian(next))),
      );
      for (const [index, p] of probabilities) {
        const mean = requests * p;
        const added = Math.max(0, Math.round(mean + Math.sqrt(mean) * gaussian(next)));
        if (added > 0) counts.set(index, (counts.get(index) ?? 0) + added);
      }
      sum += requests * median * Math.exp((sigma * sigma) / 2) * (1 + 0.05 * gaussian(next));
      const { spans, buckets } = layoutOf(counts);
      const histogram: NativeHistogram = {
        integer: true,
        schema,
        zeroThreshold,
        zeroCount: 0,
        count: buckets.reduce((total, count) => total + count, 0),
        sum,
        positiveSpans: spans,
        positiveBuckets: buckets,
        negativeSpans: [],
        negativeBuckets: [],
        counterResetHint: 'unknown',
        customValues: [],
      };
      const jitterMs = Math.floor(next() * 5);
      samples.push({ timeMs: options.startMs + i * options.intervalMs + jitterMs, histogram });
    }
    fleet.push({
      labels: {
        __name__: 'http_request_duration_seconds',
        job: 'api',
        instance: `api-${Math.floor(s / 4)}:8080`,
        route: `/route/${s % 4}`,
      },
      samples,
    });
  }
  return fleet;
}
