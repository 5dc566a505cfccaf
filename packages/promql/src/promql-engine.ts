import type { Expr, VectorSelector } from './ast.js';
import { typeOf } from './ast.js';
import type { EvalContext } from './evaluator.js';
import type { LoadedSeries } from './loaded-series.js';
import type { FloatHistogram } from './float-histogram.js';
import { Evaluator } from './evaluator.js';
import { formatDuration } from './format-promql.js';
import type { Labels } from './labels.js';
import { compareLabels } from './labels.js';
import { parsePromql } from './parse-promql.js';
import { planSelections } from './plan-selections.js';
import { preprocessExpr, setOffsetForAtModifier } from './preprocess.js';
import { badData, PromqlError } from './promql-error.js';
import type { SeriesBuckets } from './series-buckets.js';
import type { SeriesSource, SourceSeries, TimeRange } from './series-source.js';
import type { Matrix, Point, QueryValue } from './values.js';

export type PromqlEngineOptions = {
  source: SeriesSource;
  /** How far back an instant selector looks for a sample (Prometheus: 5 min). */
  lookbackDeltaMs: number;
  /** Samples one query may hold at once (Prometheus' --query.max-samples). */
  maxSamples: number;
  /** Wall-clock budget of one query, ms: past it the query stops with a `timeout` error. */
  timeoutMs: number;
  /**
   * The step of a subquery written without one (`x[5m:]`): Prometheus takes its global
   * evaluation_interval, 1 min unless configured. Default 60,000.
   */
  defaultSubqueryStepMs?: number;
  /** Series one query may select, over all its selectors. */
  maxSeries: number;
  /** Points per series of a range query (Prometheus: 11,000). */
  maxPointsPerSeries: number;
  now?: () => number;
};

/** How one query reads. */
export type QueryOptions = {
  /**
   * The width of the rollup tier its selectors read instead of raw samples (Thanos'
   * max_source_resolution); 0 or absent for raw samples.
   */
  resolutionMs?: number;
  /**
   * Where `resolutionMs` is absent (`auto`): from when raw samples are kept, and the tiers kept
   * beyond them, each from when. A selector that reads before `rawFromMs` reads a tier, for its
   * whole range, and the answer says so: the finest that reaches back as far, else the one that
   * reaches furthest. Raw samples where no tier holds anything of its range. Absent: raw samples
   * only.
   */
  tiers?: SourceTiers;
};

export type SourceTiers = {
  rawFromMs: number;
  tiers: readonly { widthMs: number; fromMs: number }[];
};

type SourceTier = SourceTiers['tiers'][number];

/**
 * The tier an `auto` selection of `range` reads, or 0 for raw samples: the contract's "the
 * finest rollup beyond" the raw samples, among the tiers that reach back to the range's start;
 * else the one that reaches furthest.
 */
function autoResolutionMs(tiers: SourceTiers | undefined, range: TimeRange): number {
  if (tiers === undefined || range.startMs >= tiers.rawFromMs) return 0;
  const holding = tiers.tiers.filter((tier) => tier.fromMs < range.endMs);
  if (holding.length === 0) return 0;
  const finer = (a: SourceTier, b: SourceTier): SourceTier => (b.widthMs < a.widthMs ? b : a);
  const reaching = holding.filter((tier) => tier.fromMs <= range.startMs);
  if (reaching.length > 0) return reaching.reduce(finer).widthMs;
  return holding.reduce((a, b) =>
    b.fromMs < a.fromMs ? b : b.fromMs === a.fromMs ? finer(a, b) : a,
  ).widthMs;
}

export type PromqlEngine = {
  /** Evaluates `query` at `timeMs`. Throws PromqlError. */
  instantQuery(
    query: string,
    timeMs: number,
    signal?: AbortSignal,
    options?: QueryOptions,
  ): Promise<QueryValue>;
  /** Evaluates `query` at start, start+step, … ≤ end. Throws PromqlError. */
  rangeQuery(
    query: string,
    startMs: number,
    endMs: number,
    stepMs: number,
    signal?: AbortSignal,
    options?: QueryOptions,
  ): Promise<QueryValue>;
};

