import type { Labels } from './labels.js';
import type { Matrix, Point } from './values.js';

/**
 * Series over an evaluation's steps as numbers, step by step: series i's value at step k is
 * `values[k × rows + i]` where `present` holds 1 there. What a range function (rate, increase,
 * delta) hands an aggregation: a Point per series and step, and a Sample per series at each step
 * after it, cost a range query over 1,000 series more than the functions themselves, in
 * allocation and garbage collection (docs/benchmarks/promql.md, "PromQL"). Step by step, because an
 * aggregation reads every series at one step before the next: a tenth faster for that query than
 * series by series.
 */
export type StepMatrix = {
  metrics: Labels[];
  /** The steps' times, ms, as the evaluator counts them (start, then + interval each). */
  times: readonly number[];
  /** Series a step has room for (metrics.length or more). */
  rows: number;
  values: Float64Array;
  present: Uint8Array;
};

/** The times of the steps start..end, counted as the evaluator counts them (by adding). */
export function stepTimes(startMs: number, endMs: number, intervalMs: number): number[] {
  const times: number[] = [];
  for (let ts = startMs; ts <= endMs; ts += intervalMs) times.push(ts);
  return times;
}

export function emptyStepMatrix(times: readonly number[], rows: number): StepMatrix {
  return {
    metrics: [],
    times,
    rows,
    values: new Float64Array(rows * times.length),
    present: new Uint8Array(rows * times.length),
  };
}

/**
 * A matrix over the steps `times` as numbers, each point at the step of its time: walked as the
 * evaluator's step walk (rangeEval) walks it, an evaluated matrix holding points at step times
 * only.
 */
export function matrixSteps(matrix: Matrix, times: readonly number[]): StepMatrix {
  const steps = times.length;
  const out = emptyStepMatrix(times, matrix.length);
  matrix.forEach((series, i) => {
    out.metrics.push(series.metric);
    const { points } = series;
    let cursor = 0;
    for (let k = 0; k < steps && cursor < points.length; k++) {
      const point = points[cursor]!;
      if (point.t !== times[k]) continue;
      out.values[k * matrix.length + i] = point.v;
      out.present[k * matrix.length + i] = 1;
      cursor++;
    }
  });
  return out;
}

/** The matrix of a StepMatrix: each series with its present steps as points. */
export function stepsMatrix({ metrics, times, rows, values, present }: StepMatrix): Matrix {
  return metrics.map((metric, i) => {
    const points: Point[] = [];
    for (let k = 0, at = i; k < times.length; k++, at += rows) {
      if (present[at] === 1) points.push({ t: times[k]!, v: values[at]! });
    }
    return { metric, points };
  });
}
