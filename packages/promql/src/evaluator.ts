import type { Expr, MatrixSelector, SubqueryExpr, VectorSelector } from './ast.js';
import { isSetOperator, typeOf } from './ast.js';
import { aggregate, groupingKey, isFoldingOp } from './aggregation.js';
import type { EvalNodeHelper, FunctionArg } from './functions.js';
import { functionCalls, labelsForAbsent, unwrap } from './functions.js';
import type { FloatHistogram } from './float-histogram.js';
import type { Labels } from './labels.js';
import { dropMetricName, labelsKey } from './labels.js';
import { setOffsetForAtModifier } from './preprocess.js';
import { executionError, PromqlError } from './promql-error.js';
import type { EvalBudget, RateKind } from './rate-steps.js';
import { rateSteps } from './rate-steps.js';
import type { BucketWindow, SeriesBuckets } from './series-buckets.js';
import { addUpBuckets, bucketEndOf, emptyBucketWindow } from './series-buckets.js';
import type { TierSeries } from './bucket-steps.js';
import { bucketSteps } from './bucket-steps.js';
import { aggregateSteps } from './step-aggregation.js';
import type { StepMatrix } from './step-matrix.js';
import { matrixSteps, stepsMatrix, stepTimes } from './step-matrix.js';
import type { BinopCache } from './vector-binops.js';
import {
  matchSignature,
  scalarBinop,
  vectorAnd,
  vectorBinop,
  vectorOr,
  vectorScalarBinop,
  vectorUnless,
} from './vector-binops.js';
import type { LoadedSeries } from './loaded-series.js';
import type { Matrix, Point, Series, Vector } from './values.js';

/** What one query's evaluators share: the loaded data and the limits. */
export type EvalContext = {
  data: Map<VectorSelector, LoadedSeries[]>;
  lookbackMs: number;
  /** The step of a subquery written without one (`[5m:]`): Prometheus' evaluation_interval. */
  defaultSubqueryStepMs: number;
  maxSamples: number;
  /** Epoch ms after which evaluation stops with a timeout. */
  deadlineMs: number;
  now: () => number;
  currentSamples: number;
  /** The widths of the rollup tiers some answer read approximately (see series-buckets.ts). */
  approximateTiersMs: Set<number>;
  /** The tiers `max_source_resolution=auto` read beyond the raw samples. */
  autoTiersMs: Set<number>;
};

type EvalValue = Matrix | { string: string };

/** Where an instant selector reads a series, step after step: see sampleAt. */
type SampleCursor = { i: number; j: number };

/**
 * What a range function reads: a range selector's series, or a subquery's results in their
 * place, with the window each step looks back over. `heldSamples` are the subquery's samples,
 * held only while the function runs.
 */
type RangeInput = {
  series: LoadedSeries[];
  offsetMs: number;
  rangeMs: number;
  heldSamples: number;
};

/** A subquery's result series as a range function reads it: every point, NaN values included. */
function loadedFromPoints(series: Series): LoadedSeries {
  const times = new Float64Array(series.points.length);
  const values = new Float64Array(series.points.length);
  let histograms: (FloatHistogram | undefined)[] | undefined;
  series.points.forEach((p, i) => {
    times[i] = p.t;
    values[i] = p.v;
    if (p.h !== undefined) (histograms ??= new Array<undefined>(times.length))[i] = p.h;
  });
  return {
    metric: series.metric,
    timestamps: times,
    values,
    // No point of a computed series is a staleness marker, NaN values included.
    stale: new Uint8Array(times.length),
    pointTimes: times,
    pointValues: values,
    histograms,
    pointHistograms: histograms,
    buckets: undefined,
    points: series.points,
  };
}

/**
 * The range functions a rollup tier answers from its buckets' aggregates: exactly at windows
 * of whole buckets (sums added in another order than Prometheus', so to the last bits). Others
 * read the buckets' last samples (series-buckets.ts).
 */
const bucketFunctions = new Map<string, (window: BucketWindow) => number>([
  ['count_over_time', (w) => w.count],
  ['sum_over_time', (w) => w.sum],
  ['avg_over_time', (w) => w.sum / w.count],
  ['min_over_time', (w) => w.min],
  ['max_over_time', (w) => w.max],
]);

