import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NativeHistogram } from '@monitor/schemas';
import type { RemoteWriteHistogram } from './native-histogram.js';
import {
  customBucketsSchema,
  histogramFromOtlpExponential,
  histogramFromRemoteWrite,
} from './native-histogram.js';
import { remoteWriteTypes } from './proto-types.js';

/**
 * A histogram as Prometheus' client libraries build one: spans over the buckets in use (the
 * first anywhere, later ones after a gap), whole counts, the count at least the buckets' sum.
 */
const soundHistogram: fc.Arbitrary<NativeHistogram> = fc
  .record({
    integer: fc.boolean(),
    schema: fc.integer({ min: -4, max: 8 }),
    zeroThreshold: fc.constantFrom(0, 1e-128, 0.001),
    zeroCount: fc.nat(50),
    extra: fc.nat(5),
    sum: fc.double({ noNaN: true, noDefaultInfinity: true }),
    positive: fc.array(
      fc.tuple(fc.nat(3), fc.array(fc.nat(1000), { minLength: 1, maxLength: 4 })),
      {
        maxLength: 3,
      },
    ),
    negative: fc.array(
      fc.tuple(fc.nat(3), fc.array(fc.nat(1000), { minLength: 1, maxLength: 4 })),
      {
        maxLength: 2,
      },
    ),
    firstOffset: fc.integer({ min: -20, max: 20 }),
    counterResetHint: fc.constantFrom('unknown', 'yes', 'no', 'gauge'),
  })
  .map((h) => {
    const side = (runs: [number, number[]][]) => ({
      spans: runs.map(([gap, counts], i) => ({
        offset: i === 0 ? h.firstOffset : gap,
        length: counts.length,
      })),
      buckets: runs.flatMap(([, counts]) => counts),
    });
    const positive = side(h.positive);
    const negative = side(h.negative);
    const total = [...positive.buckets, ...negative.buckets].reduce((a, b) => a + b, 0);
    return {
      integer: h.integer,
      schema: h.schema,
      zeroThreshold: h.zeroThreshold,
      zeroCount: h.zeroCount,
      count: total + h.zeroCount + h.extra,
      sum: h.sum,
      positiveSpans: positive.spans,
      positiveBuckets: positive.buckets,
      negativeSpans: negative.spans,
      negativeBuckets: negative.buckets,
      counterResetHint: h.counterResetHint,
      customValues: [],
    };
  });

/** The histogram as remote-write carries it: deltas for an integer one, counts for a float one. */
function remoteWriteMessage(h: NativeHistogram): Record<string, unknown> {
  const deltas = (counts: number[]) => counts.map((count, i) => count - (counts[i - 1] ?? 0));
  return {
    ...(h.integer ? { countInt: h.count } : { countFloat: h.count }),
    sum: h.sum,
    schema: h.schema,
    zeroThreshold: h.zeroThreshold,
    ...(h.integer ? { zeroCountInt: h.zeroCount } : { zeroCountFloat: h.zeroCount }),
    positiveSpans: h.positiveSpans,
    negativeSpans: h.negativeSpans,
    ...(h.integer
      ? { positiveDeltas: deltas(h.positiveBuckets), negativeDeltas: deltas(h.negativeBuckets) }
      : { positiveCounts: h.positiveBuckets, negativeCounts: h.negativeBuckets }),
    resetHint: ['unknown', 'yes', 'no', 'gauge'].indexOf(h.counterResetHint),
    timestamp: 1_750_000_000_000,
    customValues: h.customValues,
  };
}

/** Through protobuf and back, as the decoder gets it. */
function decoded(message: Record<string, unknown>): RemoteWriteHistogram {
  const type = remoteWriteTypes().writeRequest;
  const bytes = type
    .encode(type.fromObject({ timeseries: [{ labels: [], histograms: [message] }] }))
    .finish();
  const request = type.decode(bytes) as unknown as {
    timeseries: { histograms: RemoteWriteHistogram[] }[];
  };
  return request.timeseries[0]!.histograms[0]!;
}

