import { z } from 'zod';
import type { Response } from 'express';
import type {
  Labels,
  PartialAnswers,
  PromqlEngine,
  QueryOptions,
  QueryValue,
  SeriesSource,
  SourceTiers,
} from '@monitor/promql';
import type { ExemplarReader, RuleGroupStateStore } from '@monitor/db';
import type { FloatHistogram, Series } from '@monitor/promql';
import {
  allBuckets,
  formatFloat,
  labelsToRecord,
  parseSeriesSelector,
  PromqlError,
} from '@monitor/promql';
import {
  prometheusApiBasePath,
  prometheusInstantQuerySchema,
  prometheusQueryDataSchema,
  prometheusRangeQuerySchema,
  prometheusSeriesQuerySchema,
  prometheusSuccessSchema,
} from '@monitor/schemas';
import { AppError } from '@monitor/platform';
import type { ApiRoute } from '../api-route.js';
import { json } from '../api-route.js';
import { both, errors, formatSampleValue, success } from './prometheus-answer.js';
import type { RangeQueryCache } from './range-query-cache.js';
import type { PrometheusParams } from './prometheus-params.js';
import {
  allOfTime,
  optionalTime,
  parsePrometheusDuration,
  parsePrometheusTime,
  prometheusParams,
} from './prometheus-params.js';

/** The limits of one query beyond the engine's own (settings feed those: docs/configuration.md). */
type PrometheusQueryLimits = {
  /** The longest end - start of a range query. */
  maxRangeMs: number;
  /**
   * The most series `series` answers with, one remote read query selects, and the selectors of
   * a `query_exemplars` match.
   */
  maxSeries: number;
  /** The most samples one remote read request returns. */
  maxSamples: number;
  /** The most exemplars one `query_exemplars` answer holds. */
  maxExemplars: number;
  /** The wall-clock budget of one remote read request, ms (queries carry their own). */
  timeoutMs: number;
};

/**
 * An engine for one request, and its release: once its answer is written, what it read may serve
 * the next query.
 */
type RequestEngine = { engine: PromqlEngine; release: () => void };

export type PrometheusRouteDeps = {
  /**
   * An engine reading the organization's series, with the per-request timeout; `partial`: the
   * request asked for partial answers (a sample shard that is away left out, and said so).
   */
  engineFor(orgId: string, timeoutMs: number | undefined, partial?: PartialAnswers): RequestEngine;
  sourceFor(orgId: string, partial?: PartialAnswers): SeriesSource;
  limits: PrometheusQueryLimits;
  /** Unset: every range query computed whole. */
  rangeQueryCache?: RangeQueryCache;
  nowMs: () => number;
  /**
   * From when raw samples are kept and the rollup tiers beyond them (`max_source_resolution`
   * `auto`); undefined: raw samples only.
   */
  sourceTiers(): Promise<SourceTiers | undefined>;
  /** The exemplars `query_exemplars` answers with, by the series the query selects. */
  exemplars: ExemplarReader;
  /** The organization's Prometheus rule groups with their last evaluations. */
  ruleGroups: Pick<RuleGroupStateStore, 'listOrgGroups'>;
  /** RULE_EVALUATION_INTERVAL_SECONDS, in ms: the interval of a group that sets none. */
  defaultRuleIntervalMs: number;
};

export type PrometheusRoute = ApiRoute<PrometheusRouteDeps & { orgId: string }>;
type Handler = NonNullable<PrometheusRoute['handle']>;

/**
 * A point as Prometheus 2.42 writes it: a vector's or a matrix's value as `formatSampleValue`
 * (exponent form for the tiny and the huge), a scalar's as `formatFloat` (never), a string as is.
 */
function pair(t: number, v: number | string, format = formatSampleValue): [number, string] {
  return [t / 1000, typeof v === 'number' ? format(v) : v];
}

/**
 * A native histogram as Prometheus 2.42 writes one: count, sum and the populated buckets from
 * the lowest up, each [boundaries, lower, upper, count] (boundaries: 0 upper inclusive, 1 lower
 * inclusive, 2 neither, 3 both).
 */