/**
 * The staleness markers among a series' points. Loops written out: they run per sample, where a
 * closure per sample took a fifth of the evaluation of `sum by (…) (rate(…))` over 1,000 series.
 */
function staleCount({ values, stale: flags }: SourceSeries): number {
  let count = 0;
  if (flags === undefined) {
    for (let i = 0; i < values.length; i++) if (Number.isNaN(values[i])) count++;
  } else {
    for (let i = 0; i < values.length; i++) if (flags[i] === 1) count++;
  }
  return count;
}

/**
 * The series' floats and histograms as one time-ordered run: a histogram's value 0, flagged no
 * staleness marker; at a time with both, the histogram.
 */
function withHistograms(series: SourceSeries): {
  merged: SourceSeries;
  histograms: (FloatHistogram | undefined)[];
} {
  const { timestampsMs: times, values, stale: flags } = series;
  const hs = series.histograms!;
  const isStale =
    flags === undefined ? (i: number) => Number.isNaN(values[i]) : (i: number) => flags[i] === 1;
  const outTimes: number[] = [];
  const outValues: number[] = [];
  const outStale: number[] = [];
  const histograms: (FloatHistogram | undefined)[] = [];
  let i = 0;
  let j = 0;
  while (i < times.length || j < hs.timestampsMs.length) {
    const ft = i < times.length ? times[i]! : Infinity;
    const ht = j < hs.timestampsMs.length ? hs.timestampsMs[j]! : Infinity;
    if (ht <= ft) {
      outTimes.push(ht);
      outValues.push(0);
      outStale.push(0);
      histograms.push(hs.values[j++]);
      if (ht === ft) i++;
    } else {
      outTimes.push(ft);
      outValues.push(values[i]!);
      outStale.push(isStale(i) ? 1 : 0);
      histograms.push(undefined);
      i++;
    }
  }
  return {
    merged: {
      labels: series.labels,
      timestampsMs: outTimes,
      values: outValues,
      stale: outStale,
    },
    histograms,
  };
}

function toLoaded(source: SourceSeries): LoadedSeries {
  let series = source;
  let histograms: (FloatHistogram | undefined)[] | undefined;
  if ((source.histograms?.timestampsMs.length ?? 0) > 0) {
    ({ merged: series, histograms } = withHistograms(source));
  }
  const { timestampsMs, values, stale: flags } = series;
  const isStale =
    flags === undefined ? (i: number) => Number.isNaN(values[i]) : (i: number) => flags[i] === 1;
  const stale = series.markers ?? staleCount(series);
  let pointTimes = timestampsMs;
  let pointValues = values;
  let pointHistograms = histograms;
  if (stale > 0) {
    const t = new Float64Array(values.length - stale);
    const v = new Float64Array(values.length - stale);
    const h: (FloatHistogram | undefined)[] | undefined = histograms === undefined ? undefined : [];
    let n = 0;
    for (let i = 0; i < values.length; i++) {
      if (isStale(i)) continue;
      t[n] = timestampsMs[i]!;
      h?.push(histograms![i]);
      v[n++] = values[i]!;
    }
    pointTimes = t;
    pointValues = v;
    pointHistograms = h;
  }
  return new LoadedSourceSeries(
    series.labels,
    timestampsMs,
    values,
    flags,
    pointTimes,
    pointValues,
    histograms,
    pointHistograms,
    series.buckets,
  );
}

/**
 * A selected series as the evaluator reads it. A class, so that every one has the same shape:
 * object literals with a getter each had one of their own, which left the evaluator's loops over
 * them with generic property loads, and rate's loop optimized again at every query of
 * bench:promql.
 */
