import type { BinaryOp, VectorMatching } from './ast.js';
import { isComparison } from './ast.js';
import type { Labels } from './labels.js';
import {
  dropMetricName,
  getLabel,
  keepLabels,
  labelsKey,
  metricNameLabel,
  withLabel,
  withoutLabels,
} from './labels.js';
import { addHistogram, copyHistogram } from './float-histogram.js';
import { executionError } from './promql-error.js';
import type { Vector } from './values.js';

/** The signature two series match on: `on` keeps the listed labels, `ignoring` drops them and the name. */
export function matchSignature(metric: Labels, matching: VectorMatching): string {
  let key = '';
  if (matching.on) {
    for (const { name, value } of metric) {
      if (matching.matchingLabels.includes(name)) key += `${name}\u0000${value}\u0001`;
    }
    return key;
  }
  for (const { name, value } of metric) {
    if (name === metricNameLabel || matching.matchingLabels.includes(name)) continue;
    key += `${name}\u0000${value}\u0001`;
  }
  return key;
}

function shouldDropMetricName(op: BinaryOp): boolean {
  return op === '+' || op === '-' || op === '*' || op === '/' || op === '^' || op === '%';
}

/** Go's math.Mod: the sign of the dividend, NaN for a zero divisor or infinite dividend. */
function goMod(a: number, b: number): number {
  return a % b;
}

export function scalarBinop(op: BinaryOp, lhs: number, rhs: number): number {
  switch (op) {
    case '+':
      return lhs + rhs;
    case '-':
      return lhs - rhs;
    case '*':
      return lhs * rhs;
    case '/':
      return lhs / rhs;
    case '^':
      return goPow(lhs, rhs);
    case '%':
      return goMod(lhs, rhs);
    case '==':
      return lhs === rhs ? 1 : 0;
    case '!=':
      return lhs !== rhs ? 1 : 0;
    case '>':
      return lhs > rhs ? 1 : 0;
    case '<':
      return lhs < rhs ? 1 : 0;
    case '>=':
      return lhs >= rhs ? 1 : 0;
    case '<=':
      return lhs <= rhs ? 1 : 0;
    case 'atan2':
      return Math.atan2(lhs, rhs);
    default:
      throw executionError(`operator "${op}" not allowed for Scalar operations`);
  }
}

/** Go's math.Pow where it differs from JavaScript's: 1 to any power (NaN too) is 1, -1^±Inf is 1. */
function goPow(x: number, y: number): number {
  if (x === 1) return 1;
  if (x === -1 && !Number.isFinite(y) && !Number.isNaN(y)) return 1;
  return x ** y;
}

/** [value, keep] of one pair, as Prometheus' vectorElemBinop. */
function vectorElemBinop(op: BinaryOp, lhs: number, rhs: number): [number, boolean] {
  switch (op) {
    case '==':
      return [lhs, lhs === rhs];
    case '!=':
      return [lhs, lhs !== rhs];
    case '>':
      return [lhs, lhs > rhs];
    case '<':
      return [lhs, lhs < rhs];
    case '>=':
      return [lhs, lhs >= rhs];
    case '<=':
      return [lhs, lhs <= rhs];
    default:
      return [scalarBinop(op, lhs, rhs), true];
  }
}

/** Per-node caches of result label sets, kept across the steps of one evaluation. */
export type BinopCache = { resultMetrics: Map<string, Labels> };

function resultMetric(
  lhs: Labels,
  rhs: Labels,
  op: BinaryOp,
  matching: VectorMatching,
  cache: BinopCache,
): Labels {
  const key = `${labelsKey(lhs)}\u0002${labelsKey(rhs)}`;
  const cached = cache.resultMetrics.get(key);
  if (cached !== undefined) return cached;
  let out = lhs;
  if (shouldDropMetricName(op)) out = dropMetricName(out);
  if (matching.card === 'one-to-one') {
    out = matching.on
      ? keepLabels(out, matching.matchingLabels)
      : withoutLabels(out, matching.matchingLabels);
  }
  for (const name of matching.include) out = withLabel(out, name, getLabel(rhs, name));
  cache.resultMetrics.set(key, out);
  return out;
}

function describe(labels: Labels): string {
  return `{${labels.map((l) => `${l.name}=${JSON.stringify(l.value)}`).join(', ')}}`;
}