function histogramJson(h: FloatHistogram): unknown {
  const buckets: [number, string, string, string][] = [];
  for (const b of allBuckets(h)) {
    if (b.count === 0) continue;
    const boundaries = b.lowerInclusive ? (b.upperInclusive ? 3 : 1) : b.upperInclusive ? 0 : 2;
    buckets.push([
      boundaries,
      formatSampleValue(b.lower),
      formatSampleValue(b.upper),
      formatSampleValue(b.count),
    ]);
  }
  return {
    count: formatSampleValue(h.count),
    sum: formatSampleValue(h.sum),
    ...(buckets.length > 0 && { buckets }),
  };
}

/** A series of a matrix: its floats as `values`, its histograms as `histograms`, either left out
 * when it has none. */
function seriesJson(s: Series): unknown {
  const values = s.points.filter((p) => p.h === undefined).map((p) => pair(p.t, p.v));
  const histograms = s.points.flatMap((p) =>
    p.h === undefined ? [] : [[p.t / 1000, histogramJson(p.h)]],
  );
  return {
    metric: labelsToRecord(s.metric),
    ...(values.length > 0 && { values }),
    ...(histograms.length > 0 && { histograms }),
  };
}

/** A query's result as Prometheus' JSON writes it. */
function queryData(value: QueryValue): unknown {
  switch (value.resultType) {
    case 'vector':
      return {
        resultType: 'vector',
        result: value.result.map((s) =>
          s.h === undefined
            ? { metric: labelsToRecord(s.metric), value: pair(s.t, s.v) }
            : { metric: labelsToRecord(s.metric), histogram: [s.t / 1000, histogramJson(s.h)] },
        ),
      };
    case 'matrix':
      return { resultType: 'matrix', result: value.result.map(seriesJson) };
    case 'scalar':
      return { resultType: 'scalar', result: pair(value.result.t, value.result.v, formatFloat) };
    case 'string':
      return { resultType: 'string', result: pair(value.result.t, value.result.v) };
  }
}

function required(params: PrometheusParams, name: string): string {
  const value = params.get(name);
  if (value === undefined || value === '') {
    throw new PromqlError('bad_data', `invalid parameter "${name}": missing`);
  }
  return value;
}

function timeoutOf(params: PrometheusParams): number | undefined {
  const text = params.get('timeout');
  return text === undefined || text === '' ? undefined : parsePrometheusDuration('timeout', text);
}

function matcherSets(params: PrometheusParams) {
  return params.all('match[]').map(parseSeriesSelector);
}