class LoadedSourceSeries implements LoadedSeries {
  #points: Point[] | undefined;

  constructor(
    readonly metric: Labels,
    readonly timestamps: ArrayLike<number>,
    readonly values: ArrayLike<number>,
    readonly stale: ArrayLike<number> | undefined,
    readonly pointTimes: ArrayLike<number>,
    readonly pointValues: ArrayLike<number>,
    readonly histograms: readonly (FloatHistogram | undefined)[] | undefined,
    readonly pointHistograms: readonly (FloatHistogram | undefined)[] | undefined,
    readonly buckets: SeriesBuckets | undefined,
  ) {}

  /** Made on first use only: the range functions on arrays never ask for them. */
  get points(): Point[] {
    if (this.#points === undefined) {
      const points: Point[] = [];
      const hs = this.pointHistograms;
      for (let i = 0; i < this.pointTimes.length; i++) {
        const h = hs?.[i];
        const t = this.pointTimes[i]!;
        const v = this.pointValues[i]!;
        points.push(h === undefined ? { t, v } : { t, v, h });
      }
      this.#points = points;
    }
    return this.#points;
  }
}

/** What an answer that read a rollup tier of `widthMs` approximately says (docs/promql.md). */
function approximationWarning(widthMs: number): string {
  const width = formatDuration(widthMs);
  return (
    `approximate: read from ${width} rollups at a step, range or offset that is not a ` +
    `multiple of ${width}, or with a function that needs every raw sample`
  );
}

/** What an `auto` answer that read a rollup tier of `widthMs` says (docs/promql.md). */
function autoTierWarning(widthMs: number): string {
  return (
    `read from ${formatDuration(widthMs)} rollups: the query reaches back past the raw ` +
    `samples kept (max_source_resolution=auto)`
  );
}

/** Prometheus' order of a range query's result: by label set. */
function sortMatrix(matrix: Matrix): Matrix {
  return matrix.sort((a, b) => compareLabels(a.metric, b.metric));
}

/**
 * PromQL over a SeriesSource: parses with Prometheus' grammar, reads every selector's series
 * once (all selections in parallel), then evaluates synchronously, checking the deadline at
 * every step and series so that a timeout stops the work itself, not only the answer.
 */