/** Range functions that read only whether a window has samples, or its last one. */
const exactOnLastSamples = new Set(['last_over_time', 'present_over_time', 'absent_over_time']);

/** The range functions evaluated on arrays (Prometheus' extrapolatedRate). */
const rateKinds = new Map<string, RateKind>([
  ['rate', { isCounter: true, isRate: true }],
  ['increase', { isCounter: true, isRate: false }],
  ['delta', { isCounter: false, isRate: false }],
]);

const tooManySamples =
  'query processing would load too many samples into memory in query execution';

/** A point at `t` with the value (float or histogram) of `sample`. */
function pointOf(t: number, sample: { v: number; h?: FloatHistogram }): Point {
  return sample.h === undefined ? { t, v: sample.v } : { t, v: sample.v, h: sample.h };
}

function isString(value: EvalValue): value is { string: string } {
  return !Array.isArray(value);
}

function containsSameLabelset(samples: readonly { metric: Labels }[]): boolean {
  if (samples.length < 2) return false;
  const seen = new Set<string>();
  for (const s of samples) {
    const key = labelsKey(s.metric);
    if (seen.has(key)) return true;
    seen.add(key);
  }
  return false;
}

/**
 * Prometheus 2.42's evaluator, ported: every node evaluates to a matrix over the steps
 * start..end (an instant query is one step), with the same selection rules (lookback, inclusive
 * range bounds, staleness markers), the same per-step semantics and the same errors.
 */
export class Evaluator implements EvalBudget {
  constructor(
    private readonly ctx: EvalContext,
    readonly startMs: number,
    readonly endMs: number,
    readonly intervalMs: number,
  ) {}

  checkDeadline(): void {
    if (this.ctx.now() > this.ctx.deadlineMs) {
      throw new PromqlError('timeout', 'query timed out in expression evaluation');
    }
  }

  addSamples(count: number): void {
    this.ctx.currentSamples += count;
    if (this.ctx.currentSamples > this.ctx.maxSamples) throw executionError(tooManySamples);
  }

  markApproximate(widthMs: number): void {
    this.ctx.approximateTiersMs.add(widthMs);
  }

  checkWindow(samples: number): void {
    if (this.ctx.currentSamples + samples > this.ctx.maxSamples) {
      throw executionError(tooManySamples);
    }
  }

  private get numSteps(): number {
    return Math.floor((this.endMs - this.startMs) / this.intervalMs) + 1;
  }

  private loaded(selector: VectorSelector): LoadedSeries[] {
    const series = this.ctx.data.get(selector);
    if (series === undefined) throw new Error('selector without loaded data');
    return series;
  }

  eval(expr: Expr): EvalValue {
    this.checkDeadline();
    switch (expr.kind) {
      case 'aggregate':
        return this.evalAggregate(expr);
      case 'call':
        return this.evalCall(expr);
      case 'paren':
        return this.eval(expr.expr);
      case 'unary': {
        const mat = this.matrix(expr.expr);
        if (expr.op === '-') {
          for (const series of mat) {
            series.metric = dropMetricName(series.metric);
            for (const p of series.points) p.v = -p.v;
          }
          if (containsSameLabelset(mat)) {
            throw executionError('vector cannot contain metrics with the same labelset');
          }
        }
        return mat;
      }
      case 'binary':
        return this.evalBinary(expr);
      case 'number':
        return this.rangeEval(null, () => [{ metric: [], t: 0, v: expr.value }], []);
      case 'string':
        return { string: expr.value };
      case 'vector':
        return this.evalVectorSelector(expr);
      case 'matrix':
        if (this.startMs !== this.endMs) {
          throw executionError('cannot do range evaluation of matrix selector');
        }
        return this.matrixSelector(expr);
      case 'subquery':
        return this.evalSubquery(expr);
      case 'step-invariant':
        return this.evalStepInvariant(expr.expr);
    }
  }

