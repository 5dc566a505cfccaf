import { z } from 'zod';

/** Where the Prometheus-compatible API lives (docs/api.md#prometheus-compatible-reading). */
export const prometheusApiBasePath = '/prometheus/api/v1';

/** Prometheus 2.x `errorType`s, plus the two of authentication (Prometheus has none). */
const prometheusErrorTypes = [
  'bad_data',
  'execution',
  'timeout',
  'canceled',
  'internal',
  'unavailable',
  'not_found',
  'unauthorized',
  'forbidden',
] as const;
export type PrometheusErrorType = (typeof prometheusErrorTypes)[number];

export const prometheusErrorSchema = z.object({
  status: z.literal('error'),
  errorType: z.enum(prometheusErrorTypes),
  error: z.string(),
});
export type PrometheusError = z.infer<typeof prometheusErrorSchema>;

/** `{"status":"success","data":…}` around a response's data. */
export function prometheusSuccessSchema<T extends z.ZodType>(data: T) {
  return z.object({
    status: z.literal('success'),
    data,
    warnings: z.array(z.string()).optional(),
  });
}

/** A sample as Prometheus writes it: [unix seconds, value as text]. */
const samplePairSchema = z.tuple([z.number(), z.string()]);
const metricSchema = z.record(z.string(), z.string());

export const prometheusQueryDataSchema = z.discriminatedUnion('resultType', [
  z.object({
    resultType: z.literal('vector'),
    result: z.array(z.object({ metric: metricSchema, value: samplePairSchema })),
  }),
  z.object({
    resultType: z.literal('matrix'),
    result: z.array(z.object({ metric: metricSchema, values: z.array(samplePairSchema) })),
  }),
  z.object({ resultType: z.literal('scalar'), result: samplePairSchema }),
  z.object({ resultType: z.literal('string'), result: samplePairSchema }),
]);

/**
 * Query parameters, from the URL or a form body. Times are Unix seconds (with decimals) or
 * RFC 3339; a step or timeout is seconds or a Prometheus duration (`30s`, `1m`).
 */
const timeParam = z.string().meta({ description: 'Unix seconds or RFC 3339.' });
const maxSourceResolution = z
  .enum(['auto', 'raw', '0s', '5m', '1h'])
  .optional()
  .meta({
    description:
      "Thanos' parameter: `5m` or `1h` reads that rollup tier instead of raw samples (answers " +
      'not exact carry a warning); `raw`, `0s` and `auto` (the default) read raw samples.',
  });
const partialResponse = z
  .enum(['true', 'false'])
  .optional()
  .meta({
    description:
      "Thanos' parameter: `true` answers without a sample shard that is away, saying so in " +
      '`warnings`; `false` (the default) fails the answer instead (503, `unavailable`).',
  });
export const prometheusInstantQuerySchema = z.object({
  query: z.string(),
  time: timeParam.optional(),
  timeout: z.string().optional(),
  max_source_resolution: maxSourceResolution,
  partial_response: partialResponse,
});
export const prometheusRangeQuerySchema = z.object({
  query: z.string(),
  start: timeParam,
  end: timeParam,
  step: z.string().meta({ description: 'Seconds or a duration (`60`, `1m`).' }),
  timeout: z.string().optional(),
  max_source_resolution: maxSourceResolution,
  partial_response: partialResponse,
});
export const prometheusSeriesQuerySchema = z.object({
  'match[]': z.union([z.string(), z.array(z.string())]).optional(),
  start: timeParam.optional(),
  end: timeParam.optional(),
  limit: z.string().optional(),
  partial_response: partialResponse,
});

export const prometheusExemplarsQuerySchema = z.object({
  query: z.string(),
  start: timeParam.optional(),
  end: timeParam.optional(),
});

/**
 * `query_exemplars`' data as Prometheus 2.42 writes it: one entry per series with exemplars in
 * the range, by label set; its exemplars in time order, `timestamp` in Unix seconds.
 */
export const prometheusExemplarsDataSchema = z.array(
  z.object({
    seriesLabels: metricSchema,
    exemplars: z.array(
      z.object({ labels: metricSchema, value: z.string(), timestamp: z.number() }),
    ),
  }),
);

/** Go's `time.Time` in JSON: RFC 3339 with nanoseconds, `0001-01-01T00:00:00Z` for never. */
const goTimeSchema = z.string().meta({ description: 'RFC 3339 (Go time.Time).' });
const ruleHealthSchema = z.enum(['ok', 'err', 'unknown']);

/** An alert of an alerting rule, as Prometheus 2.42's `/api/v1/alerts` and `/rules` write it. */
export const prometheusAlertSchema = z.object({
  labels: metricSchema,
  annotations: metricSchema,
  state: z.enum(['pending', 'firing', 'inactive']),
  activeAt: goTimeSchema.optional(),
  keepFiringSince: goTimeSchema.optional(),
  /** Go's `strconv.FormatFloat(v, 'e', -1, 64)`. */
  value: z.string(),
});
export type PrometheusAlert = z.infer<typeof prometheusAlertSchema>;

const ruleStatusFields = {
  name: z.string(),
  query: z.string(),
  health: ruleHealthSchema,
  lastError: z.string().optional(),
  /** Seconds. */
  evaluationTime: z.number(),
  lastEvaluation: goTimeSchema,
};

/** A rule group as Prometheus 2.42's `/api/v1/rules` writes it (`file`: the namespace). */
export const prometheusRuleGroupSchema = z.object({
  name: z.string(),
  file: z.string(),
  rules: z.array(
    z.discriminatedUnion('type', [
      z.object({
        ...ruleStatusFields,
        type: z.literal('alerting'),
        state: z.enum(['pending', 'firing', 'inactive']),
        /** `for`, seconds. */
        duration: z.number(),
        keepFiringFor: z.number(),
        labels: metricSchema,
        annotations: metricSchema,
        alerts: z.array(prometheusAlertSchema),
      }),
      z.object({
        ...ruleStatusFields,
        type: z.literal('recording'),
        labels: metricSchema.optional(),
      }),
    ]),
  ),
  /** Seconds. */
  interval: z.number(),
  limit: z.number().int(),
  /** Seconds. */
  evaluationTime: z.number(),
  lastEvaluation: goTimeSchema,
});
export type PrometheusRuleGroup = z.infer<typeof prometheusRuleGroupSchema>;
