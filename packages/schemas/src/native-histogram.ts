/** Consecutive buckets: `offset` from the end of the span before (the first: from bucket 0). */
export type BucketSpan = { offset: number; length: number };

/**
 * A native histogram as Prometheus keeps one (model/histogram): a base-2 exponential bucket
 * layout of `schema` (−4…8: each power of two split into 2^schema buckets), or custom bounds
 * (schema −53, `customValues`), with a zero bucket, the observations' count and sum, and the
 * buckets in use as spans over bucket indexes. Counts are absolute here, whatever the sender
 * encoded (remote-write's integer histograms send deltas); `integer` says whether they are
 * whole numbers as sent (Prometheus' `Histogram`, else its `FloatHistogram`).
 */
export type NativeHistogram = {
  integer: boolean;
  schema: number;
  zeroThreshold: number;
  zeroCount: number;
  count: number;
  sum: number;
  positiveSpans: BucketSpan[];
  positiveBuckets: number[];
  negativeSpans: BucketSpan[];
  negativeBuckets: number[];
  counterResetHint: CounterResetHint;
  /** The upper bounds of the custom buckets (schema −53); empty otherwise. */
  customValues: number[];
};

/** Prometheus' counter reset hints, in the order of their protobuf numbers. */
export const counterResetHints = ['unknown', 'yes', 'no', 'gauge'] as const;
type CounterResetHint = (typeof counterResetHints)[number];

/** A native histogram of a series at a time, epoch milliseconds. */
export type TimedHistogram = { timeMs: number; histogram: NativeHistogram };
