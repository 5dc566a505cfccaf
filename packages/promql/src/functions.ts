import type { Expr, MatrixSelector } from './ast.js';
import type { FloatHistogram } from './float-histogram.js';
import {
  addHistogram,
  compactHistogram,
  copyToSchema,
  detectReset,
  scaleHistogram,
  subHistogram,
} from './float-histogram.js';
import { compileRe2Regexp } from './re2-regexp.js';
import type { Labels } from './labels.js';
import { dropMetricName, getLabel, labelsKey, metricNameLabel, withLabel } from './labels.js';
import { executionError } from './promql-error.js';
import type { Bucket } from './quantile.js';
import {
  bucketQuantile,
  kahanSumInc,
  nativeHistogramFraction,
  nativeHistogramQuantile,
  quantile,
} from './quantile.js';
import type { Matrix, Point, Vector } from './values.js';

/** Per-node state of one evaluation, kept across steps (Prometheus' EvalNodeHelper). */
export type EvalNodeHelper = {
  /** The step's evaluation time, ms. */
  ts: number;
  regex?: RegExp;
  outMetrics?: Map<string, Labels>;
};

/** An argument as a function gets it: a vector, or (range functions) a one-series matrix. */
export type FunctionArg = Vector | Matrix;
export type FunctionCall = (vals: FunctionArg[], args: Expr[], enh: EvalNodeHelper) => Vector;

const labelNamePattern = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export function unwrap(expr: Expr): Expr {
  let e = expr;
  while (e.kind === 'paren' || e.kind === 'step-invariant') e = e.expr;
  return e;
}

function matrixArg(vals: FunctionArg[], i: number): Point[] {
  return (vals[i] as Matrix)[0]!.points;
}

function scalarArg(vals: FunctionArg[], i: number): number {
  return (vals[i] as Vector)[0]!.v;
}

function stringArg(args: Expr[], i: number): string {
  const e = unwrap(args[i]!);
  if (e.kind !== 'string') throw executionError('expected a string argument');
  return e.value;
}

/**
 * Where a counter resets: for each index i of its values, the first j ≥ i whose value is below
 * the one before it, values.length when none. extrapolatedRateOf adds a window's resets by
 * jumping from one to the next instead of comparing every sample of the window at every step (a
 * fifth of a range query's rate over 1,000 series, docs/benchmarks/promql.md, "PromQL"); the same
 * resets in the same order, so the same sum to the bit. Written into `into` when given (its
 * first values.length + 1 entries), so that one array serves every series of a query.
 */
export function counterResets(
  values: ArrayLike<number>,
  into: Int32Array = new Int32Array(values.length + 1),
): Int32Array {
  const n = values.length;
  if (into.length < n + 1) throw new RangeError('counterResets: `into` holds too few entries');
  const next = into;
  next[n] = n;
  for (let i = n - 1; i >= 0; i--) {
    next[i] = i > 0 && values[i]! < values[i - 1]! ? i : next[i + 1]!;
  }
  return next;
}

/**
 * Prometheus' extrapolatedRate over the samples [lo, hi) of (times, values), two at least, in
 * time order and without staleness markers: rate, increase or delta of a window [rangeStart,
 * rangeEnd] (Prometheus answers nothing for fewer than two). A counter (rate, increase) comes
 * with its `resets` (counterResets of the same values); delta, which ignores resets, with null.
 * On arrays, so a range query need not make a Point per sample nor a window per step (the
 * evaluator's fast path for these three). Always a number: a result that could be null was
 * boxed at every step, ~6 MB a query over 1,000 series for the garbage collector.
 */
export function extrapolatedRateOf(
  times: ArrayLike<number>,
  values: ArrayLike<number>,
  resets: Int32Array | null,
  lo: number,
  hi: number,
  window: { rangeStart: number; rangeEnd: number; rangeMs: number },
  isRate: boolean,
): number {
  const firstV = values[lo]!;
  let resultValue = values[hi - 1]! - firstV;
  if (resets !== null) {
    // Prometheus adds the value before each drop, in time order.
    for (let i = resets[lo + 1]!; i < hi; i = resets[i + 1]!) resultValue += values[i - 1]!;
  }
  return extrapolate(
    hi - lo,
    times[lo]!,
    firstV,
    times[hi - 1]!,
    resultValue,
    window,
    resets !== null,
    isRate,
  );
}

