import type { AggregateOp } from './ast.js';
import { formatFloat } from './format-float.js';
import { heapPop, heapPush } from './binary-heap.js';
import type { Labels } from './labels.js';
import { keepLabels, metricNameLabel, withLabel, withoutLabels } from './labels.js';
import type { FloatHistogram } from './float-histogram.js';
import { addHistogram, copyHistogram } from './float-histogram.js';
import { executionError } from './promql-error.js';
import { quantile, valueLess } from './quantile.js';
import type { Sample, Vector } from './values.js';

/**
 * The running numbers of one group at one step, as Prometheus' groupedAggregation keeps them:
 * what sum, avg, count, group, min, max, stddev and stdvar fold each sample into.
 */
export type Fold = { value: number; mean: number; groupCount: number };

type Group = Fold & {
  labels: Labels;
  heap: Sample[];
  values: number[];
  /** sum's: whether floats and histograms were summed, and the histograms' sum. */
  hasFloat: boolean;
  hasHistogram: boolean;
  histogram: FloatHistogram | undefined;
};

/** The aggregations that fold each sample into a group's running numbers, and take no parameter. */
export type FoldingOp = 'sum' | 'avg' | 'count' | 'group' | 'min' | 'max' | 'stddev' | 'stdvar';

const foldingOps: ReadonlySet<AggregateOp> = new Set<FoldingOp>([
  'sum',
  'avg',
  'count',
  'group',
  'min',
  'max',
  'stddev',
  'stdvar',
]);

export function isFoldingOp(op: AggregateOp): op is FoldingOp {
  return foldingOps.has(op);
}

/** A group's numbers from its first sample, `v` (count_values counts as count does). */
export function startFold(op: AggregateOp, fold: Fold, v: number): void {
  fold.value = op === 'stddev' || op === 'stdvar' ? 0 : op === 'group' ? 1 : v;
  fold.mean = v;
  fold.groupCount = 1;
}

/** Folds the group's next sample, `v`, in Prometheus' order of operations. */
export function addToFold(op: FoldingOp | 'count_values', fold: Fold, v: number): void {
  switch (op) {
    case 'sum':
      fold.value += v;
      break;
    case 'avg':
      fold.groupCount++;
      if (!Number.isFinite(fold.mean) && !Number.isNaN(fold.mean)) {
        if (!Number.isFinite(v) && !Number.isNaN(v) && fold.mean > 0 === v > 0) break;
        if (Number.isFinite(v)) break;
      }
      fold.mean += v / fold.groupCount - fold.mean / fold.groupCount;
      break;
    case 'group':
      break;
    case 'max':
      if (fold.value < v || Number.isNaN(fold.value)) fold.value = v;
      break;
    case 'min':
      if (fold.value > v || Number.isNaN(fold.value)) fold.value = v;
      break;
    case 'count':
    case 'count_values':
      fold.groupCount++;
      break;
    case 'stddev':
    case 'stdvar': {
      fold.groupCount++;
      const delta = v - fold.mean;
      fold.mean += delta / fold.groupCount;
      fold.value += delta * (v - fold.mean);
      break;
    }
  }
}

/** The group's value once every sample is folded. */
export function foldedValue(op: FoldingOp | 'count_values', fold: Fold): number {
  switch (op) {
    case 'avg':
      return fold.mean;
    case 'count':
    case 'count_values':
      return fold.groupCount;
    case 'stdvar':
      return fold.value / fold.groupCount;
    case 'stddev':
      return Math.sqrt(fold.value / fold.groupCount);
    default:
      return fold.value;
  }
}

const topLess = (a: Sample, b: Sample): boolean => valueLess(a.v, b.v);
/** Prometheus' vectorByReverseValueHeap.Less. */
const bottomLess = (a: Sample, b: Sample): boolean => {
  if (Number.isNaN(a.v)) return true;
  return a.v > b.v;
};

const labelNamePattern = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The key of a series' group: `by` keeps the grouping labels, `without` drops them and the name. */
export function groupingKey(metric: Labels, grouping: readonly string[], without: boolean): string {
  if (without) {
    let key = '';
    for (const { name, value } of metric) {
      if (name === metricNameLabel || grouping.includes(name)) continue;
      key += `${name}\u0000${value}\u0001`;
    }
    return key;
  }
  if (grouping.length === 0) return '';
  let key = '';
  for (const { name, value } of metric) {
    if (grouping.includes(name)) key += `${name}\u0000${value}\u0001`;
  }
  return key;
}

/** The labels of a series' group: `by` keeps the grouping labels, `without` drops them and the name. */
export function groupLabels(metric: Labels, grouping: readonly string[], without: boolean): Labels {
  if (without) return withoutLabels(metric, [...grouping, metricNameLabel]);
  if (grouping.length > 0) return keepLabels(metric, grouping);
  return [];
}