const labelNamePattern = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * The rollup tier `max_source_resolution` asks for (Thanos' parameter, docs/promql.md), as the
 * engine's resolution: 0 for raw samples; `auto` (the default) raw samples where they are kept
 * and the tiers beyond.
 */
const sourceResolutions = new Map([
  ['raw', 0],
  ['0s', 0],
  ['5m', 300_000],
  ['1h', 3_600_000],
]);

async function resolutionOf(
  params: PrometheusParams,
  deps: PrometheusRouteDeps,
): Promise<QueryOptions> {
  const text = params.get('max_source_resolution');
  if (text === undefined || text === '' || text === 'auto') {
    const tiers = await deps.sourceTiers();
    return tiers === undefined ? {} : { tiers };
  }
  const resolutionMs = sourceResolutions.get(text);
  if (resolutionMs === undefined) {
    throw new PromqlError(
      'bad_data',
      `invalid parameter "max_source_resolution": ${JSON.stringify(text)} is none of auto, raw, 0s, 5m, 1h`,
    );
  }
  return { resolutionMs };
}

/**
 * Runs `query` on an engine of the request's own and writes its answer, then releases the engine:
 * the answer is text by then, and nothing reads the query's arrays any more.
 */
async function answerQuery(
  deps: PrometheusRouteDeps & { orgId: string },
  params: PrometheusParams,
  res: Response,
  query: (engine: PromqlEngine, partial: PartialRequest | undefined) => Promise<QueryValue>,
): Promise<void> {
  const partial = partialRequestOf(params);
  const { engine, release } = deps.engineFor(deps.orgId, timeoutOf(params), partial?.answers);
  try {
    const value = await query(engine, partial);
    res
      .type('application/json')
      .send(success(queryData(value), [...(value.warnings ?? []), ...(partial?.warnings ?? [])]));
  } finally {
    release();
  }
}

/** A request's partial answers, and the warnings that say what they left out. */
type PartialRequest = { answers: PartialAnswers; warnings: string[] };

/**
 * `partial_response=true` (Thanos' parameter): a sample shard that is away (its database
 * unavailable) is left out of the answer, which says so in its `warnings`, instead of failing
 * it. Unset or `false`: such an answer fails (503, `unavailable`).
 */
function partialRequestOf(params: PrometheusParams): PartialRequest | undefined {
  const text = params.get('partial_response');
  if (text === undefined || text === '' || text === 'false') return undefined;
  if (text !== 'true') {
    throw new PromqlError(
      'bad_data',
      `invalid parameter "partial_response": ${JSON.stringify(text)} is neither true nor false`,
    );
  }
  const warnings: string[] = [];
  return {
    warnings,
    answers: {
      skips: (err) => err instanceof AppError && err.code === 'dependency_unavailable',
      leftOut: (part, err) => {
        const warning = `partial answer: shard ${part} did not answer (${
          err instanceof Error ? err.message : String(err)
        }); its series are left out`;
        if (!warnings.includes(warning)) warnings.push(warning);
      },
    },
  };
}

const queryHandler: Handler = async ({ query, body, res, deps }) => {
  const params = prometheusParams(query, body);
  const expr = required(params, 'query');
  const timeText = params.get('time');
  const timeMs =
    timeText === undefined || timeText === ''
      ? deps.nowMs()
      : parsePrometheusTime('time', timeText);
  const options = await resolutionOf(params, deps);
  await answerQuery(deps, params, res, (engine) =>
    engine.instantQuery(expr, timeMs, undefined, options),
  );
};

const queryRangeHandler: Handler = async ({ query, body, res, deps }) => {
  const params = prometheusParams(query, body);
  const expr = required(params, 'query');
  const startMs = parsePrometheusTime('start', required(params, 'start'));
  const endMs = parsePrometheusTime('end', required(params, 'end'));
  const stepMs = parsePrometheusDuration('step', required(params, 'step'));
  if (endMs < startMs) {
    throw new PromqlError(
      'bad_data',
      'invalid parameter "end": end timestamp must not be before start time',
    );
  }
  if (endMs - startMs > deps.limits.maxRangeMs) {
    throw new PromqlError(
      'bad_data',
      `invalid parameter "end": the range exceeds the limit of ${deps.limits.maxRangeMs / 1000} s`,
    );
  }
  const options = await resolutionOf(params, deps);
  // The cache keeps whole answers from raw samples only: a tier's, or one that may leave a
  // shard out, are computed whole.
  const cacheable = (options.resolutionMs ?? 0) === 0;
  await answerQuery(deps, params, res, (engine, partial) =>
    !cacheable || partial !== undefined || deps.rangeQueryCache === undefined
      ? engine.rangeQuery(expr, startMs, endMs, stepMs, undefined, options)
      : deps.rangeQueryCache.rangeQuery(deps.orgId, engine, expr, startMs, endMs, stepMs, options),
  );
};

const seriesHandler: Handler = async ({ query, body, res, deps }) => {
  const params = prometheusParams(query, body);
  const sets = matcherSets(params);
  if (sets.length === 0) throw new PromqlError('bad_data', 'no match[] parameter provided');
  const range = {
    startMs: optionalTime(params, 'start', allOfTime.startMs),
    endMs: optionalTime(params, 'end', allOfTime.endMs),
  };
  const controller = new AbortController();
  const partial = partialRequestOf(params);
  const found: Labels[] = await deps
    .sourceFor(deps.orgId, partial?.answers)
    .series(sets, range, deps.limits.maxSeries + 1, controller.signal);
  if (found.length > deps.limits.maxSeries) {
    throw new PromqlError(
      'bad_data',
      `more than ${deps.limits.maxSeries} series match: narrow the match[] selectors or the time range`,
    );
  }
  res.type('application/json').send(success(found.map(labelsToRecord), partial?.warnings));
};

const labelsHandler: Handler = async ({ query, body, res, deps }) => {
  const params = prometheusParams(query, body);
  const range = {
    startMs: optionalTime(params, 'start', allOfTime.startMs),
    endMs: optionalTime(params, 'end', allOfTime.endMs),
  };
  const partial = partialRequestOf(params);
  const names = await deps
    .sourceFor(deps.orgId, partial?.answers)
    .labelNames(matcherSets(params), range, new AbortController().signal);
  res.type('application/json').send(success(names, partial?.warnings));
};

const labelValuesHandler: Handler = async ({ params: path, query, res, deps }) => {
  const params = prometheusParams(query, undefined);
  const name = String(path['name'] ?? '');
  if (!labelNamePattern.test(name)) {
    throw new PromqlError('bad_data', `invalid label name: ${JSON.stringify(name)}`);
  }
  const range = {
    startMs: optionalTime(params, 'start', allOfTime.startMs),
    endMs: optionalTime(params, 'end', allOfTime.endMs),
  };
  const partial = partialRequestOf(params);
  const values = await deps
    .sourceFor(deps.orgId, partial?.answers)
    .labelValues(name, matcherSets(params), range, new AbortController().signal);
  res.type('application/json').send(success(values, partial?.warnings));
};

const base = prometheusApiBasePath;
const stringList = prometheusSuccessSchema(z.array(z.string()));

/**
 * The Prometheus HTTP API's read side (docs/api.md#prometheus-compatible-reading), every
 * route behind the `read` scope. Queries and metadata take GET, or POST with a form body.
 */
export const prometheusRoutes: readonly PrometheusRoute[] = [
  ...both(
    {
      path: `${base}/query`,
      summary: 'PromQL instant query',
      tags: ['prometheus'],
      scope: 'read',
      request: { query: prometheusInstantQuerySchema },
      responses: {
        200: json('The result.', prometheusSuccessSchema(prometheusQueryDataSchema)),
        ...errors,
      },
      handle: queryHandler,
    },
    'prometheusQuery',
  ),
  ...both(
    {
      path: `${base}/query_range`,
      summary: 'PromQL range query',
      tags: ['prometheus'],
      scope: 'read',
      request: { query: prometheusRangeQuerySchema },
      responses: {
        200: json('The result.', prometheusSuccessSchema(prometheusQueryDataSchema)),
        ...errors,
      },
      handle: queryRangeHandler,
    },
    'prometheusQueryRange',
  ),
  ...both(
    {
      path: `${base}/series`,
      summary: 'Series matching selectors',
      tags: ['prometheus'],
      scope: 'read',
      request: { query: prometheusSeriesQuerySchema },
      responses: {
        200: json(
          'Label sets.',
          prometheusSuccessSchema(z.array(z.record(z.string(), z.string()))),
        ),
        ...errors,
      },
      handle: seriesHandler,
    },
    'prometheusSeries',
  ),
  ...both(
    {
      path: `${base}/labels`,
      summary: 'Label names',
      tags: ['prometheus'],
      scope: 'read',
      request: { query: prometheusSeriesQuerySchema },
      responses: { 200: json('Sorted label names.', stringList), ...errors },
      handle: labelsHandler,
    },
    'prometheusLabels',
  ),
  {
    method: 'get',
    path: `${base}/label/:name/values`,
    operationId: 'prometheusLabelValues',
    summary: 'Values of one label',
    tags: ['prometheus'],
    scope: 'read',
    request: { query: prometheusSeriesQuerySchema },
    responses: { 200: json('Sorted label values.', stringList), ...errors },
    handle: labelValuesHandler,
  },
];