/**
 * The rest of extrapolatedRate, once the window's `count` samples, its first and last, and
 * their difference (`resultValue`, counter resets added for a counter) are known: from the raw
 * samples or from a rollup tier's buckets. Scalars, not an object: this runs per series and step.
 */
function extrapolate(
  count: number,
  firstT: number,
  firstV: number,
  lastT: number,
  resultValue: number,
  window: { rangeStart: number; rangeEnd: number; rangeMs: number },
  isCounter: boolean,
  isRate: boolean,
): number {
  let durationToStart = (firstT - window.rangeStart) / 1000;
  const durationToEnd = (window.rangeEnd - lastT) / 1000;
  const sampledInterval = (lastT - firstT) / 1000;
  const averageDurationBetweenSamples = sampledInterval / (count - 1);
  if (isCounter && resultValue > 0 && firstV >= 0) {
    const durationToZero = sampledInterval * (firstV / resultValue);
    if (durationToZero < durationToStart) durationToStart = durationToZero;
  }
  const extrapolationThreshold = averageDurationBetweenSamples * 1.1;
  let extrapolateToInterval = sampledInterval;
  if (durationToStart < extrapolationThreshold) extrapolateToInterval += durationToStart;
  else extrapolateToInterval += averageDurationBetweenSamples / 2;
  if (durationToEnd < extrapolationThreshold) extrapolateToInterval += durationToEnd;
  else extrapolateToInterval += averageDurationBetweenSamples / 2;
  let factor = extrapolateToInterval / sampledInterval;
  if (isRate) factor /= window.rangeMs / 1000;
  return resultValue * factor;
}

function extrapolatedRate(
  vals: FunctionArg[],
  args: Expr[],
  enh: EvalNodeHelper,
  isCounter: boolean,
  isRate: boolean,
): Vector {
  const ms = unwrap(args[0]!) as MatrixSelector;
  const offset = ms.selector.offsetMs;
  const points = matrixArg(vals, 0);
  if (points.length < 2) return [];
  const window = {
    rangeStart: enh.ts - (ms.rangeMs + offset),
    rangeEnd: enh.ts - offset,
    rangeMs: ms.rangeMs,
  };
  if (points[0]!.h !== undefined) return histogramRateOf(points, window, isCounter, isRate);
  // As Prometheus 2.42: a window that mixes floats and histograms has no rate.
  if (points.some((p) => p.h !== undefined)) return [];
  const values = points.map((p) => p.v);
  const value = extrapolatedRateOf(
    points.map((p) => p.t),
    values,
    isCounter ? counterResets(values) : null,
    0,
    points.length,
    window,
    isRate,
  );
  return [{ metric: [], t: 0, v: value }];
}

/**
 * rate, increase or delta of a window of native histograms (Prometheus 2.42's histogramRate,
 * then extrapolated as floats are, without the zero-point limit): the last minus the first in
 * the lowest schema seen, each counter reset adding back what came before it. Nothing when the
 * window also holds floats.
 */
function histogramRateOf(
  points: Point[],
  window: { rangeStart: number; rangeEnd: number; rangeMs: number },
  isCounter: boolean,
  isRate: boolean,
): Vector {
  const first = points[0]!;
  const last = points[points.length - 1]!;
  if (last.h === undefined) return [];
  let minSchema = Math.min(first.h!.schema, last.h.schema);
  for (let i = 1; i < points.length - 1; i++) {
    const h = points[i]!.h;
    if (h === undefined) return [];
    if (isCounter && h.schema < minSchema) minSchema = h.schema;
  }
  const h = subHistogram(copyToSchema(last.h, minSchema), first.h!);
  if (isCounter) {
    let prev = first.h!;
    for (let i = 1; i < points.length; i++) {
      const curr = points[i]!.h!;
      if (detectReset(curr, prev)) addHistogram(h, prev);
      prev = curr;
    }
  }
  compactHistogram(h);
  // The factor extrapolate applies, read off a result of 1.
  const factor = extrapolate(points.length, first.t, 0, last.t, 1, window, false, isRate);
  return [{ metric: [], t: 0, v: 0, h: scaleHistogram(h, factor) }];
}