  /**
   * Prometheus' subquery evaluation: the inner expression is evaluated as a range query whose
   * steps are multiples of the subquery step in absolute time, from the first one at or after
   * (start - offset - range) to (end - offset); each point keeps its own time.
   */
  private evalSubquery(expr: SubqueryExpr): Matrix {
    const offsetMs = expr.offsetMs;
    const intervalMs = expr.stepMs !== 0 ? expr.stepMs : this.ctx.defaultSubqueryStepMs;
    const from = this.startMs - offsetMs - expr.rangeMs;
    // Go's integer division truncates toward zero; the correction below makes it a ceiling.
    let startMs = intervalMs * Math.trunc(from / intervalMs);
    if (startMs < from) startMs += intervalMs;
    if (startMs !== this.startMs) setOffsetForAtModifier(expr.expr, startMs);
    const inner = new Evaluator(this.ctx, startMs, this.endMs - offsetMs, intervalMs);
    return inner.matrix(expr.expr);
  }

  /** The series a range function reads, from a range selector or from a subquery. */
  private rangeInput(arg: Expr): RangeInput {
    const e = unwrap(arg);
    if (e.kind === 'matrix') {
      return {
        series: this.loaded(e.selector),
        offsetMs: e.selector.offsetMs,
        rangeMs: e.rangeMs,
        heldSamples: 0,
      };
    }
    if (e.kind !== 'subquery') throw new Error('range function without a range argument');
    const result = this.evalSubquery(e);
    let heldSamples = 0;
    for (const series of result) heldSamples += series.points.length;
    return {
      series: result.map(loadedFromPoints),
      // As Prometheus: a subquery with `@` is read relative to this evaluation's start.
      offsetMs: e.atMs === null ? e.offsetMs : e.originalOffsetMs + (this.startMs - e.atMs),
      rangeMs: e.rangeMs,
      heldSamples,
    };
  }

  /**
   * An instant vector expression over the steps as numbers: rate, increase and delta straight
   * from their windows (no Point per result), anything else from its matrix.
   */
  private overSteps(expr: Expr): StepMatrix {
    let e = expr;
    while (e.kind === 'paren') e = e.expr;
    const rateKind = e.kind === 'call' ? rateKinds.get(e.func.name) : undefined;
    if (e.kind === 'call' && rateKind !== undefined) {
      this.checkDeadline();
      return this.rateCall(e, rateKind);
    }
    const fromTier = e.kind === 'call' ? this.tierCall(e) : undefined;
    if (fromTier !== undefined) return fromTier;
    return matrixSteps(this.matrix(expr), stepTimes(this.startMs, this.endMs, this.intervalMs));
  }

  /** Whether any selector within expr loaded a series with native histograms. */
  private readsHistograms(expr: Expr): boolean {
    switch (expr.kind) {
      case 'vector':
        return this.loaded(expr).some((series) => series.histograms !== undefined);
      case 'matrix':
        return this.readsHistograms(expr.selector);
      case 'subquery':
      case 'paren':
      case 'unary':
      case 'step-invariant':
        return this.readsHistograms(expr.expr);
      case 'call':
        return expr.args.some((arg) => this.readsHistograms(arg));
      case 'aggregate':
        return this.readsHistograms(expr.expr);
      case 'binary':
        return this.readsHistograms(expr.lhs) || this.readsHistograms(expr.rhs);
      case 'number':
      case 'string':
        return false;
    }
  }

  private matrix(expr: Expr): Matrix {
    const value = this.eval(expr);
    if (isString(value)) throw executionError('unexpected string');
    return value;
  }

