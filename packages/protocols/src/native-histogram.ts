import type { BucketSpan, NativeHistogram } from '@monitor/schemas';
import { counterResetHints } from '@monitor/schemas';
import type { Int64 } from './int64.js';
import { int64ToNumber } from './int64.js';

/** Why a histogram is refused, in words for the sender. */
export type HistogramRefusal = { refused: string };

/** Prometheus' exponential schemas, and its schema of custom bucket bounds. */
const minSchema = -4;
const maxSchema = 8;
export const customBucketsSchema = -53;

/** A remote-write histogram as protobufjs decodes it (1.0's and 2.0's agree on these fields). */
export type RemoteWriteHistogram = {
  countInt?: Int64 | null;
  countFloat?: number | null;
  sum?: number | null;
  schema?: number | null;
  zeroThreshold?: number | null;
  zeroCountInt?: Int64 | null;
  zeroCountFloat?: number | null;
  negativeSpans?: { offset?: number | null; length?: number | null }[] | null;
  negativeDeltas?: Int64[] | null;
  negativeCounts?: number[] | null;
  positiveSpans?: { offset?: number | null; length?: number | null }[] | null;
  positiveDeltas?: Int64[] | null;
  positiveCounts?: number[] | null;
  resetHint?: number | null;
  timestamp?: Int64 | null;
  customValues?: number[] | null;
};

/**
 * A remote-write histogram (1.0's `prometheus.Histogram`, 2.0's alike), checked as Prometheus
 * checks one before it appends it, and against `maxBuckets` (INGEST_HISTOGRAM_MAX_BUCKETS): the
 * histogram, or why it is refused. Decoded protobuf puts a oneof's unset member on the prototype,
 * so which one was sent is read with `Object.hasOwn`.
 */
export function histogramFromRemoteWrite(
  message: RemoteWriteHistogram,
  maxBuckets: number,
): NativeHistogram | HistogramRefusal {
  const integer = !Object.hasOwn(message, 'countFloat');
  const absolute = (deltas: Int64[] | null | undefined, counts: number[] | null | undefined) => {
    if (!integer) return [...(counts ?? [])];
    let count = 0;
    return (deltas ?? []).map((delta) => (count += int64ToNumber(delta)));
  };
  const spans = (list: RemoteWriteHistogram['positiveSpans']): BucketSpan[] =>
    (list ?? []).map((span) => ({ offset: span.offset ?? 0, length: span.length ?? 0 }));
  const histogram: NativeHistogram = {
    integer,
    schema: message.schema ?? 0,
    zeroThreshold: message.zeroThreshold ?? 0,
    zeroCount: Object.hasOwn(message, 'zeroCountFloat')
      ? (message.zeroCountFloat ?? 0)
      : int64ToNumber(message.zeroCountInt),
    count: integer ? int64ToNumber(message.countInt) : (message.countFloat ?? 0),
    sum: message.sum ?? 0,
    positiveSpans: spans(message.positiveSpans),
    positiveBuckets: absolute(message.positiveDeltas, message.positiveCounts),
    negativeSpans: spans(message.negativeSpans),
    negativeBuckets: absolute(message.negativeDeltas, message.negativeCounts),
    counterResetHint: counterResetHints[message.resetHint ?? 0] ?? 'unknown',
    customValues: [...(message.customValues ?? [])],
  };
  const problem = histogramProblem(histogram, maxBuckets);
  return problem === undefined ? histogram : { refused: problem };
}

/**
 * What Prometheus' `ValidateHistogram` and `ValidateFloatHistogram` refuse (a schema it has no
 * layout for, spans that do not cover the buckets, a span after the first with a negative
 * offset, a negative bucket count, buckets holding more observations than the count), and more
 * than `maxBuckets` buckets; undefined when the histogram is sound.
 */
function histogramProblem(histogram: NativeHistogram, maxBuckets: number): string | undefined {
  const { schema } = histogram;
  const custom = schema === customBucketsSchema;
  if (!custom && (!Number.isInteger(schema) || schema < minSchema || schema > maxSchema)) {
    return `schema ${schema} is neither an exponential schema (${minSchema} to ${maxSchema}) nor custom buckets (${customBucketsSchema})`;
  }
  if (custom) {
    const bounds = histogram.customValues;
    if (bounds.length === 0) return 'custom buckets need their bounds (custom_values)';
    for (let i = 0; i < bounds.length; i++) {
      if (!Number.isFinite(bounds[i]) || (i > 0 && bounds[i]! <= bounds[i - 1]!)) {
        return 'custom bucket bounds must be finite and increasing';
      }
    }
    if (histogram.negativeBuckets.length > 0 || histogram.negativeSpans.length > 0) {
      return 'custom buckets have no negative buckets';
    }
  } else if (histogram.customValues.length > 0) {
    return `custom bucket bounds are only for schema ${customBucketsSchema}`;
  }
  const buckets = histogram.positiveBuckets.length + histogram.negativeBuckets.length;
  if (buckets > maxBuckets) return `${buckets} buckets, more than the ${maxBuckets} allowed`;
  let observed = 0;
  for (const [side, spans, counts] of [
    ['positive', histogram.positiveSpans, histogram.positiveBuckets],
    ['negative', histogram.negativeSpans, histogram.negativeBuckets],
  ] as const) {
    let covered = 0;
    for (let i = 0; i < spans.length; i++) {
      const { offset, length } = spans[i]!;
      if (i > 0 && offset < 0) return `${side} span ${i} has a negative offset (${offset})`;
      covered += length;
    }
    if (covered !== counts.length) {
      return `${side} spans cover ${covered} buckets, but ${counts.length} are given`;
    }
    for (const count of counts) {
      if (!(count >= 0)) return `a ${side} bucket has a negative count (${count})`;
      observed += count;
    }
  }
  if (!(histogram.zeroCount >= 0)) return `the zero bucket has a negative count`;
  if (!(histogram.count >= 0)) return `the count is negative (${histogram.count})`;
  observed += histogram.zeroCount;
  // A float histogram's counts may be rounded: Prometheus compares them as they are, too.
  if (observed > histogram.count) {
    return `${observed} observations in the buckets, but the count is ${histogram.count}`;
  }
  return undefined;
}

