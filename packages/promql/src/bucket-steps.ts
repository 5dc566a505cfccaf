import type { LoadedSeries } from './loaded-series.js';
import type { EvalBudget } from './rate-steps.js';
import { endSeriesRow } from './rate-steps.js';
import type { BucketWindow, SeriesBuckets } from './series-buckets.js';
import { addUpBuckets, emptyBucketWindow } from './series-buckets.js';
import type { StepMatrix } from './step-matrix.js';
import { emptyStepMatrix } from './step-matrix.js';

/** A series read from a rollup tier, as bucketSteps reads it. */
export type TierSeries = LoadedSeries & { buckets: SeriesBuckets };

/**
 * A range function a tier answers from its buckets' aggregates (`fromBuckets`: count_over_time,
 * sum_over_time…) of each series over the steps `times`, as rateSteps does rate: each step's
 * window an index range into the points' times, its buckets added up (addUpBuckets, which says
 * where that is not what the raw samples add up to), no Point per sample or result. For 90 days
 * of 1,000 hourly series those Points were most of an answer's garbage. A series without a
 * result at any step is left out; each result drops the metric name.
 */
export function bucketSteps(
  series: readonly TierSeries[],
  window: { offsetMs: number; rangeMs: number },
  fromBuckets: (summed: BucketWindow) => number,
  times: readonly number[],
  budget: EvalBudget,
): StepMatrix {
  const { offsetMs, rangeMs } = window;
  const out = emptyStepMatrix(times, series.length);
  const summed = emptyBucketWindow();
  let row = 0;
  for (const one of series) {
    budget.checkDeadline();
    const { pointTimes, pointValues, buckets } = one;
    let results = 0;
    let lo = 0;
    let hi = 0;
    for (let k = 0; k < times.length; k++) {
      const maxt = times[k]! - offsetMs;
      const mint = maxt - rangeMs;
      while (lo < pointTimes.length && pointTimes[lo]! < mint) lo++;
      if (hi < lo) hi = lo;
      while (hi < pointTimes.length && pointTimes[hi]! <= maxt) hi++;
      if (hi <= lo) continue;
      if (!addUpBuckets(pointTimes, pointValues, buckets, lo, hi, mint, maxt, summed)) {
        budget.markApproximate(buckets.widthMs);
      }
      budget.checkWindow(hi - lo);
      out.values[k * out.rows + row] = fromBuckets(summed);
      out.present[k * out.rows + row] = 1;
      results++;
    }
    row += endSeriesRow(out, budget, one.metric, results);
  }
  return out;
}
