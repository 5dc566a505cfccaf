import type { AggregateOp } from './ast.js';
import { formatFloat } from './format-float.js';
import { heapPop, heapPush } from './binary-heap.js';
import type { Labels } from './labels.js';
import { keepLabels, metricNameLabel, withLabel, withoutLabels } from './labels.js';
import { executionError } from './promql-error.js';
import { quantile, valueLess } from './quantile.js';
import type { Sample, Vector } from './values.js';

type Group = {
  labels: Labels;
  value: number;
  mean: number;
  groupCount: number;
  heap: Sample[];
  values: number[];
};

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

function groupLabels(metric: Labels, grouping: readonly string[], without: boolean): Labels {
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
        value: s.v,
        mean: s.v,
        groupCount: 1,
        heap: [],
        values: [],
      };
      if (op === 'stddev' || op === 'stdvar') fresh.value = 0;
      else if (op === 'topk' || op === 'bottomk') fresh.heap = [{ metric: s.metric, t: 0, v: s.v }];
      else if (op === 'quantile') fresh.values = [s.v];
      else if (op === 'group') fresh.value = 1;
      result.set(key, fresh);
      ordered.push(fresh);
      return;
    }
    switch (op) {
      case 'sum':
        group.value += s.v;
        break;
      case 'avg':
        group.groupCount++;
        if (!Number.isFinite(group.mean) && !Number.isNaN(group.mean)) {
          if (!Number.isFinite(s.v) && !Number.isNaN(s.v) && group.mean > 0 === s.v > 0) break;
          if (Number.isFinite(s.v)) break;
        }
        group.mean += s.v / group.groupCount - group.mean / group.groupCount;
        break;
      case 'group':
        break;
      case 'max':
        if (group.value < s.v || Number.isNaN(group.value)) group.value = s.v;
        break;
      case 'min':
        if (group.value > s.v || Number.isNaN(group.value)) group.value = s.v;
        break;
      case 'count':
      case 'count_values':
        group.groupCount++;
        break;
      case 'stddev':
      case 'stdvar': {
        group.groupCount++;
        const delta = s.v - group.mean;
        group.mean += delta / group.groupCount;
        group.value += delta * (s.v - group.mean);
        break;
      }
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
    }
  });

  const out: Vector = [];
  for (const group of ordered) {
    switch (op) {
      case 'avg':
        group.value = group.mean;
        break;
      case 'count':
      case 'count_values':
        group.value = group.groupCount;
        break;
      case 'stdvar':
        group.value = group.value / group.groupCount;
        break;
      case 'stddev':
        group.value = Math.sqrt(group.value / group.groupCount);
        break;
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
      default:
        break;
    }
    out.push({ metric: group.labels, t: 0, v: group.value });
  }
  return out;
}