/**
 * One step of an aggregation, as Prometheus 2.42's `aggregation` (same order of operations,
 * so the same floating-point results; the same heap moves, so the same topk on ties).
 * `keys` are the precomputed grouping keys of `vec`'s series.
 */
export function aggregate(
  op: AggregateOp,
  grouping: readonly string[],
  without: boolean,
  param: number | string | undefined,
  vec: Vector,
  keys: readonly string[],
): Vector {
  const result = new Map<string, Group>();
  const ordered: Group[] = [];
  let k = 0;
  if (op === 'topk' || op === 'bottomk') {
    const f = param as number;
    if (!(f >= -9.223372036854776e18 && f <= 9.223372036854776e18)) {
      throw executionError(`Scalar value ${formatFloat(f)} overflows int64`);
    }
    k = Math.trunc(f);
    if (k < 1) return [];
  }
  const q = op === 'quantile' ? (param as number) : 0;
  let valueLabel = '';
  let effectiveGrouping = grouping;
  if (op === 'count_values') {
    valueLabel = param as string;
    if (!labelNamePattern.test(valueLabel)) {
      throw executionError(`invalid label name ${JSON.stringify(valueLabel)}`);
    }
    if (!without) effectiveGrouping = [...grouping, valueLabel].sort();
  }

  vec.forEach((s, si) => {
    let metric = s.metric;
    let key: string;
    if (op === 'count_values') {
      metric = withLabel(metric, valueLabel, formatFloat(s.v));
      key = groupingKey(metric, effectiveGrouping, without);
    } else {
      key = keys[si]!;
    }
    const group = result.get(key);
    if (group === undefined) {
      const fresh: Group = {
        labels: groupLabels(metric, effectiveGrouping, without),
        value: 0,
        mean: 0,
        groupCount: 0,
        heap: [],
        values: [],
        hasFloat: s.h === undefined,
        hasHistogram: s.h !== undefined && op === 'sum',
        histogram: s.h !== undefined && op === 'sum' ? copyHistogram(s.h) : undefined,
      };
      startFold(op, fresh, s.v);
      if (op === 'topk' || op === 'bottomk') fresh.heap = [{ metric: s.metric, t: 0, v: s.v }];
      else if (op === 'quantile') fresh.values = [s.v];
      result.set(key, fresh);
      ordered.push(fresh);
      return;
    }
    switch (op) {
      case 'topk':
      case 'bottomk': {
        const less = op === 'topk' ? topLess : bottomLess;
        const top = group.heap[0]!;
        const better = op === 'topk' ? top.v < s.v : top.v > s.v;
        if (group.heap.length < k || better || Number.isNaN(top.v)) {
          const sample = { metric: s.metric, t: 0, v: s.v };
          if (group.heap.length === k) {
            if (k === 1) {
              group.heap[0] = sample;
              break;
            }
            heapPop(group.heap, less);
          }
          heapPush(group.heap, sample, less);
        }
        break;
      }
      case 'quantile':
        group.values.push(s.v);
        break;
      case 'sum':
        if (s.h === undefined) {
          group.hasFloat = true;
          group.value += s.v;
          break;
        }
        group.hasHistogram = true;
        // A sum that met floats first is dropped anyway: no histogram to add to then.
        if (group.histogram === undefined) break;
        // Added into the lower of the two schemas.
        if (s.h.schema >= group.histogram.schema) addHistogram(group.histogram, s.h);
        else group.histogram = addHistogram(copyHistogram(s.h), group.histogram);
        break;
      default:
        addToFold(op, group, s.v);
    }
  });

  const out: Vector = [];
  for (const group of ordered) {
    switch (op) {
      case 'topk':
      case 'bottomk': {
        const less = op === 'topk' ? topLess : bottomLess;
        // The heap keeps the weakest on top: reversed, the strongest come first.
        const sorted = [...group.heap].sort((a, b) => (less(b, a) ? -1 : less(a, b) ? 1 : 0));
        for (const s of sorted) out.push({ metric: s.metric, t: 0, v: s.v });
        continue;
      }
      case 'quantile':
        group.value = quantile(q, group.values);
        break;
      case 'sum':
        // As Prometheus 2.42: floats and histograms do not add up.
        if (group.hasFloat && group.hasHistogram) continue;
        if (group.histogram !== undefined) {
          out.push({ metric: group.labels, t: 0, v: group.value, h: group.histogram });
          continue;
        }
        break;
      default:
        group.value = foldedValue(op, group);
    }
    out.push({ metric: group.labels, t: 0, v: group.value });
  }
  return out;
}