  /**
   * Evaluates `exprs` over every step and calls `fn` with their vectors at each one (string
   * expressions are not evaluated). `prepSeries` precomputes a key per input series (grouping
   * key or match signature), handed to `fn` beside the vectors.
   */
  private rangeEval(
    prepSeries: ((metric: Labels) => string) | null,
    fn: (vectors: Vector[], keys: string[][], ts: number) => Vector,
    exprs: (Expr | null)[],
  ): Matrix {
    const matrixes: (Matrix | null)[] = exprs.map((e) =>
      e !== null && typeOf(e) !== 'string' ? this.matrix(e) : null,
    );
    const cursors = matrixes.map((m) => (m === null ? [] : m.map(() => 0)));
    const seriesKeys = matrixes.map((m) =>
      m === null || prepSeries === null ? [] : m.map((s) => prepSeries(s.metric)),
    );
    const out = new Map<string, Series>();
    for (let ts = this.startMs; ts <= this.endMs; ts += this.intervalMs) {
      this.checkDeadline();
      const vectors: Vector[] = [];
      const keys: string[][] = [];
      // Loops written out: they run per series and step, where two forEach closures took a
      // seventh of the evaluation of `sum by (…) (rate(…))` over 1,000 series.
      for (let i = 0; i < matrixes.length; i++) {
        const m = matrixes[i]!;
        const vector: Vector = [];
        const stepKeys: string[] = [];
        if (m !== null) {
          const cursor = cursors[i]!;
          const mKeys = seriesKeys[i]!;
          for (let si = 0; si < m.length; si++) {
            const series = m[si]!;
            const point = series.points[cursor[si]!];
            if (point !== undefined && point.t === ts) {
              vector.push(
                point.h === undefined
                  ? { metric: series.metric, t: point.t, v: point.v }
                  : { metric: series.metric, t: point.t, v: point.v, h: point.h },
              );
              if (prepSeries !== null) stepKeys.push(mKeys[si]!);
              cursor[si]! += 1;
            }
          }
        }
        vectors.push(vector);
        keys.push(stepKeys);
      }
      const result = fn(vectors, keys, ts);
      if (containsSameLabelset(result)) {
        throw executionError('vector cannot contain metrics with the same labelset');
      }
      this.addSamples(result.length);
      if (this.startMs === this.endMs) {
        return result.map((s) => ({ metric: s.metric, points: [pointOf(ts, s)] }));
      }
      for (const sample of result) {
        const key = labelsKey(sample.metric);
        let series = out.get(key);
        if (series === undefined) {
          series = { metric: sample.metric, points: [] };
          out.set(key, series);
        }
        series.points.push(pointOf(ts, sample));
      }
    }
    return [...out.values()];
  }

  private evalAggregate(expr: Extract<Expr, { kind: 'aggregate' }>): Matrix {
    const grouping = [...expr.grouping].sort();
    const op = expr.op;
    // The steps as numbers know no histograms.
    if (expr.param === null && isFoldingOp(op) && !this.readsHistograms(expr.expr)) {
      return aggregateSteps(op, grouping, expr.without, this.overSteps(expr.expr), (samples) => {
        this.checkDeadline();
        this.addSamples(samples);
      });
    }
    const prep = (metric: Labels): string => groupingKey(metric, grouping, expr.without);
    const param = expr.param === null ? null : unwrap(expr.param);
    if (param !== null && param.kind === 'string') {
      return this.rangeEval(
        prep,
        (v, keys) => aggregate(expr.op, grouping, expr.without, param.value, v[0]!, keys[0]!),
        [expr.expr],
      );
    }
    return this.rangeEval(
      prep,
      (v, keys) => {
        const p = expr.param === null ? undefined : v[0]![0]!.v;
        return aggregate(expr.op, grouping, expr.without, p, v[1]!, keys[1]!);
      },
      [expr.param, expr.expr],
    );
  }

  private evalBinary(expr: Extract<Expr, { kind: 'binary' }>): Matrix {
    const lt = typeOf(expr.lhs);
    const rt = typeOf(expr.rhs);
    if (lt === 'scalar' && rt === 'scalar') {
      return this.rangeEval(
        null,
        (v) => [{ metric: [], t: 0, v: scalarBinop(expr.op, v[0]![0]!.v, v[1]![0]!.v) }],
        [expr.lhs, expr.rhs],
      );
    }
    if (lt === 'vector' && rt === 'vector') {
      const matching = expr.matching!;
      const sig = (metric: Labels): string => matchSignature(metric, matching);
      if (isSetOperator(expr.op)) {
        const set = expr.op === 'and' ? vectorAnd : expr.op === 'or' ? vectorOr : vectorUnless;
        return this.rangeEval(sig, (v, k) => set(v[0]!, v[1]!, k[0]!, k[1]!), [expr.lhs, expr.rhs]);
      }
      const cache: BinopCache = { resultMetrics: new Map() };
      return this.rangeEval(
        sig,
        (v, k) =>
          vectorBinop(expr.op, v[0]!, v[1]!, k[0]!, k[1]!, matching, expr.returnBool, cache),
        [expr.lhs, expr.rhs],
      );
    }
    if (lt === 'vector') {
      return this.rangeEval(
        null,
        (v) => vectorScalarBinop(expr.op, v[0]!, v[1]![0]!.v, false, expr.returnBool),
        [expr.lhs, expr.rhs],
      );
    }
    return this.rangeEval(
      null,
      (v) => vectorScalarBinop(expr.op, v[1]!, v[0]![0]!.v, true, expr.returnBool),
      [expr.lhs, expr.rhs],
    );
  }