/** A float per histogram sample of a vector (floats skipped), the metric name dropped. */
function ofHistograms(vector: Vector, f: (h: FloatHistogram) => number): Vector {
  const out: Vector = [];
  for (const sample of vector) {
    if (sample.h === undefined) continue;
    out.push({ metric: dropMetricName(sample.metric), t: 0, v: f(sample.h) });
  }
  return out;
}

function instantValue(vals: FunctionArg[], isRate: boolean): Vector {
  const points = matrixArg(vals, 0);
  if (points.length < 2) return [];
  const last = points[points.length - 1]!;
  const previous = points[points.length - 2]!;
  let resultValue = isRate && last.v < previous.v ? last.v : last.v - previous.v;
  const sampledInterval = last.t - previous.t;
  if (sampledInterval === 0) return [];
  if (isRate) resultValue /= sampledInterval / 1000;
  return [{ metric: [], t: 0, v: resultValue }];
}

function overTime(vals: FunctionArg[], index: number, f: (points: Point[]) => number): Vector {
  return [{ metric: [], t: 0, v: f(matrixArg(vals, index)) }];
}

function simple(f: (v: number) => number): FunctionCall {
  return (vals) =>
    (vals[0] as Vector).map((el) => ({ metric: dropMetricName(el.metric), t: 0, v: f(el.v) }));
}

function linearRegression(points: Point[], interceptTime: number): [number, number] {
  let n = 0;
  let sumX = 0;
  let cX = 0;
  let sumY = 0;
  let cY = 0;
  let sumXY = 0;
  let cXY = 0;
  let sumX2 = 0;
  let cX2 = 0;
  const initY = points[0]!.v;
  let constY = true;
  points.forEach((p, i) => {
    if (constY && i > 0 && p.v !== initY) constY = false;
    n += 1;
    const x = (p.t - interceptTime) / 1e3;
    [sumX, cX] = kahanSumInc(x, sumX, cX);
    [sumY, cY] = kahanSumInc(p.v, sumY, cY);
    [sumXY, cXY] = kahanSumInc(x * p.v, sumXY, cXY);
    [sumX2, cX2] = kahanSumInc(x * x, sumX2, cX2);
  });
  if (constY) {
    if (!Number.isFinite(initY) && !Number.isNaN(initY)) return [NaN, NaN];
    return [0, initY];
  }
  sumX = sumX + cX;
  sumY = sumY + cY;
  sumXY = sumXY + cXY;
  sumX2 = sumX2 + cX2;
  const covXY = sumXY - (sumX * sumY) / n;
  const varX = sumX2 - (sumX * sumX) / n;
  const slope = covXY / varX;
  const intercept = sumY / n - (slope * sumX) / n;
  return [slope, intercept];
}

function avgOverTime(points: Point[]): number {
  let mean = 0;
  let count = 0;
  let c = 0;
  for (const { v } of points) {
    count++;
    if (!Number.isFinite(mean) && !Number.isNaN(mean)) {
      if (!Number.isFinite(v) && !Number.isNaN(v) && mean > 0 === v > 0) continue;
      if (Number.isFinite(v)) continue;
    }
    [mean, c] = kahanSumInc(v / count - mean / count, mean, c);
  }
  if (!Number.isFinite(mean) && !Number.isNaN(mean)) return mean;
  return mean + c;
}

function varianceOverTime(points: Point[]): number {
  let count = 0;
  let mean = 0;
  let cMean = 0;
  let aux = 0;
  let cAux = 0;
  for (const { v } of points) {
    count++;
    const delta = v - (mean + cMean);
    [mean, cMean] = kahanSumInc(delta / count, mean, cMean);
    [aux, cAux] = kahanSumInc(delta * (v - (mean + cMean)), aux, cAux);
  }
  return (aux + cAux) / count;
}

