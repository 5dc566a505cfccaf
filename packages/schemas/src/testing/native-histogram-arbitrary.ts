import fc from 'fast-check';
import type { BucketSpan, NativeHistogram, TimedHistogram } from '../native-histogram.js';
import { counterResetHints } from '../native-histogram.js';

const spans = fc.array(
  fc.record({ offset: fc.integer({ min: -20, max: 20 }), length: fc.nat({ max: 6 }) }),
  { maxLength: 4 },
);

const covered = (list: readonly BucketSpan[]): number =>
  list.reduce((sum, span) => sum + span.length, 0);

/**
 * Native histograms whose spans cover their buckets, with any counts of their kind (whole
 * numbers for `integer` ones, large ones too; any double for float ones) and any sum: the
 * storage layout's input, sound or not in Prometheus' eyes otherwise.
 */
export function nativeHistograms(): fc.Arbitrary<NativeHistogram> {
  return fc
    .record({
      integer: fc.boolean(),
      custom: fc.boolean(),
      schema: fc.integer({ min: -4, max: 8 }),
      zeroThreshold: fc.double({ min: 0, max: 1, noNaN: true }),
      positiveSpans: spans,
      negativeSpans: spans,
      customValues: fc.array(fc.double({ noNaN: true }), { minLength: 1, maxLength: 4 }),
      counterResetHint: fc.constantFrom(...counterResetHints),
      sum: fc.double(),
    })
    .chain(({ integer, custom, customValues, ...rest }) => {
      const count = integer ? fc.maxSafeNat() : fc.double();
      return fc.record({
        integer: fc.constant(integer),
        schema: fc.constant(custom ? -53 : rest.schema),
        zeroThreshold: fc.constant(rest.zeroThreshold),
        zeroCount: count,
        count,
        sum: fc.constant(rest.sum),
        positiveSpans: fc.constant(rest.positiveSpans),
        positiveBuckets: fc.array(count, {
          minLength: covered(rest.positiveSpans),
          maxLength: covered(rest.positiveSpans),
        }),
        negativeSpans: fc.constant(rest.negativeSpans),
        negativeBuckets: fc.array(count, {
          minLength: covered(rest.negativeSpans),
          maxLength: covered(rest.negativeSpans),
        }),
        counterResetHint: fc.constant(rest.counterResetHint),
        customValues: fc.constant(custom ? customValues : []),
      });
    });
}

/**
 * The histograms of one series in time order, as agents send them: mostly the layout of the one
 * before with counts grown by a little, now and then a new layout or a reset.
 */
export function histogramSeries(): fc.Arbitrary<TimedHistogram[]> {
  return fc
    .record({
      start: fc.integer({ min: 0, max: 4e12 }),
      steps: fc.array(
        fc.record({
          gapMs: fc.integer({ min: 0, max: 120_000 }),
          fresh: fc.option(nativeHistograms(), { freq: 4 }),
          growth: fc.nat({ max: 50 }),
        }),
        { maxLength: 30 },
      ),
      first: nativeHistograms(),
    })
    .map(({ start, steps, first }) => {
      const series: TimedHistogram[] = [{ timeMs: start, histogram: first }];
      for (const { gapMs, fresh, growth } of steps) {
        const last = series[series.length - 1]!;
        const grow = (value: number, i: number) => value + ((growth * (i + 1)) % 7);
        const histogram = fresh ?? {
          ...last.histogram,
          count: last.histogram.count + growth * 3,
          zeroCount: grow(last.histogram.zeroCount, 0),
          positiveBuckets: last.histogram.positiveBuckets.map(grow),
          negativeBuckets: last.histogram.negativeBuckets.map(grow),
          sum: last.histogram.sum + growth / 10,
        };
        series.push({ timeMs: last.timeMs + gapMs, histogram });
      }
      return series;
    });
}