  /** The sample of one series an instant selector sees at `refTime` (lookback, staleness). */
  private sampleAt(series: LoadedSeries, refTime: number, cursor: SampleCursor): Point | null {
    const { timestamps, values, buckets, histograms } = series;
    // cursor.i: index of the first sample after refTime, found by moving forward (steps only grow).
    while (cursor.i < timestamps.length && timestamps[cursor.i]! <= refTime) cursor.i++;
    if (buckets !== undefined) this.checkTierSample(buckets, series.pointTimes, refTime, cursor);
    const last = cursor.i - 1;
    if (last < 0) return null;
    const t = timestamps[last]!;
    if (t < refTime - this.ctx.lookbackMs) return null;
    const v = values[last]!;
    if (series.stale === undefined ? Number.isNaN(v) : series.stale[last] === 1) return null;
    const h = histograms?.[last];
    return h === undefined ? { t, v } : { t, v, h };
  }

  /**
   * Whether an instant selector at refTime reads a rollup tier as it would the raw samples:
   * unless the bucket after refTime holds samples before it, or the tier's times are bucket
   * ends and the lookback is not a number of buckets.
   */
  private checkTierSample(
    buckets: SeriesBuckets,
    bucketLasts: ArrayLike<number>,
    refTime: number,
    cursor: SampleCursor,
  ): void {
    const w = buckets.widthMs;
    while (cursor.j < bucketLasts.length && bucketLasts[cursor.j]! <= refTime) cursor.j++;
    const inside =
      cursor.j < bucketLasts.length && bucketEndOf(bucketLasts[cursor.j]!, w) - w < refTime;
    if (inside || (!buckets.exactTimes && this.ctx.lookbackMs % w !== 0)) {
      this.markApproximate(w);
    }
  }

  private evalVectorSelector(selector: VectorSelector): Matrix {
    const out: Matrix = [];
    for (const series of this.loaded(selector)) {
      this.checkDeadline();
      const points: Point[] = [];
      const cursor = { i: 0, j: 0 };
      for (let ts = this.startMs; ts <= this.endMs; ts += this.intervalMs) {
        const sample = this.sampleAt(series, ts - selector.offsetMs, cursor);
        if (sample !== null) points.push(pointOf(ts, sample));
      }
      this.addSamples(points.length);
      if (points.length > 0) out.push({ metric: series.metric, points });
    }
    return out;
  }

  /** An instant selector at one step, keeping each sample's own time (for timestamp()). */
  private vectorSelectorAt(selector: VectorSelector, refTime: number): Vector {
    const out: Vector = [];
    for (const series of this.loaded(selector)) {
      // A tier that keeps bucket ends for times does not know the samples' own.
      if (series.buckets?.exactTimes === false) this.markApproximate(series.buckets.widthMs);
      const sample = this.sampleAt(series, refTime, { i: 0, j: 0 });
      if (sample !== null) out.push({ metric: series.metric, ...sample });
    }
    this.addSamples(out.length);
    return out;
  }

  private matrixSelector(expr: MatrixSelector): Matrix {
    const maxt = this.startMs - expr.selector.offsetMs;
    const mint = maxt - expr.rangeMs;
    const out: Matrix = [];
    for (const series of this.loaded(expr.selector)) {
      this.checkDeadline();
      // A rollup tier's points are its buckets' last samples, not every sample.
      if (series.buckets !== undefined) this.markApproximate(series.buckets.widthMs);
      const points = series.points.filter((p) => p.t >= mint && p.t <= maxt).map((p) => ({ ...p }));
      this.addSamples(points.length);
      if (points.length > 0) out.push({ metric: series.metric, points });
    }
    return out;
  }