/** Labels `absent` gives: the selector's equality matchers, once each (Prometheus' rule). */
export function labelsForAbsent(expr: Expr): Labels {
  let e = expr;
  while (e.kind === 'paren') e = e.expr;
  const selector = e.kind === 'vector' ? e : e.kind === 'matrix' ? e.selector : null;
  if (selector === null) return [];
  let out: Labels = [];
  const has = new Set<string>();
  for (const m of selector.matchers) {
    if (m.name === metricNameLabel) continue;
    if (m.type === '=' && !has.has(m.name)) {
      out = withLabel(out, m.name, m.value);
      has.add(m.name);
    } else {
      out = withLabel(out, m.name, '');
    }
  }
  return out;
}

/**
 * Go's Regexp.ExpandString: `$1`, `${1}`, `$name`, `${name}`; `$$` is a dollar; a name is the
 * longest run of letters, digits and underscores, and a missing group expands to nothing.
 */
function expandTemplate(template: string, match: RegExpExecArray): string {
  let out = '';
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if (c !== '$' || i + 1 >= template.length) {
      out += c;
      continue;
    }
    const next = template[i + 1]!;
    if (next === '$') {
      out += '$';
      i++;
      continue;
    }
    let name: string;
    let end: number;
    if (next === '{') {
      const close = template.indexOf('}', i + 2);
      const inner = close === -1 ? '' : template.slice(i + 2, close);
      if (close === -1 || !/^[A-Za-z0-9_]+$/.test(inner)) {
        out += c;
        continue;
      }
      name = inner;
      end = close + 1;
    } else {
      const run = /^[A-Za-z0-9_]+/.exec(template.slice(i + 1));
      if (run === null) {
        out += c;
        continue;
      }
      name = run[0];
      end = i + 1 + name.length;
    }
    if (/^\d+$/.test(name)) out += match[Number(name)] ?? '';
    else out += match.groups?.[name] ?? '';
    i = end - 1;
  }
  return out;
}

function labelReplace(vals: FunctionArg[], args: Expr[], enh: EvalNodeHelper): Vector {
  const dst = stringArg(args, 1);
  const replacement = stringArg(args, 2);
  const src = stringArg(args, 3);
  const regexText = stringArg(args, 4);
  if (enh.regex === undefined) {
    try {
      enh.regex = compileRe2Regexp(regexText);
    } catch {
      throw executionError(`invalid regular expression in label_replace(): ${regexText}`);
    }
    if (!labelNamePattern.test(dst)) {
      throw executionError(`invalid destination label name in label_replace(): ${dst}`);
    }
    enh.outMetrics = new Map();
  }
  const regex = enh.regex;
  const cache = enh.outMetrics!;
  return (vals[0] as Vector).map((el) => {
    const key = labelsKey(el.metric);
    let metric = cache.get(key);
    if (metric === undefined) {
      const match = regex.exec(getLabel(el.metric, src));
      metric =
        match === null
          ? el.metric
          : withLabel(withLabel(el.metric, dst, ''), dst, expandTemplate(replacement, match));
      cache.set(key, metric);
    }
    return { metric, t: 0, v: el.v };
  });
}

function labelJoin(vals: FunctionArg[], args: Expr[], enh: EvalNodeHelper): Vector {
  const dst = stringArg(args, 1);
  const separator = stringArg(args, 2);
  const sources: string[] = [];
  for (let i = 3; i < args.length; i++) {
    const src = stringArg(args, i);
    if (!labelNamePattern.test(src)) {
      throw executionError(`invalid source label name in label_join(): ${src}`);
    }
    sources.push(src);
  }
  if (!labelNamePattern.test(dst)) {
    throw executionError(`invalid destination label name in label_join(): ${dst}`);
  }
  enh.outMetrics ??= new Map();
  const cache = enh.outMetrics;
  return (vals[0] as Vector).map((el) => {
    const key = labelsKey(el.metric);
    let metric = cache.get(key);
    if (metric === undefined) {
      const joined = sources.map((s) => getLabel(el.metric, s)).join(separator);
      metric = withLabel(el.metric, dst, joined);
      cache.set(key, metric);
    }
    return { metric, t: 0, v: el.v };
  });
}

