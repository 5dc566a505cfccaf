import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { histogramQuantile } from './histogram-quantile.js';
import type { Histogram, HistogramBucket } from './parse-histogram.js';

const bucket = (lower: number, upper: number, count: number): HistogramBucket => ({
  lower,
  upper,
  lowerInclusive: false,
  upperInclusive: true,
  count,
});

/** A zero bucket of ±0.001 (2), then (1, 2] (4) and (2, 4] (2). */
const latencies: Histogram = {
  count: 8,
  sum: 9,
  buckets: [
    { ...bucket(-0.001, 0.001, 2), lowerInclusive: true },
    bucket(1, 2, 4),
    bucket(2, 4, 2),
  ],
};

describe('histogramQuantile', () => {
  it('interpolates linearly within the bucket where the cumulative count reaches q·count', () => {
    expect(histogramQuantile(0.5, latencies)).toBe(1.5);
    expect(histogramQuantile(0.75, latencies)).toBe(2);
    expect(histogramQuantile(0.875, latencies)).toBe(3);
    expect(histogramQuantile(1, latencies)).toBe(4);
  });

  it('bounds the zero bucket by 0 when the other buckets are all on one side', () => {
    expect(histogramQuantile(0.1, latencies)).toBeCloseTo(0.0004, 12);
    expect(histogramQuantile(0, latencies)).toBe(0);
    const negative: Histogram = {
      count: 4,
      sum: -5,
      buckets: [bucket(-4, -2, 2), bucket(-0.001, 0.001, 2)],
    };
    expect(histogramQuantile(1, negative)).toBe(0);
    const both: Histogram = { ...latencies, buckets: [bucket(-4, -2, 2), ...latencies.buckets] };
    expect(histogramQuantile(0.3, { ...both, count: 10 })).toBe(0);
  });

  it('answers the highest upper bound for a rank the buckets never reach (NaN observed)', () => {
    expect(histogramQuantile(0.95, { ...latencies, count: 10 })).toBe(4);
  });

  it('answers -Inf below q = 0, +Inf above q = 1, NaN for an empty histogram or q', () => {
    expect(histogramQuantile(-0.1, latencies)).toBe(-Infinity);
    expect(histogramQuantile(1.1, latencies)).toBe(Infinity);
    expect(histogramQuantile(0.5, { count: 0, sum: 0, buckets: [] })).toBeNaN();
    expect(histogramQuantile(NaN, latencies)).toBeNaN();
  });

  // A native histogram's exponential layout: schema s splits each power of two in 2^s buckets,
  // bucket i of the positive side is (b^(i-1), b^i] with b = 2^(2^-s), mirrored on the negative
  // side, with a zero bucket under the lowest of them.
  const exponential = fc
    .record({
      schema: fc.integer({ min: -4, max: 8 }),
      positive: fc.uniqueArray(fc.integer({ min: -40, max: 40 }), { maxLength: 12 }),
      negative: fc.uniqueArray(fc.integer({ min: -40, max: 40 }), { maxLength: 4 }),
      counts: fc.array(fc.double({ min: 0.001, max: 1000, noNaN: true }), {
        minLength: 17,
        maxLength: 17,
      }),
      zeroCount: fc.oneof(fc.constant(0), fc.double({ min: 0.001, max: 100, noNaN: true })),
    })
    .filter(
      ({ positive, negative, zeroCount }) => positive.length + negative.length > 0 || zeroCount > 0,
    )
    .map(({ schema, positive, negative, counts, zeroCount }): Histogram => {
      const base = 2 ** (2 ** -schema);
      const count = (i: number) => counts[i % counts.length]!;
      const negatives = [...negative]
        .sort((a, b) => b - a)
        .map((i, at) => bucket(-(base ** i), -(base ** (i - 1)), count(at + 12)));
      const positives = [...positive]
        .sort((a, b) => a - b)
        .map((i, at) => bucket(base ** (i - 1), base ** i, count(at)));
      const bounds = [...negatives.map((b) => -b.upper), ...positives.map((b) => b.lower)];
      const threshold = Math.min(0.001, ...bounds.filter((b) => b > 0)) / 2;
      const zero = zeroCount > 0 ? [bucket(-threshold, threshold, zeroCount)] : [];
      const buckets = [...negatives, ...zero, ...positives];
      return { count: buckets.reduce((sum, b) => sum + b.count, 0), sum: 0, buckets };
    });

  /** The bounds histogramQuantile interpolates within: the zero bucket's cut at 0 if one-sided. */
  function interpolated(h: Histogram): HistogramBucket[] {
    const negative = h.buckets.some((b) => b.upper <= 0);
    const positive = h.buckets.some((b) => b.lower >= 0);
    return h.buckets.map((b) =>
      b.lower < 0 && b.upper > 0
        ? {
            ...b,
            lower: !negative && positive ? 0 : b.lower,
            upper: negative && !positive ? 0 : b.upper,
          }
        : b,
    );
  }

  it('is monotonic in q and stays within the buckets', () => {
    fc.assert(
      fc.property(
        exponential,
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (h, a, b) => {
          const [low, high] = a <= b ? [a, b] : [b, a];
          const buckets = interpolated(h);
          const qLow = histogramQuantile(low, h);
          const qHigh = histogramQuantile(high, h);
          expect(qLow).toBeLessThanOrEqual(qHigh + Math.abs(qHigh) * 1e-12);
          // Within float error: the bucket counts may add up to a hair more or less than the
          // count, which moves the answer by a hair of the buckets' scale (a bound of 0, the zero
          // bucket cut at 0, has no scale of its own).
          const scale = Math.max(...buckets.map((b) => Math.max(Math.abs(b.lower), b.upper)));
          const slack = scale * 1e-9;
          expect(qLow).toBeGreaterThanOrEqual(buckets[0]!.lower - slack);
          expect(qHigh).toBeLessThanOrEqual(buckets.at(-1)!.upper + slack);
        },
      ),
    );
  });

  it('inverts the piecewise-linear distribution its buckets describe', () => {
    // The reference: the fraction of observations at or under x, each bucket spread evenly.
    const cdf = (h: Histogram, x: number) =>
      interpolated(h).reduce(
        (sum, b) => sum + b.count * Math.min(1, Math.max(0, (x - b.lower) / (b.upper - b.lower))),
        0,
      ) / h.count;
    fc.assert(
      fc.property(exponential, fc.double({ min: 0, max: 1, noNaN: true }), (h, q) => {
        expect(cdf(h, histogramQuantile(q, h))).toBeCloseTo(q, 6);
      }),
    );
  });
});