/** One side's buckets of an OTLP exponential histogram point: consecutive from `offset`. */
type ExponentialBuckets = { offset?: number | null; bucketCounts?: Int64[] | null } | null;

/** The fields of an OTLP `ExponentialHistogramDataPoint` the conversion reads. */
export type ExponentialHistogramPoint = {
  count?: Int64 | null;
  sum?: number | null;
  scale?: number | null;
  zeroCount?: Int64 | null;
  positive?: ExponentialBuckets;
  negative?: ExponentialBuckets;
};

/** The zero threshold Prometheus' OTLP translation gives every exponential histogram. */
const otlpZeroThreshold = 1e-128;

/**
 * An OTLP exponential histogram point as Prometheus' OTLP translation converts it
 * (otlptranslator's `exponentialToNativeHistogram`): schema = scale, a scale above 8 brought
 * down to 8 by merging buckets, below −4 refused; OTLP bucket i is Prometheus' bucket i + 1
 * (OTLP's buckets are open below, closed above one index lower); runs of buckets become spans,
 * gaps of up to two empty buckets kept as zero counts, as client_golang lays them out; zero
 * threshold 1e-128 (the translation does not read OTLP's); the counter-reset hint unknown, or
 * gauge for a delta temporality; min and max dropped (a native histogram has none). Then checked
 * as a remote-written one is.
 */
export function histogramFromOtlpExponential(
  point: ExponentialHistogramPoint,
  { delta, maxBuckets }: { delta: boolean; maxBuckets: number },
): NativeHistogram | HistogramRefusal {
  const scale = point.scale ?? 0;
  if (scale < minSchema) return { refused: `scale ${scale} is below ${minSchema}` };
  const scaleDown = Math.max(0, scale - maxSchema);
  const positive = exponentialLayout(point.positive, scaleDown);
  const negative = exponentialLayout(point.negative, scaleDown);
  const histogram: NativeHistogram = {
    integer: true,
    schema: Math.min(scale, maxSchema),
    zeroThreshold: otlpZeroThreshold,
    zeroCount: int64ToNumber(point.zeroCount),
    count: int64ToNumber(point.count),
    sum: point.sum ?? 0,
    positiveSpans: positive.spans,
    positiveBuckets: positive.counts,
    negativeSpans: negative.spans,
    negativeBuckets: negative.counts,
    counterResetHint: delta ? 'gauge' : 'unknown',
    customValues: [],
  };
  const problem = histogramProblem(histogram, maxBuckets);
  return problem === undefined ? histogram : { refused: problem };
}

/**
 * One side's OTLP buckets as Prometheus' spans and absolute counts (otlptranslator's
 * `convertBucketsLayout`): each bucket at Prometheus index ((offset + i) >> scaleDown) + 1,
 * merged buckets summed; empty buckets only inside a span, for gaps of at most two.
 */
function exponentialLayout(
  buckets: ExponentialBuckets | undefined,
  scaleDown: number,
): { spans: BucketSpan[]; counts: number[] } {
  const bucketCounts = buckets?.bucketCounts ?? [];
  if (bucketCounts.length === 0) return { spans: [], counts: [] };
  const offset = buckets?.offset ?? 0;
  const indexOf = (i: number) => Math.floor((offset + i) / 2 ** scaleDown) + 1;
  const spans: BucketSpan[] = [{ offset: indexOf(0), length: 0 }];
  const counts: number[] = [];
  let bucketIndex = indexOf(0);
  let lastIndex = bucketIndex - 1;
  let count = 0;
  const append = (value: number) => {
    spans[spans.length - 1]!.length += 1;
    counts.push(value);
  };
  const appendBucket = () => {
    const gap = bucketIndex - lastIndex - 1;
    if (gap > 2) spans.push({ offset: gap, length: 0 });
    else for (let i = 0; i < gap; i++) append(0);
    append(count);
    lastIndex = bucketIndex;
  };
  for (let i = 0; i < bucketCounts.length; i++) {
    const next = indexOf(i);
    if (next === bucketIndex) {
      count += int64ToNumber(bucketCounts[i]);
      continue;
    }
    // An empty bucket is not appended: the gap before the next one covers it.
    if (count !== 0) appendBucket();
    count = int64ToNumber(bucketCounts[i]);
    bucketIndex = next;
  }
  appendBucket();
  return { spans, counts };
}

/** INGEST_HISTOGRAM_MAX_BUCKETS' default. */
export const defaultMaxHistogramBuckets = 160;