  private evalStepInvariant(inner: Expr): EvalValue {
    if (inner.kind === 'string' || inner.kind === 'number') return this.eval(inner);
    const once = new Evaluator(this.ctx, this.startMs, this.startMs, this.intervalMs);
    const value = once.eval(inner);
    // Range results keep their own times: nothing to repeat per step.
    if (isString(value) || inner.kind === 'matrix' || inner.kind === 'subquery') return value;
    for (const series of value) {
      const first = series.points[0]!;
      for (let ts = this.startMs + this.intervalMs; ts <= this.endMs; ts += this.intervalMs) {
        series.points.push(pointOf(ts, first));
      }
      this.addSamples(series.points.length - 1);
    }
    return value;
  }

  private evalCall(expr: Extract<Expr, { kind: 'call' }>): Matrix {
    const name = expr.func.name;
    const call = functionCalls[name];
    if (call === undefined) throw executionError(`function "${name}" is not implemented`);
    const enh: EvalNodeHelper = { ts: 0 };
    if (name === 'timestamp') {
      const arg = unwrap(expr.args[0]!);
      if (arg.kind === 'vector') {
        return this.rangeEval(
          null,
          (_v, _k, ts) => {
            // As Prometheus: with @, the selector is read at the @ time itself.
            const refTime = arg.atMs !== null ? arg.atMs : ts - arg.offsetMs;
            enh.ts = ts;
            return call([this.vectorSelectorAt(arg, refTime)], expr.args, enh);
          },
          [],
        );
      }
    }
    const matrixIndex = expr.args.findIndex((a) => {
      const kind = unwrap(a).kind;
      return kind === 'matrix' || kind === 'subquery';
    });
    if (matrixIndex === -1) {
      return this.rangeEval(
        null,
        (v, _k, ts) => {
          enh.ts = ts;
          return call(v, expr.args, enh);
        },
        expr.args,
      );
    }
    return this.evalRangeFunction(expr, matrixIndex, enh);
  }

  /** A function over a range selector: one series at a time, each step's window in turn. */
  private evalRangeFunction(
    expr: Extract<Expr, { kind: 'call' }>,
    matrixIndex: number,
    enh: EvalNodeHelper,
  ): Matrix {
    // The paths on arrays of floats know no histograms.
    if (!this.readsHistograms(expr)) {
      const rateKind = rateKinds.get(expr.func.name);
      if (rateKind !== undefined) return stepsMatrix(this.rateCall(expr, rateKind));
      const fromTier = this.tierCall(expr);
      if (fromTier !== undefined) return stepsMatrix(fromTier);
    }
    const input = this.rangeInput(expr.args[matrixIndex]!);
    try {
      return this.evalOverRange(expr, matrixIndex, input, enh);
    } finally {
      // As Prometheus: a subquery's results stop counting once the function has run.
      this.ctx.currentSamples -= input.heldSamples;
    }
  }

  /**
   * A function a tier answers from its buckets (bucketFunctions) of a selector whose every
   * series a tier gave, over the steps (bucketSteps); undefined for any other call.
   */
  private tierCall(expr: Extract<Expr, { kind: 'call' }>): StepMatrix | undefined {
    const fromBuckets = bucketFunctions.get(expr.func.name);
    const arg = expr.args[0] === undefined ? undefined : unwrap(expr.args[0]);
    if (fromBuckets === undefined || arg?.kind !== 'matrix') return undefined;
    const series = this.loaded(arg.selector);
    if (!series.every((one): one is TierSeries => one.buckets !== undefined)) return undefined;
    this.checkDeadline();
    const window = { offsetMs: arg.selector.offsetMs, rangeMs: arg.rangeMs };
    const times = stepTimes(this.startMs, this.endMs, this.intervalMs);
    const out = bucketSteps(series, window, fromBuckets, times, this);
    if (containsSameLabelset(out.metrics.map((metric) => ({ metric })))) {
      throw executionError('vector cannot contain metrics with the same labelset');
    }
    return out;
  }

