import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeHistogramChunk,
  encodeHistogramChunk,
  HistogramChunkError,
} from './histogram-chunk.js';
import type { NativeHistogram, TimedHistogram } from './native-histogram.js';
import { histogramSeries } from './testing/native-histogram-arbitrary.js';

/** Every double as its bits: `toEqual` takes NaN for NaN whatever its payload. */
function bitsOf(samples: readonly TimedHistogram[]): unknown {
  const bits = (value: number) => {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, value);
    return view.getBigUint64(0).toString(16);
  };
  return JSON.parse(
    JSON.stringify(samples, (_, value: unknown) =>
      typeof value === 'number' ? bits(value) : value,
    ),
  );
}

/** Prometheus' staleness marker: a NaN of its own payload, as a histogram's sum. */
const staleNaN = new DataView(new Uint8Array([0x7f, 0xf0, 0, 0, 0, 0, 0, 2]).buffer).getFloat64(0);

const histogram = (overrides: Partial<NativeHistogram> = {}): NativeHistogram => ({
  integer: true,
  schema: 3,
  zeroThreshold: 2.938735877055719e-39,
  zeroCount: 2,
  count: 20,
  sum: 41.5,
  positiveSpans: [
    { offset: 0, length: 3 },
    { offset: 2, length: 2 },
  ],
  positiveBuckets: [1, 4, 6, 3, 2],
  negativeSpans: [{ offset: -1, length: 1 }],
  negativeBuckets: [2],
  counterResetHint: 'unknown',
  customValues: [],
  ...overrides,
});

describe('histogram chunks', () => {
  it('give back every series of histograms bit for bit', () => {
    fc.assert(
      fc.property(histogramSeries(), (series) => {
        expect(bitsOf(decodeHistogramChunk(encodeHistogramChunk(series)))).toEqual(bitsOf(series));
      }),
      { numRuns: 300 },
    );
  });

  it('keep a staleness marker, −0 and custom bounds as they were', () => {
    const series: TimedHistogram[] = [
      { timeMs: 1_700_000_000_000, histogram: histogram() },
      { timeMs: 1_700_000_015_000, histogram: histogram({ sum: staleNaN }) },
      {
        timeMs: 1_700_000_030_000,
        histogram: histogram({ integer: false, zeroCount: -0, counterResetHint: 'gauge' }),
      },
      {
        timeMs: 1_700_000_045_000,
        histogram: histogram({
          schema: -53,
          customValues: [0.1, 0.5, 1, 5, 10],
          negativeSpans: [],
          negativeBuckets: [],
        }),
      },
    ];
    const decoded = decodeHistogramChunk(encodeHistogramChunk(series));
    expect(bitsOf(decoded)).toEqual(bitsOf(series));
    expect(Object.is(decoded[2]!.histogram.zeroCount, -0)).toBe(true);
  });

  it('cost a byte or two a count for a steady series', () => {
    // 120 samples of a 20-bucket histogram scraped every 15 s, each bucket growing steadily.
    const series: TimedHistogram[] = Array.from({ length: 120 }, (_, i) => {
      const buckets = Array.from({ length: 20 }, (_, b) => (b + 1) * i);
      return {
        timeMs: 1_700_000_000_000 + i * 15_000,
        histogram: histogram({
          positiveSpans: [{ offset: -5, length: 20 }],
          positiveBuckets: buckets,
          negativeSpans: [],
          negativeBuckets: [],
          zeroCount: i,
          count: buckets.reduce((a, b) => a + b, i),
          sum: i * 12.25,
        }),
      };
    });
    const bytes = encodeHistogramChunk(series).length;
    expect(bytes / series.length).toBeLessThan(30);
  });

  it('refuse bytes they did not write', () => {
    const bytes = encodeHistogramChunk([{ timeMs: 5, histogram: histogram() }]);
    expect(() => decodeHistogramChunk(bytes.subarray(0, bytes.length - 1))).toThrow(
      HistogramChunkError,
    );
    expect(() => decodeHistogramChunk(new Uint8Array([9, 0]))).toThrow(HistogramChunkError);
    expect(() => decodeHistogramChunk(new Uint8Array([...bytes, 0]))).toThrow(HistogramChunkError);
  });
});
