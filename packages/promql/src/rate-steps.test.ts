import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { labelsFrom } from './labels.js';
import type { LoadedSeries } from './loaded-series.js';
import type { EvalBudget, RateKind } from './rate-steps.js';
import { rateSteps } from './rate-steps.js';
import { stepTimes } from './step-matrix.js';

const unlimited: EvalBudget = {
  checkDeadline() {},
  checkWindow() {},
  addSamples() {},
  markApproximate() {},
};

function loaded(i: number, values: number[]): LoadedSeries {
  const times = values.map((_, k) => 1_000_000 + k * 15_000 + ((k * 7) % 11));
  return {
    metric: labelsFrom({ __name__: 'bytes_total', i: String(i) }),
    timestamps: times,
    values,
    stale: undefined,
    pointTimes: times,
    pointValues: values,
    histograms: undefined,
    pointHistograms: undefined,
    buckets: undefined,
    points: [],
  };
}

/** A counter's values: rising, now and then reset to a small number. */
const counterArbitrary = fc.array(
  fc.oneof(
    { weight: 5, arbitrary: fc.integer({ min: 0, max: 500 }) },
    { weight: 1, arbitrary: fc.constant(-1) },
  ),
  { maxLength: 80 },
);

function asCounter(steps: number[]): number[] {
  let value = 0;
  return steps.map((step) => (value = step < 0 ? 3 : value + step));
}

describe('rateSteps', () => {
  it('answers each series of a query as it answers that series alone (one array of resets serves them all)', () => {
    const kinds: RateKind[] = [
      { isCounter: true, isRate: true },
      { isCounter: true, isRate: false },
      { isCounter: false, isRate: false },
    ];
    fc.assert(
      fc.property(
        fc.array(counterArbitrary, { maxLength: 6 }),
        fc.constantFrom(...kinds),
        (lists, kind) => {
          const series = lists.map((steps, i) => loaded(i, asCounter(steps)));
          const times = stepTimes(1_000_000, 1_000_000 + 80 * 15_000, 60_000);
          const window = { offsetMs: 0, rangeMs: 120_000 };
          const together = rateSteps(series, window, kind, times, unlimited);
          const alone = series.map((one) => rateSteps([one], window, kind, times, unlimited));
          const answered = alone.filter((each) => each.metrics.length > 0);
          expect(together.metrics).toEqual(answered.map((each) => each.metrics[0]));
          answered.forEach((each, row) => {
            times.forEach((_, k) => {
              expect(together.present[k * together.rows + row]).toBe(each.present[k]);
              expect(together.values[k * together.rows + row]).toBe(each.values[k]);
            });
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});