export function createPromqlEngine(options: PromqlEngineOptions): PromqlEngine {
  const now = options.now ?? Date.now;

  async function run(
    query: string,
    startMs: number,
    endMs: number,
    intervalMs: number,
    stepMs: number,
    outer: AbortSignal | undefined,
    queryOptions: QueryOptions,
  ): Promise<{ expr: Expr; evaluator: Evaluator; ctx: EvalContext }> {
    const deadlineMs = now() + options.timeoutMs;
    const parsed = parsePromql(query);
    const expr = preprocessExpr(parsed, startMs, endMs);
    setOffsetForAtModifier(expr, startMs);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), options.timeoutMs);
    const onOuterAbort = (): void => controller.abort();
    outer?.addEventListener('abort', onOuterAbort);
    const data = new Map<VectorSelector, LoadedSeries[]>();
    const autoTiersMs = new Set<number>();
    const resolutionMs = (range: TimeRange): number => {
      if (queryOptions.resolutionMs !== undefined) return queryOptions.resolutionMs;
      const widthMs = autoResolutionMs(queryOptions.tiers, range);
      if (widthMs > 0) autoTiersMs.add(widthMs);
      return widthMs;
    };
    try {
      let selected = 0;
      await Promise.all(
        planSelections(expr, { startMs, endMs, lookbackDeltaMs: options.lookbackDeltaMs }).map(
          async ({ selector, rangeMs, timeRange, func }) => {
            const series = await options.source.select(
              selector.matchers,
              timeRange,
              {
                stepMs,
                rangeMs,
                func,
                maxSeries: options.maxSeries,
                resolutionMs: resolutionMs(timeRange),
              },
              controller.signal,
            );
            selected += series.length;
            if (selected > options.maxSeries) {
              throw badData(
                `the query selects more than ${options.maxSeries} series: narrow its selectors`,
              );
            }
            const loaded = series.map(toLoaded);
            loaded.sort((a, b) => compareLabels(a.metric, b.metric));
            data.set(selector, loaded);
          },
        ),
      );
    } catch (err) {
      if (controller.signal.aborted && !(outer?.aborted ?? false)) {
        throw new PromqlError('timeout', 'query timed out in query preparation', { cause: err });
      }
      throw err;
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuterAbort);
    }
    const ctx: EvalContext = {
      data,
      lookbackMs: options.lookbackDeltaMs,
      defaultSubqueryStepMs: options.defaultSubqueryStepMs ?? 60_000,
      maxSamples: options.maxSamples,
      deadlineMs,
      now,
      currentSamples: 0,
      approximateTiersMs: new Set(),
      autoTiersMs,
    };
    return { expr, evaluator: new Evaluator(ctx, startMs, endMs, intervalMs), ctx };
  }

  /** The answer, with a warning for each rollup tier it read approximately. */
  function answer(value: QueryValue, ctx: EvalContext): QueryValue {
    if (ctx.approximateTiersMs.size === 0 && ctx.autoTiersMs.size === 0) return value;
    const byWidth = (a: number, b: number): number => a - b;
    const warnings = [
      ...[...ctx.autoTiersMs].sort(byWidth).map((widthMs) => autoTierWarning(widthMs)),
      ...[...ctx.approximateTiersMs].sort(byWidth).map((widthMs) => approximationWarning(widthMs)),
    ];
    return { ...value, warnings };
  }

  return {
    async instantQuery(query, timeMs, signal, queryOptions = {}) {
      const { expr, evaluator, ctx } = await run(query, timeMs, timeMs, 1, 0, signal, queryOptions);
      const value = evaluator.eval(expr);
      if (!Array.isArray(value)) {
        return answer({ resultType: 'string', result: { t: timeMs, v: value.string } }, ctx);
      }
      switch (typeOf(expr)) {
        case 'vector':
          return answer(
            {
              resultType: 'vector',
              result: value.map((s) => ({
                metric: s.metric,
                t: timeMs,
                v: s.points[0]!.v,
                ...(s.points[0]!.h && { h: s.points[0]!.h }),
              })),
            },
            ctx,
          );
        case 'scalar':
          return answer(
            { resultType: 'scalar', result: { t: timeMs, v: value[0]!.points[0]!.v } },
            ctx,
          );
        default:
          return answer({ resultType: 'matrix', result: value }, ctx);
      }
    },

    async rangeQuery(query, startMs, endMs, stepMs, signal, queryOptions = {}) {
      if (endMs < startMs) throw badData('end timestamp must not be before start time');
      if (stepMs <= 0) {
        throw badData(
          'zero or negative query resolution step widths are not accepted. Try a positive integer',
        );
      }
      if ((endMs - startMs) / stepMs > options.maxPointsPerSeries) {
        throw badData(
          `exceeded maximum resolution of ${options.maxPointsPerSeries.toLocaleString('en-US')} points per timeseries. Try decreasing the query resolution (?step=XX)`,
        );
      }
      const type = typeOf(parsePromql(query));
      if (type !== 'scalar' && type !== 'vector') {
        throw badData(
          `invalid expression type "${type === 'matrix' ? 'range vector' : type}" for range query, must be Scalar or instant Vector`,
        );
      }
      const { expr, evaluator, ctx } = await run(
        query,
        startMs,
        endMs,
        stepMs,
        stepMs,
        signal,
        queryOptions,
      );
      const value = evaluator.eval(expr);
      if (!Array.isArray(value)) throw badData('string results are not allowed in range queries');
      return answer({ resultType: 'matrix', result: sortMatrix(value) }, ctx);
    },
  };
}
