import { counterResets, extrapolatedRateOf } from './functions.js';
import { bucketsRate } from './series-buckets.js';
import type { LoadedSeries } from './loaded-series.js';
import { dropMetricName } from './labels.js';
import type { StepMatrix } from './step-matrix.js';
import { emptyStepMatrix } from './step-matrix.js';

/** Which of Prometheus' extrapolatedRate functions: rate, increase or delta. */
export type RateKind = { isCounter: boolean; isRate: boolean };

/**
 * What the evaluator checks as a range function runs: its deadline and its sample budget. The
 * Evaluator itself: its methods are the same functions in every query, where closures made per
 * query changed the call targets of the hot loop, which V8 then left unoptimized for part of
 * each query (~10 MB a query of boxed numbers over 1,000 series).
 */
export type EvalBudget = {
  checkDeadline(): void;
  /** Throws when a window of `samples` would hold more than the query may. */
  checkWindow(samples: number): void;
  /** Counts a series' results; throws past the query's limit. */
  addSamples(samples: number): void;
  /** Notes that an answer read a rollup tier of `widthMs` approximately. */
  markApproximate(widthMs: number): void;
};

/**
 * Ends the row a series filled in `out` with `results` values: kept, its metric name dropped
 * and its results counted, or, without a result, left to the next series (still all absent).
 * Returns the rows taken.
 */
export function endSeriesRow(
  out: StepMatrix,
  budget: EvalBudget,
  metric: LoadedSeries['metric'],
  results: number,
): 0 | 1 {
  if (results === 0) return 0;
  budget.addSamples(results);
  out.metrics.push(dropMetricName(metric));
  return 1;
}

/**
 * rate, increase or delta of each series over the steps `times`, on the loaded arrays: each
 * step's window is an index range, so no Point per sample and no window array per step (what
 * other range functions cost), and no Point per result for an aggregation to read (StepMatrix).
 * A series without a result at any step is left out, as from Prometheus' matrix; each result
 * drops the metric name.
 */
export function rateSteps(
  series: readonly LoadedSeries[],
  window: { offsetMs: number; rangeMs: number },
  kind: RateKind,
  times: readonly number[],
  budget: EvalBudget,
): StepMatrix {
  const { offsetMs, rangeMs } = window;
  const out = emptyStepMatrix(times, series.length);
  let row = 0;
  // One array of resets for every series, grown as needed: one of its own per series was 1,000
  // backing stores outside V8's heap a query, for its young collections (docs/benchmarks/promql.md).
  let resetsScratch = new Int32Array(0);
  for (const one of series) {
    budget.checkDeadline();
    const sampleTimes = one.pointTimes;
    const values = one.pointValues;
    const buckets = one.buckets;
    if (buckets === undefined && kind.isCounter && resetsScratch.length < values.length + 1) {
      resetsScratch = new Int32Array(Math.max(values.length + 1, resetsScratch.length * 2));
    }
    const resets =
      buckets === undefined && kind.isCounter ? counterResets(values, resetsScratch) : null;
    let results = 0;
    let lo = 0;
    let hi = 0;
    for (let k = 0; k < times.length; k++) {
      const maxt = times[k]! - offsetMs;
      const mint = maxt - rangeMs;
      while (lo < sampleTimes.length && sampleTimes[lo]! < mint) lo++;
      if (hi < lo) hi = lo;
      while (hi < sampleTimes.length && sampleTimes[hi]! <= maxt) hi++;
      if (hi <= lo) continue;
      budget.checkWindow(hi - lo);
      let v: number;
      if (buckets !== undefined) {
        // From a rollup tier: without every sample, never Prometheus' extrapolation.
        budget.markApproximate(buckets.widthMs);
        v = bucketsRate(sampleTimes, values, buckets, lo, hi, { mint, rangeMs }, kind);
        if (Number.isNaN(v)) continue;
      } else {
        if (hi - lo < 2) continue;
        v = extrapolatedRateOf(
          sampleTimes,
          values,
          resets,
          lo,
          hi,
          { rangeStart: mint, rangeEnd: maxt, rangeMs },
          kind.isRate,
        );
      }
      out.values[k * out.rows + row] = v;
      out.present[k * out.rows + row] = 1;
      results++;
    }
    row += endSeriesRow(out, budget, one.metric, results);
  }
  return out;
}