  /** rate, increase or delta (`expr`, of kind `kind`) over the steps. */
  private rateCall(expr: Extract<Expr, { kind: 'call' }>, kind: RateKind): StepMatrix {
    const input = this.rangeInput(expr.args[0]!);
    try {
      const times = stepTimes(this.startMs, this.endMs, this.intervalMs);
      const out = rateSteps(input.series, input, kind, times, this);
      if (containsSameLabelset(out.metrics.map((metric) => ({ metric })))) {
        throw executionError('vector cannot contain metrics with the same labelset');
      }
      return out;
    } finally {
      // As Prometheus: a subquery's results stop counting once the function has run.
      this.ctx.currentSamples -= input.heldSamples;
    }
  }

  private evalOverRange(
    expr: Extract<Expr, { kind: 'call' }>,
    matrixIndex: number,
    input: RangeInput,
    enh: EvalNodeHelper,
  ): Matrix {
    const name = expr.func.name;
    const call = functionCalls[name]!;
    const otherArgs: (Matrix | null)[] = expr.args.map((arg, i) =>
      i === matrixIndex || typeOf(arg) === 'string' ? null : this.matrix(arg),
    );
    const offset = input.offsetMs;
    const range = input.rangeMs;
    const inArgs: FunctionArg[] = expr.args.map(() => []);
    const out: Matrix = [];
    const summed = emptyBucketWindow();
    for (const series of input.series) {
      this.checkDeadline();
      const metric = name === 'last_over_time' ? series.metric : dropMetricName(series.metric);
      const points: Point[] = [];
      // Windows found by the points' times: a Point per sample only for a function that reads
      // its window as points (not one a tier answers from its buckets).
      const times = series.pointTimes;
      const buckets = series.buckets;
      // Those that read only the last samples need each window checked bucket by bucket; those
      // that add up buckets are tierCall's (here only beside series read raw: approximate).
      const checkBuckets = buckets !== undefined && exactOnLastSamples.has(name);
      if (buckets !== undefined && !checkBuckets) this.markApproximate(buckets.widthMs);
      let lo = 0;
      let hi = 0;
      let step = -1;
      for (let ts = this.startMs; ts <= this.endMs; ts += this.intervalMs) {
        step++;
        otherArgs.forEach((m, j) => {
          if (m !== null) inArgs[j] = [{ metric: [], t: ts, v: m[0]!.points[step]!.v }];
        });
        const maxt = ts - offset;
        const mint = maxt - range;
        while (lo < times.length && times[lo]! < mint) lo++;
        if (hi < lo) hi = lo;
        while (hi < times.length && times[hi]! <= maxt) hi++;
        if (hi <= lo) continue;
        if (
          checkBuckets &&
          !addUpBuckets(series.pointTimes, series.pointValues, buckets, lo, hi, mint, maxt, summed)
        ) {
          this.markApproximate(buckets.widthMs);
        }
        const window = series.points.slice(lo, hi);
        if (this.ctx.currentSamples + window.length > this.ctx.maxSamples) {
          throw executionError(tooManySamples);
        }
        inArgs[matrixIndex] = [{ metric: series.metric, points: window }];
        enh.ts = ts;
        const result = call(inArgs, expr.args, enh);
        if (result.length > 0) points.push(pointOf(ts, result[0]!));
      }
      if (points.length > 0) {
        this.addSamples(points.length);
        out.push({ metric, points });
      }
    }
    if (name === 'absent_over_time') return this.absentOverTime(out, expr.args[0]!);
    if (containsSameLabelset(out)) {
      throw executionError('vector cannot contain metrics with the same labelset');
    }
    return out;
  }

  private absentOverTime(mat: Matrix, arg: Expr): Matrix {
    const steps = this.numSteps;
    if (mat.some((s) => s.points.length === steps)) return [];
    const found = new Set<number>();
    for (const s of mat) for (const p of s.points) found.add(p.t);
    if (found.size === steps && mat.length > 1) return [];
    const points: Point[] = [];
    for (let ts = this.startMs; ts <= this.endMs; ts += this.intervalMs) {
      if (!found.has(ts)) points.push({ t: ts, v: 1 });
    }
    return [{ metric: labelsForAbsent(arg), points }];
  }
}