describe('histogramFromRemoteWrite', () => {
  it('reads back every sound histogram as sent, deltas made counts', () => {
    fc.assert(
      fc.property(soundHistogram, (histogram) => {
        expect(histogramFromRemoteWrite(decoded(remoteWriteMessage(histogram)), 160)).toEqual(
          histogram,
        );
      }),
      { numRuns: 300 },
    );
  });

  it('refuses what Prometheus refuses, and more buckets than allowed', () => {
    fc.assert(
      fc.property(
        soundHistogram.filter((h) => h.positiveBuckets.length > 0),
        fc.constantFrom(
          'schema',
          'spans',
          'negative offset',
          'negative count',
          'count',
          'buckets',
          'custom bounds',
        ),
        (histogram, flaw) => {
          const broken: NativeHistogram = structuredClone(histogram);
          if (flaw === 'schema') broken.schema = 9;
          if (flaw === 'spans') broken.positiveSpans[0]!.length += 1;
          if (flaw === 'negative offset') {
            broken.positiveSpans.push({ offset: -1, length: 1 });
            broken.positiveBuckets.push(0);
          }
          if (flaw === 'negative count') broken.positiveBuckets[0] = -1;
          if (flaw === 'count') broken.count = broken.zeroCount + broken.positiveBuckets[0]! - 1;
          if (flaw === 'custom bounds') broken.customValues = [1, 2];
          const maxBuckets = flaw === 'buckets' ? broken.positiveBuckets.length - 1 : 160;
          const result = histogramFromRemoteWrite(decoded(remoteWriteMessage(broken)), maxBuckets);
          expect(result).toEqual({ refused: expect.any(String) });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('takes custom buckets with increasing bounds, and says why it refuses others', () => {
    const custom: NativeHistogram = {
      integer: true,
      schema: customBucketsSchema,
      zeroThreshold: 0,
      zeroCount: 0,
      count: 6,
      sum: 12.5,
      positiveSpans: [{ offset: 0, length: 3 }],
      positiveBuckets: [1, 3, 2],
      negativeSpans: [],
      negativeBuckets: [],
      counterResetHint: 'no',
      customValues: [0.1, 1, 10],
    };
    expect(histogramFromRemoteWrite(decoded(remoteWriteMessage(custom)), 160)).toEqual(custom);
    const refusal = (h: NativeHistogram) =>
      histogramFromRemoteWrite(decoded(remoteWriteMessage(h)), 160);
    expect(refusal({ ...custom, customValues: [1, 0.1, 10] })).toEqual({
      refused: 'custom bucket bounds must be finite and increasing',
    });
    expect(refusal({ ...custom, customValues: [] })).toEqual({
      refused: 'custom buckets need their bounds (custom_values)',
    });
    expect(refusal({ ...custom, schema: -5, customValues: [] })).toEqual({
      refused: 'schema -5 is neither an exponential schema (-4 to 8) nor custom buckets (-53)',
    });
    expect(refusal({ ...custom, schema: 0, customValues: [], count: 5 })).toEqual({
      refused: '6 observations in the buckets, but the count is 5',
    });
  });
});

describe('histogramFromOtlpExponential', () => {
  const point = (offset: number, counts: number[], scale: number) => ({
    scale,
    count: counts.reduce((sum, count) => sum + count, 0),
    sum: 1.5,
    zeroCount: 0,
    positive: { offset, bucketCounts: counts },
  });
  const options = { delta: false, maxBuckets: 160 };

  // Prometheus' own cases (otlptranslator's TestConvertBucketsLayout), its deltas as counts.
  it.each([
    [0, [4, 3, 2, 1], 8, [{ offset: 1, length: 4 }], [4, 3, 2, 1]],
    [0, [4, 3, 2, 1], 9, [{ offset: 1, length: 2 }], [7, 3]],
    [0, [4, 3, 2, 1], 10, [{ offset: 1, length: 1 }], [10]],
    [1, [4, 3, 2, 1], 8, [{ offset: 2, length: 4 }], [4, 3, 2, 1]],
    [1, [4, 3, 2, 1], 9, [{ offset: 1, length: 3 }], [4, 5, 1]],
    [1, [4, 3, 2, 1], 10, [{ offset: 1, length: 2 }], [9, 1]],
    [
      4,
      [4, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
      8,
      [
        { offset: 5, length: 4 },
        { offset: 12, length: 1 },
      ],
      [4, 2, 0, 2, 1],
    ],
    [
      4,
      [4, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
      9,
      [
        { offset: 3, length: 2 },
        { offset: 6, length: 1 },
      ],
      [6, 2, 1],
    ],
  ])(
    'lays out offset %i, counts %j at scale %i as Prometheus does',
    (offset, counts, scale, spans, buckets) => {
      expect(histogramFromOtlpExponential(point(offset, counts, scale), options)).toMatchObject({
        schema: Math.min(scale, 8),
        positiveSpans: spans,
        positiveBuckets: buckets,
        zeroThreshold: 1e-128,
        counterResetHint: 'unknown',
      });
    },
  );

  it('keeps every count at its bucket, merged where the scale is brought down', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -30, max: 30 }),
        fc.array(fc.oneof(fc.constant(0), fc.nat({ max: 1000 })), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: -4, max: 12 }),
        (offset, counts, scale) => {
          const converted = histogramFromOtlpExponential(point(offset, counts, scale), {
            ...options,
            maxBuckets: 1000,
          });
          if ('refused' in converted) throw new Error(converted.refused);
          const scaleDown = Math.max(0, scale - 8);
          const expected = new Map<number, number>();
          counts.forEach((count, i) => {
            const index = Math.floor((offset + i) / 2 ** scaleDown) + 1;
            if (count > 0) expected.set(index, (expected.get(index) ?? 0) + count);
          });
          const found = new Map<number, number>();
          let index = 0;
          let at = 0;
          converted.positiveSpans.forEach((span, i) => {
            // A new span only for a gap of more than two empty buckets.
            if (i > 0) expect(span.offset).toBeGreaterThan(2);
            index += span.offset;
            for (let n = 0; n < span.length; n++, index++) {
              const count = converted.positiveBuckets[at++]!;
              if (count > 0) found.set(index, count);
            }
          });
          expect(found).toEqual(expected);
        },
      ),
    );
  });

  it('refuses a scale below −4, or more buckets than allowed; marks a delta histogram a gauge', () => {
    expect(histogramFromOtlpExponential(point(0, [1], -5), options)).toEqual({
      refused: 'scale -5 is below -4',
    });
    expect(
      histogramFromOtlpExponential(point(0, [1, 1, 1], 0), { ...options, maxBuckets: 2 }),
    ).toEqual({ refused: '3 buckets, more than the 2 allowed' });
    expect(
      histogramFromOtlpExponential(point(0, [1], 0), { ...options, delta: true }),
    ).toMatchObject({ counterResetHint: 'gauge' });
  });
});