function histogramQuantile(vals: FunctionArg[]): Vector {
  const q = scalarArg(vals, 0);
  const groups = new Map<string, { metric: Labels; buckets: Bucket[] }>();
  const histograms: Vector = [];
  for (const sample of vals[1] as Vector) {
    if (sample.h !== undefined) {
      histograms.push(sample);
      continue;
    }
    const le = getLabel(sample.metric, 'le');
    const upperBound = parseGoFloat(le);
    if (upperBound === undefined) continue;
    const rest = sample.metric.filter((l) => l.name !== 'le');
    const key = labelsKey(rest);
    let group = groups.get(key);
    if (group === undefined) {
      group = { metric: dropMetricName(rest), buckets: [] };
      groups.set(key, group);
    }
    group.buckets.push({ upperBound, count: sample.v });
  }
  const out: Vector = [];
  for (const sample of histograms) {
    // Classic buckets of the same series beside a native histogram: neither is answered.
    const key = labelsKey(sample.metric);
    if ((groups.get(key)?.buckets.length ?? 0) > 0) {
      groups.delete(key);
      continue;
    }
    const v = nativeHistogramQuantile(q, sample.h!);
    out.push({ metric: dropMetricName(sample.metric), t: 0, v });
  }
  for (const group of groups.values()) {
    if (group.buckets.length > 0) {
      out.push({ metric: group.metric, t: 0, v: bucketQuantile(q, group.buckets) });
    }
  }
  return out;
}

/** Go's strconv.ParseFloat for a bucket bound (`+Inf`, `1e3`, `0.5`); undefined if invalid. */
function parseGoFloat(text: string): number | undefined {
  if (/^[+-]?(inf|infinity)$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(text)) return NaN;
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return Number(text);
  if (/^[+-]?0[xX]/.test(text)) {
    const n = Number(text.replace(/^[+-]/, ''));
    if (Number.isNaN(n)) return undefined;
    return text.startsWith('-') ? -n : n;
  }
  return undefined;
}

function dateFunction(f: (d: Date) => number): FunctionCall {
  return (vals, _args, enh) => {
    if (vals.length === 0) {
      return [{ metric: [], t: 0, v: f(new Date(Math.trunc(enh.ts / 1000) * 1000)) }];
    }
    return (vals[0] as Vector).map((el) => ({
      metric: dropMetricName(el.metric),
      t: 0,
      v: f(new Date(Math.trunc(el.v) * 1000)),
    }));
  };
}

function sortBy(descending: boolean): FunctionCall {
  return (vals) => {
    const out = [...(vals[0] as Vector)];
    // NaN last either way, as Prometheus sorts.
    out.sort((a, b) => {
      if (Number.isNaN(a.v)) return Number.isNaN(b.v) ? 0 : 1;
      if (Number.isNaN(b.v)) return -1;
      return descending ? b.v - a.v : a.v - b.v;
    });
    return out;
  };
}

function goRound(v: number, toNearest: number): number {
  const inverse = 1.0 / toNearest;
  return Math.floor(v * inverse + 0.5) / inverse;
}