/** Arithmetic and comparison between two vectors (not and/or/unless). */
export function vectorBinop(
  op: BinaryOp,
  lhsIn: Vector,
  rhsIn: Vector,
  lhsSigs: readonly string[],
  rhsSigs: readonly string[],
  matching: VectorMatching,
  returnBool: boolean,
  cache: BinopCache,
): Vector {
  if (lhsIn.length === 0 || rhsIn.length === 0) return [];
  let lhs = lhsIn;
  let rhs = rhsIn;
  let lsigs = lhsSigs;
  let rsigs = rhsSigs;
  if (matching.card === 'one-to-many') {
    [lhs, rhs] = [rhs, lhs];
    [lsigs, rsigs] = [rsigs, lsigs];
  }
  const rightSigs = new Map<string, (typeof rhs)[number]>();
  rhs.forEach((rs, i) => {
    const sig = rsigs[i]!;
    const dupl = rightSigs.get(sig);
    if (dupl !== undefined) {
      const oneSide = matching.card === 'one-to-many' ? 'left' : 'right';
      const matched = matching.on
        ? keepLabels(rs.metric, matching.matchingLabels)
        : withoutLabels(rs.metric, [...matching.matchingLabels, metricNameLabel]);
      throw executionError(
        `found duplicate series for the match group ${describe(matched)} on the ${oneSide} hand-side of the operation: [${describe(rs.metric)}, ${describe(dupl.metric)}];many-to-many matching not allowed: matching labels must be unique on one side`,
      );
    }
    rightSigs.set(sig, rs);
  });
  const matchedSigs = new Map<string, Set<string> | null>();
  const out: Vector = [];
  lhs.forEach((ls, i) => {
    const sig = lsigs[i]!;
    const rs = rightSigs.get(sig);
    if (rs === undefined) return;
    let vl = ls.v;
    let vr = rs.v;
    let hl = ls.h;
    let hr = rs.h;
    if (matching.card === 'one-to-many') {
      [vl, vr] = [vr, vl];
      [hl, hr] = [hr, hl];
    }
    const [computed, keep] = vectorElemBinop(op, vl, vr);
    let value = computed;
    if (returnBool) value = keep ? 1 : 0;
    else if (!keep) return;
    let metric = resultMetric(ls.metric, rs.metric, op, matching, cache);
    if (returnBool) metric = dropMetricName(metric);
    const inserted = matchedSigs.get(sig);
    if (matching.card === 'one-to-one') {
      if (inserted !== undefined) {
        throw executionError(
          'multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)',
        );
      }
      matchedSigs.set(sig, null);
    } else {
      const insertSig = labelsKey(metric);
      let set = inserted;
      if (set === undefined || set === null) {
        set = new Set();
        matchedSigs.set(sig, set);
      } else if (set.has(insertSig)) {
        throw executionError(
          'multiple matches for labels: grouping labels must ensure unique matches',
        );
      }
      set.add(insertSig);
    }
    // As Prometheus 2.42: a histogram meets a float in nothing; two histograms add up (into the
    // lower schema) and otherwise compute on their values, 0.
    if ((hl === undefined) !== (hr === undefined)) return;
    if (op === '+' && hl !== undefined && hr !== undefined) {
      const h =
        hr.schema >= hl.schema
          ? addHistogram(copyHistogram(hl), hr)
          : addHistogram(copyHistogram(hr), hl);
      out.push({ metric, t: 0, v: 0, h });
      return;
    }
    out.push({ metric, t: 0, v: value });
  });
  return out;
}

export function vectorAnd(
  lhs: Vector,
  rhs: Vector,
  lsigs: readonly string[],
  rsigs: readonly string[],
): Vector {
  if (lhs.length === 0 || rhs.length === 0) return [];
  const right = new Set(rsigs);
  return lhs.filter((_, i) => right.has(lsigs[i]!));
}

export function vectorOr(
  lhs: Vector,
  rhs: Vector,
  lsigs: readonly string[],
  rsigs: readonly string[],
): Vector {
  if (lhs.length === 0) return [...rhs];
  if (rhs.length === 0) return [...lhs];
  const left = new Set(lsigs);
  return [...lhs, ...rhs.filter((_, j) => !left.has(rsigs[j]!))];
}

export function vectorUnless(
  lhs: Vector,
  rhs: Vector,
  lsigs: readonly string[],
  rsigs: readonly string[],
): Vector {
  if (lhs.length === 0 || rhs.length === 0) return [...lhs];
  const right = new Set(rsigs);
  return lhs.filter((_, i) => !right.has(lsigs[i]!));
}

/**
 * A vector against a scalar; `swap` when the scalar was on the left. A histogram computes on
 * its value (0) and, kept, stays what it was, as in Prometheus 2.42.
 */
export function vectorScalarBinop(
  op: BinaryOp,
  lhs: Vector,
  scalar: number,
  swap: boolean,
  returnBool: boolean,
): Vector {
  const out: Vector = [];
  for (const sample of lhs) {
    let lv = sample.v;
    let rv = scalar;
    if (swap) [lv, rv] = [rv, lv];
    let [value, keep] = vectorElemBinop(op, lv, rv);
    if (isComparison(op) && swap) value = rv;
    if (returnBool) {
      value = keep ? 1 : 0;
      keep = true;
    }
    if (keep) {
      const metric =
        shouldDropMetricName(op) || returnBool ? dropMetricName(sample.metric) : sample.metric;
      out.push(
        sample.h === undefined
          ? { metric, t: sample.t, v: value }
          : { metric, t: sample.t, v: value, h: sample.h },
      );
    }
  }
  return out;
}
