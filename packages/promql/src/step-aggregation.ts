import type { Fold, FoldingOp } from './aggregation.js';
import { addToFold, foldedValue, groupingKey, groupLabels, startFold } from './aggregation.js';
import type { Labels } from './labels.js';
import type { StepMatrix } from './step-matrix.js';
import type { Matrix } from './values.js';

/**
 * A folding aggregation (sum, avg, count, group, min, max, stddev, stdvar) over every step of
 * `input`, without a Sample per series and step: the same result as the evaluator's step walk
 * with `aggregate` at each step, to the bit. At each step the groups fold their series in the
 * series' order (the order of operations of Prometheus' aggregation) and come out in the order
 * of their first series present; the result's series come in the order they first appear.
 * Groups of different keys have different labels, so no step holds a label set twice.
 * `onStep` gets the samples each step produced, after it (the evaluator's deadline and budget).
 */
export function aggregateSteps(
  op: FoldingOp,
  grouping: readonly string[],
  without: boolean,
  input: StepMatrix,
  onStep: (samples: number) => void,
): Matrix {
  const { metrics, times, rows, values, present } = input;
  const steps = times.length;
  // Each series' group, numbered in the order of their first series.
  const groupOf = new Int32Array(metrics.length);
  const groupNumbers = new Map<string, number>();
  const groupLabelSets: Labels[] = [];
  metrics.forEach((metric, i) => {
    const key = groupingKey(metric, grouping, without);
    let group = groupNumbers.get(key);
    if (group === undefined) {
      group = groupLabelSets.length;
      groupNumbers.set(key, group);
      groupLabelSets.push(groupLabels(metric, grouping, without));
    }
    groupOf[i] = group;
  });
  const folds: Fold[] = groupLabelSets.map(() => ({ value: 0, mean: 0, groupCount: 0 }));
  const startedAtStep = new Int32Array(folds.length).fill(-1);
  const outIndex = new Int32Array(folds.length).fill(-1);
  const out: Matrix = [];
  const stepGroups: number[] = [];
  for (let k = 0; k < steps; k++) {
    stepGroups.length = 0;
    for (let i = 0, at = k * rows; i < metrics.length; i++, at++) {
      if (present[at] !== 1) continue;
      const group = groupOf[i]!;
      const fold = folds[group]!;
      if (startedAtStep[group] === k) {
        addToFold(op, fold, values[at]!);
      } else {
        startedAtStep[group] = k;
        startFold(op, fold, values[at]!);
        stepGroups.push(group);
      }
    }
    for (const group of stepGroups) {
      if (outIndex[group] === -1) {
        outIndex[group] = out.length;
        out.push({ metric: groupLabelSets[group]!, points: [] });
      }
      out[outIndex[group]!]!.points.push({ t: times[k]!, v: foldedValue(op, folds[group]!) });
    }
    onStep(stepGroups.length);
  }
  return out;
}