/** Go's math.Mod semantics are JavaScript's %; Go's math.Log etc. are Math's. */
export const functionCalls: Record<string, FunctionCall> = {
  abs: simple(Math.abs),
  absent: (vals, args) =>
    (vals[0] as Vector).length > 0 ? [] : [{ metric: labelsForAbsent(args[0]!), t: 0, v: 1 }],
  absent_over_time: () => [{ metric: [], t: 0, v: 1 }],
  acos: simple(Math.acos),
  acosh: simple(Math.acosh),
  asin: simple(Math.asin),
  asinh: simple(Math.asinh),
  atan: simple(Math.atan),
  atanh: simple(Math.atanh),
  avg_over_time: (vals) => overTime(vals, 0, avgOverTime),
  ceil: simple(Math.ceil),
  changes: (vals) =>
    overTime(vals, 0, (points) => {
      let changes = 0;
      let prev = points[0]!.v;
      for (let i = 1; i < points.length; i++) {
        const current = points[i]!.v;
        if (current !== prev && !(Number.isNaN(current) && Number.isNaN(prev))) changes++;
        prev = current;
      }
      return changes;
    }),
  clamp: (vals) => {
    const min = scalarArg(vals, 1);
    const max = scalarArg(vals, 2);
    if (max < min) return [];
    return (vals[0] as Vector).map((el) => ({
      metric: dropMetricName(el.metric),
      t: 0,
      v: goMax(min, goMin(max, el.v)),
    }));
  },
  clamp_max: (vals) => {
    const max = scalarArg(vals, 1);
    return (vals[0] as Vector).map((el) => ({
      metric: dropMetricName(el.metric),
      t: 0,
      v: goMin(max, el.v),
    }));
  },
  clamp_min: (vals) => {
    const min = scalarArg(vals, 1);
    return (vals[0] as Vector).map((el) => ({
      metric: dropMetricName(el.metric),
      t: 0,
      v: goMax(min, el.v),
    }));
  },
  cos: simple(Math.cos),
  cosh: simple(Math.cosh),
  count_over_time: (vals) => overTime(vals, 0, (points) => points.length),
  days_in_month: dateFunction((d) =>
    new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate(),
  ),
  day_of_month: dateFunction((d) => d.getUTCDate()),
  day_of_week: dateFunction((d) => d.getUTCDay()),
  day_of_year: dateFunction(
    (d) =>
      (Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) -
        Date.UTC(d.getUTCFullYear(), 0, 1)) /
        86400000 +
      1,
  ),
  deg: simple((v) => (v * 180) / Math.PI),
  delta: (vals, args, enh) => extrapolatedRate(vals, args, enh, false, false),
  deriv: (vals) => {
    const points = matrixArg(vals, 0);
    if (points.length < 2) return [];
    return [{ metric: [], t: 0, v: linearRegression(points, points[0]!.t)[0] }];
  },
  exp: simple(Math.exp),
  floor: simple(Math.floor),
  histogram_count: (vals) => ofHistograms(vals[0] as Vector, (h) => h.count),
  histogram_sum: (vals) => ofHistograms(vals[0] as Vector, (h) => h.sum),
  histogram_fraction: (vals) => {
    const lower = scalarArg(vals, 0);
    const upper = scalarArg(vals, 1);
    return ofHistograms(vals[2] as Vector, (h) => nativeHistogramFraction(lower, upper, h));
  },
  histogram_quantile: (vals) => histogramQuantile(vals),
  holt_winters: (vals) => {
    const points = matrixArg(vals, 0);
    const sf = scalarArg(vals, 1);
    const tf = scalarArg(vals, 2);
    if (sf <= 0 || sf >= 1) {
      throw executionError(`invalid smoothing factor. Expected: 0 < sf < 1, got: ${sf.toFixed(6)}`);
    }
    if (tf <= 0 || tf >= 1) {
      throw executionError(`invalid trend factor. Expected: 0 < tf < 1, got: ${tf.toFixed(6)}`);
    }
    if (points.length < 2) return [];
    let s0 = 0;
    let s1 = points[0]!.v;
    let b = points[1]!.v - points[0]!.v;
    for (let i = 1; i < points.length; i++) {
      const x = sf * points[i]!.v;
      b = i - 1 === 0 ? b : tf * (s1 - s0) + (1 - tf) * b;
      const y = (1 - sf) * (s1 + b);
      s0 = s1;
      s1 = x + y;
    }
    return [{ metric: [], t: 0, v: s1 }];
  },
  hour: dateFunction((d) => d.getUTCHours()),
  idelta: (vals) => instantValue(vals, false),
  increase: (vals, args, enh) => extrapolatedRate(vals, args, enh, true, false),
  irate: (vals) => instantValue(vals, true),
  label_replace: labelReplace,
  label_join: labelJoin,
  last_over_time: (vals) => {
    const series = (vals[0] as Matrix)[0]!;
    return [{ metric: series.metric, t: 0, v: series.points[series.points.length - 1]!.v }];
  },
  ln: simple(Math.log),
  log10: simple(Math.log10),
  log2: simple(Math.log2),
  max_over_time: (vals) =>
    overTime(vals, 0, (points) => {
      let max = points[0]!.v;
      for (const { v } of points) if (v > max || Number.isNaN(max)) max = v;
      return max;
    }),
  min_over_time: (vals) =>
    overTime(vals, 0, (points) => {
      let min = points[0]!.v;
      for (const { v } of points) if (v < min || Number.isNaN(min)) min = v;
      return min;
    }),
  minute: dateFunction((d) => d.getUTCMinutes()),
  month: dateFunction((d) => d.getUTCMonth() + 1),
  pi: () => [{ metric: [], t: 0, v: Math.PI }],
  predict_linear: (vals, _args, enh) => {
    const points = matrixArg(vals, 0);
    const duration = scalarArg(vals, 1);
    if (points.length < 2) return [];
    const [slope, intercept] = linearRegression(points, enh.ts);
    return [{ metric: [], t: 0, v: slope * duration + intercept }];
  },
  present_over_time: (vals) => overTime(vals, 0, () => 1),
  quantile_over_time: (vals) => {
    const q = scalarArg(vals, 0);
    return [
      {
        metric: [],
        t: 0,
        v: quantile(
          q,
          matrixArg(vals, 1).map((p) => p.v),
        ),
      },
    ];
  },
  rad: simple((v) => (v * Math.PI) / 180),
  rate: (vals, args, enh) => extrapolatedRate(vals, args, enh, true, true),
  resets: (vals) =>
    overTime(vals, 0, (points) => {
      let resets = 0;
      let prev = points[0]!.v;
      for (let i = 1; i < points.length; i++) {
        const current = points[i]!.v;
        if (current < prev) resets++;
        prev = current;
      }
      return resets;
    }),
  round: (vals, args) => {
    const toNearest = args.length >= 2 ? scalarArg(vals, 1) : 1;
    return (vals[0] as Vector).map((el) => ({
      metric: dropMetricName(el.metric),
      t: 0,
      v: goRound(el.v, toNearest),
    }));
  },
  scalar: (vals) => {
    const v = vals[0] as Vector;
    return [{ metric: [], t: 0, v: v.length === 1 ? v[0]!.v : NaN }];
  },
  sgn: simple((v) => (v < 0 ? -1 : v > 0 ? 1 : v)),
  sin: simple(Math.sin),
  sinh: simple(Math.sinh),
  sort: sortBy(false),
  sort_desc: sortBy(true),
  sqrt: simple(Math.sqrt),
  stddev_over_time: (vals) => overTime(vals, 0, (points) => Math.sqrt(varianceOverTime(points))),
  stdvar_over_time: (vals) => overTime(vals, 0, varianceOverTime),
  sum_over_time: (vals) =>
    overTime(vals, 0, (points) => {
      let sum = 0;
      let c = 0;
      for (const { v } of points) [sum, c] = kahanSumInc(v, sum, c);
      if (!Number.isFinite(sum) && !Number.isNaN(sum)) return sum;
      return sum + c;
    }),
  tan: simple(Math.tan),
  tanh: simple(Math.tanh),
  time: (_vals, _args, enh) => [{ metric: [], t: 0, v: enh.ts / 1000 }],
  timestamp: (vals) =>
    (vals[0] as Vector).map((el) => ({ metric: dropMetricName(el.metric), t: 0, v: el.t / 1000 })),
  vector: (vals) => [{ metric: [], t: 0, v: scalarArg(vals, 0) }],
  year: dateFunction((d) => d.getUTCFullYear()),
};

/** Go's math.Max: NaN wins, +0 beats -0. */
function goMax(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return NaN;
  return Math.max(a, b);
}

function goMin(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return NaN;
  return Math.min(a, b);
}
