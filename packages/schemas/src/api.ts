import { z } from 'zod';
import { containerSchema, ingestLimits, metricNamePattern, processSchema } from './ingest.js';
import { storableText } from './input-policy.js';

/**
 * Wire formats of the query API (`GET /api/v1/services…`): query parameters, response bodies
 * and the problem body. The OpenAPI document is generated from these schemas (`.meta({ id })`
 * names a component), so what is documented is what is validated and returned.
 */

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;
const dayMs = 24 * hourMs;

/** Bounds of the query API, as the contract and the OpenAPI descriptions state them. */
export const apiLimits = {
  defaultLimit: 50,
  maxLimit: 100,
  /**
   * The largest integer a JSON number (an IEEE double) carries exactly: a larger offset could
   * not be echoed back in `pagination.offset` as given.
   */
  maxOffset: Number.MAX_SAFE_INTEGER,
  /** `from` defaults to one hour before `to`. */
  defaultMetricsRangeMs: hourMs,
  /** `step` defaults to `1m` up to this range, `1h` above it. */
  maxDefaultMinuteStepRangeMs: 6 * hourMs,
  /** `step=1m` is refused above this range (10 080 points). */
  maxMinuteStepRangeMs: 7 * dayMs,
  /** No range may exceed this (8 784 hourly points). */
  maxMetricsRangeMs: 366 * dayMs,
} as const;

/** A parameter that failed validation, named as the client wrote it (`limit`, `tag.env`). */
type QueryIssue = { parameter: string; message: string };

export type QueryParseResult<T> =
  { success: true; data: T } | { success: false; issues: QueryIssue[] };

/** `req.query` of express's simple parser: strings, or arrays of them for repeated names. */
export type QueryInput = Readonly<Record<string, unknown>>;

/** Instants are written ISO 8601 in UTC with `Z`, as `Date.prototype.toISOString` does. */
const utcDateTime = z.iso.datetime().meta({ example: '2026-11-22T10:00:00.000Z' });

const dateTimeParameter = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time such as 2026-11-22T10:00:00Z' })
  .meta({ example: '2026-11-22T10:00:00Z' });

// ---- pagination --------------------------------------------------------------------------

const limitMessage = `must be an integer from 1 to ${apiLimits.maxLimit}`;
const offsetMessage = `must be an integer from 0 to ${apiLimits.maxOffset}`;

/**
 * An integer query parameter. Only a string of decimal digits is converted, so `1e2`, `0x10`,
 * an empty value or a repeated parameter fail with `message` instead of being coerced.
 */
function queryInteger(options: { min: number; max?: number; message: string }) {
  const { min, max, message } = options;
  const integer = z.number({ error: message }).int({ error: message }).min(min, { error: message });
  return z.preprocess(
    (value) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value),
    max === undefined ? integer : integer.max(max, { error: message }),
  );
}

/** `limit` and `offset` of every list endpoint. */
export const paginationQuerySchema = z.object({
  limit: queryInteger({ min: 1, max: apiLimits.maxLimit, message: limitMessage })
    .default(apiLimits.defaultLimit)
    .meta({ description: `Items per page, 1 to ${apiLimits.maxLimit}.` }),
  offset: queryInteger({ min: 0, max: apiLimits.maxOffset, message: offsetMessage })
    .default(0)
    .meta({
      description: `Items to skip before the first one returned, 0 to ${apiLimits.maxOffset}.`,
    }),
});
export type PaginationQuery = z.infer<typeof paginationQuerySchema>;

export const paginationSchema = z
  .object({
    limit: z.number().int().min(1).max(apiLimits.maxLimit),
    offset: z.number().int().min(0),
    total: z.number().int().min(0).meta({ description: 'Items matching the filters.' }),
    has_more: z.boolean().meta({ description: 'Whether items follow this page.' }),
  })
  .meta({ id: 'Pagination', description: 'Where this page lies in the whole list.' });
export type Pagination = z.infer<typeof paginationSchema>;

// ---- problems ----------------------------------------------------------------------------

export const problemSchema = z
  .object({
    type: z.string().meta({
      description: 'A URI naming the kind of problem, e.g. https://monitor.dev/problems/not-found.',
    }),
    title: z.string(),
    status: z.number().int().min(400).max(599),
    detail: z.string().meta({ description: 'What went wrong with this request.' }),
    errors: z
      .array(
        z.object({
          path: z.string().meta({
            description: 'The offending input: a query parameter name, or a path into the body.',
          }),
          message: z.string(),
        }),
      )
      .optional()
      .meta({ description: 'Present on validation failures (422): every problem found.' }),
  })
  .meta({
    id: 'Problem',
    description: 'An RFC 9457 problem, sent as application/problem+json.',
  });
export type ProblemResponse = z.infer<typeof problemSchema>;

// ---- alerts --------------------------------------------------------------------------------

export const alertConditions = [
  'greater_than',
  'greater_than_or_equal',
  'less_than',
  'less_than_or_equal',
  'equal',
  'not_equal',
] as const;
export type AlertCondition = (typeof alertConditions)[number];

/**
 * Whether `value` meets a rule's condition: exact comparison, `equal` included (values are
 * floats as the agent sent them). The evaluator, the scenario simulator and the benchmark's
 * rule plans all judge samples with this one function.
 */
export function conditionHolds(
  condition: AlertCondition,
  value: number,
  threshold: number,
): boolean {
  switch (condition) {
    case 'greater_than':
      return value > threshold;
    case 'greater_than_or_equal':
      return value >= threshold;
    case 'less_than':
      return value < threshold;
    case 'less_than_or_equal':
      return value <= threshold;
    case 'equal':
      return value === threshold;
    case 'not_equal':
      return value !== threshold;
  }
}

export const alertSeverities = ['critical', 'warning', 'info'] as const;
export type AlertSeverity = (typeof alertSeverities)[number];

const alertStatuses = ['active', 'resolved'] as const;
export type AlertStatus = (typeof alertStatuses)[number];

export const alertReasons = ['threshold', 'no_data'] as const;
export type AlertReason = (typeof alertReasons)[number];

export const alertSchema = z
  .object({
    id: z.string().meta({ example: 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A' }),
    rule_id: z.string(),
    rule_name: z.string(),
    service_id: z.string(),
    host: z.string(),
    metric: z.string().meta({
      description: 'The metric the rule watches; for an alert of a rule file, the rule’s name.',
    }),
    condition: z.enum(alertConditions).nullable().meta({
      description: 'The rule’s condition; null for an alert of a rule file (a PromQL rule).',
    }),
    threshold: z
      .number()
      .nullable()
      .meta({ description: 'The rule’s threshold; null for an alert of a rule file.' }),
    severity: z.enum(alertSeverities),
    status: z.enum(alertStatuses),
    value: z
      .number()
      .nullable()
      .meta({
        description:
          'The sample value that fired the alert; null for a `no_data` alert (and for a rule ' +
          'file’s alert whose value was not a finite number).',
      }),
    started_at: utcDateTime.meta({ description: 'Time of the first breaching sample.' }),
    fired_at: utcDateTime,
    resolved_at: utcDateTime.nullable(),
    investigation_id: z.string().nullable(),
    reason: z.enum(alertReasons).meta({
      description:
        '`threshold`: samples met the condition; `no_data`: the service stopped sending the ' +
        'metric (the rule’s `no_data_minutes`).',
    }),
    acknowledged_at: utcDateTime
      .nullable()
      .meta({ description: 'When it was first acknowledged; null until then.' }),
    acknowledged_by: z
      .string()
      .nullable()
      .meta({ description: 'The id of the API key that acknowledged it.' }),
    acknowledgement_comment: z.string().nullable(),
    silenced: z.boolean().meta({
      description:
        'Whether a silence matches it now: its notifications are recorded `suppressed` and ' +
        'not sent (it still fires, resolves and opens investigations).',
    }),
    flapping: z.boolean().meta({
      description:
        'Its (rule, service) changed state more than the rule’s `flapping.max_transitions` ' +
        'times within `flapping.window_minutes`: notifications are held until it settles.',
    }),
    labels: z.record(z.string(), z.string()).meta({
      description:
        'An alert of a rule file: its labels as Prometheus gives them (the series’ labels, ' +
        'the rule’s, `alertname`), which identify it. `{}` for other alerts.',
    }),
    annotations: z.record(z.string(), z.string()).meta({
      description:
        'An alert of a rule file: its annotations, as of the rule’s latest evaluation while ' +
        'it was active. `{}` for other alerts.',
    }),
  })
  .meta({ id: 'Alert' });
export type AlertResponse = z.infer<typeof alertSchema>;

// ---- services ------------------------------------------------------------------------------

const serviceStatuses = ['healthy', 'warning', 'critical', 'stale'] as const;
export type ServiceStatus = (typeof serviceStatuses)[number];

const serviceStatusSchema = z.enum(serviceStatuses, {
  error: `must be one of ${serviceStatuses.join(', ')}`,
});

/** Query parameters `tag.<key>=<value>` filter on tags; this prefix marks them. */
const tagParameterPrefix = 'tag.';

/** `tag.<key>`: the key as a tag key may be (1 to 64 characters, not `__proto__`). */
const tagParameterPattern = new RegExp(
  `^tag\\.(?!__proto__$)[^\\u0000]{1,${ingestLimits.maxTagKeyLength}}$`,
);

const tagFilterSchema = z
  .record(
    storableText(
      z.string().regex(tagParameterPattern, {
        error: `tag keys are 1 to ${ingestLimits.maxTagKeyLength} characters, not __proto__`,
      }),
    ),
    storableText(
      z.string({ error: 'must be given once' }).max(ingestLimits.maxTagValueLength, {
        error: `must be at most ${ingestLimits.maxTagValueLength} characters`,
      }),
    ),
  )
  .optional()
  .meta({
    description:
      'Tag filters `tag.<key>=<value>`, any number: only services whose tags include every ' +
      'pair, e.g. `tag.environment=prod&tag.region=eu-west-1`. Keys and values must not ' +
      'contain NUL or unpaired surrogates (422).',
    propertyNames: { pattern: tagParameterPattern.source },
    param: { style: 'form', explode: true },
  });

export const serviceListQuerySchema = paginationQuerySchema.extend({
  status: serviceStatusSchema.optional().meta({ description: 'Only services in this status.' }),
  tags: tagFilterSchema,
});

/** The list query after parsing; `tags` keyed by tag key (without the `tag.` prefix). */
export type ServiceListQuery = PaginationQuery & {
  status?: ServiceStatus;
  tags: Record<string, string>;
};

const serviceSchema = z
  .object({
    id: z.string().meta({ example: 'svc_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A' }),
    name: z.string().meta({ description: 'The host name the agent reports.' }),
    status: z.enum(serviceStatuses).meta({
      description:
        '`critical` with an active critical alert, else `warning` with an active warning ' +
        'alert, else `stale` when no sample arrived within the staleness window ' +
        '(SERVICE_STALE_AFTER_SECONDS, default 300), else `healthy`.',
    }),
    last_seen: utcDateTime.meta({ description: 'Time of the newest sample.' }),
    metrics: z
      .record(z.string(), z.number())
      .meta({ description: 'The latest value of each metric.' }),
    tags: z.record(z.string(), z.string()).meta({ description: 'Tags of the newest sample.' }),
  })
  .meta({ id: 'Service' });
export type ServiceResponse = z.infer<typeof serviceSchema>;

export const serviceListResponseSchema = z
  .object({ services: z.array(serviceSchema), pagination: paginationSchema })
  .meta({ id: 'ServiceList' });
export type ServiceListResponse = z.infer<typeof serviceListResponseSchema>;

export const serviceDetailSchema = serviceSchema
  .extend({
    snapshot_at: utcDateTime
      .nullable()
      .meta({ description: 'Time of the snapshot below; null when none was ever sent.' }),
    docker_containers: z
      .array(containerSchema.meta({ id: 'Container' }))
      .meta({ description: 'Containers of the latest snapshot.' }),
    processes: z
      .array(processSchema.meta({ id: 'Process' }))
      .meta({ description: 'Processes of the latest snapshot.' }),
    active_alerts: z
      .array(alertSchema)
      .meta({ description: 'Active alerts of the service, newest first.' }),
  })
  .meta({ id: 'ServiceDetail' });
export type ServiceDetailResponse = z.infer<typeof serviceDetailSchema>;

// ---- metrics -------------------------------------------------------------------------------

const metricSteps = ['1m', '1h'] as const;
export type MetricStep = (typeof metricSteps)[number];
const metricStepMs: Readonly<Record<MetricStep, number>> = { '1m': minuteMs, '1h': hourMs };

export const serviceMetricsQuerySchema = z.object({
  metric: z
    .string({
      error: (issue) => (issue.input === undefined ? 'is required' : 'must be given once'),
    })
    .regex(metricNamePattern, { error: 'must be a metric name such as cpu_percent' })
    .meta({ description: 'The metric, e.g. `cpu_percent`.' }),
  from: dateTimeParameter.optional().meta({
    description:
      'Start of the range (inclusive), rounded down to the step. Default: one hour before ' +
      '`to`. Must be before `to` and at most 366 days before it (422 otherwise).',
  }),
  to: dateTimeParameter.optional().meta({
    description:
      'End of the range (exclusive), rounded up to the step. Default: now. Must be after `from`.',
  }),
  step: z
    .enum(metricSteps, { error: 'must be 1m or 1h' })
    .optional()
    .meta({
      description:
        'Bucket width. Default: `1m` for ranges up to 6 hours, `1h` above. `1m` is refused ' +
        'for ranges over 7 days; no range may exceed 366 days.',
    }),
});

/** The metrics query resolved against the clock: every field set, `from`/`to` on step bounds. */
export type ServiceMetricsQuery = { metric: string; step: MetricStep; from: Date; to: Date };

const metricPointSchema = z
  .object({
    time: utcDateTime.meta({ description: 'Start of the bucket.' }),
    avg: z.number(),
    min: z.number(),
    max: z.number(),
    count: z.number().int().min(1).meta({ description: 'Samples in the bucket.' }),
  })
  .meta({ id: 'MetricPoint' });

export const serviceMetricsResponseSchema = z
  .object({
    metric: z.string(),
    step: z.enum(metricSteps),
    from: utcDateTime.meta({ description: 'The range served: `from` rounded down to the step.' }),
    to: utcDateTime.meta({ description: 'The range served: `to` rounded up to the step.' }),
    points: z.array(metricPointSchema).meta({
      description:
        'One point per bucket holding samples, in time order; empty buckets are left out.',
    }),
  })
  .meta({ id: 'ServiceMetrics' });
export type ServiceMetricsResponse = z.infer<typeof serviceMetricsResponseSchema>;

// ---- parsing -------------------------------------------------------------------------------

/** The parameter an issue is about: the record key of a `tags` issue, else the field. */
function parameterOf(path: readonly PropertyKey[]): string {
  const [first, second] = path;
  if (first === 'tags' && second !== undefined) return String(second);
  return first === undefined ? '' : String(first);
}

function issuesOf(error: z.ZodError): QueryIssue[] {
  return error.issues.map((issue) => ({
    parameter: parameterOf(issue.path),
    message: issue.message,
  }));
}

/**
 * The parameters `schema` names, parsed; other parameters are ignored. Issues name the
 * parameter as the client wrote it.
 */
export function parseQuery<S extends z.ZodObject>(
  schema: S,
  query: QueryInput,
): QueryParseResult<z.output<S>> {
  const named = Object.fromEntries(Object.keys(schema.shape).map((name) => [name, query[name]]));
  const result = schema.safeParse(named);
  return result.success
    ? { success: true, data: result.data }
    : { success: false, issues: issuesOf(result.error) };
}

/** An issue of a JSON body: `path` into it (`['channels', 1]`; `[]` for the whole body). */
export type BodyIssue = { path: (string | number)[]; message: string };

export type BodyParseResult<T> =
  { success: true; data: T } | { success: false; issues: BodyIssue[] };

/**
 * A JSON body parsed with `schema`. An unknown field of a strict object is reported at its own
 * path (zod reports them all at the object's path), so each one can be named to the client.
 */
export function parseBody<S extends z.ZodType>(
  schema: S,
  body: unknown,
): BodyParseResult<z.output<S>> {
  const result = schema.safeParse(body);
  if (result.success) return { success: true, data: result.data };
  const pathOf = (path: readonly PropertyKey[]) =>
    path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment));
  return {
    success: false,
    issues: result.error.issues.flatMap((issue) =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => ({ path: [...pathOf(issue.path), key], message: issue.message }))
        : [{ path: pathOf(issue.path), message: issue.message }],
    ),
  };
}

/** An enum query parameter whose error lists the values, e.g. `must be one of a, b`. */
export function queryEnum<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `must be one of ${values.join(', ')}` });
}

/**
 * An id query parameter such as `service_id=svc_…`: the form the platform's ids take (the
 * prefix, `_`, an uppercase ULID), so a mistyped filter is a 422 rather than an empty list.
 */
export function queryId(prefix: string) {
  return z.string({ error: 'must be given once' }).regex(idPattern(prefix), {
    error: `must be an id of the form ${prefix}_<ULID>`,
  });
}

/** `^svc_<ULID>$`: ids as `@monitor/platform` generates them (this package depends on zod only). */
export function idPattern(prefix: string): RegExp {
  return new RegExp(`^${prefix}_[0-7][0-9A-HJKMNP-TV-Z]{25}$`);
}

/** Query parameters of `GET /api/v1/services`; unknown parameters are ignored. */
export function parseServiceListQuery(query: QueryInput): QueryParseResult<ServiceListQuery> {
  const tagParameters: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    if (name.startsWith(tagParameterPrefix)) tagParameters[name] = value;
  }
  const result = serviceListQuerySchema.safeParse({
    limit: query['limit'],
    offset: query['offset'],
    status: query['status'],
    tags: tagParameters,
  });
  if (!result.success) return { success: false, issues: issuesOf(result.error) };
  // `tag.__proto__` is refused above: any other key assigned here becomes an own property.
  const tags: Record<string, string> = {};
  for (const [name, value] of Object.entries(result.data.tags ?? {})) {
    tags[name.slice(tagParameterPrefix.length)] = value;
  }
  const { limit, offset, status } = result.data;
  return {
    success: true,
    data: status === undefined ? { limit, offset, tags } : { limit, offset, status, tags },
  };
}

function floorTo(timeMs: number, stepMs: number): number {
  return Math.floor(timeMs / stepMs) * stepMs;
}

function ceilTo(timeMs: number, stepMs: number): number {
  return Math.ceil(timeMs / stepMs) * stepMs;
}

/**
 * Query parameters of `GET /api/v1/services/:id/metrics`, with the defaults applied at `nowMs`
 * (`to` now, `from` an hour before `to`, `step` by range) and the range checked.
 */
export function parseServiceMetricsQuery(
  query: QueryInput,
  nowMs: number,
): QueryParseResult<ServiceMetricsQuery> {
  const result = serviceMetricsQuerySchema.safeParse({
    metric: query['metric'],
    from: query['from'],
    to: query['to'],
    step: query['step'],
  });
  if (!result.success) return { success: false, issues: issuesOf(result.error) };
  const { metric } = result.data;
  const toMs = result.data.to === undefined ? nowMs : Date.parse(result.data.to);
  const fromMs =
    result.data.from === undefined
      ? toMs - apiLimits.defaultMetricsRangeMs
      : Date.parse(result.data.from);
  const rangeMs = toMs - fromMs;
  const fail = (parameter: string, message: string): QueryParseResult<ServiceMetricsQuery> => ({
    success: false,
    issues: [{ parameter, message }],
  });
  if (rangeMs <= 0) return fail('from', 'must be before to');
  if (rangeMs > apiLimits.maxMetricsRangeMs) {
    return fail('from', 'must be at most 366 days before to');
  }
  const step = result.data.step ?? (rangeMs <= apiLimits.maxDefaultMinuteStepRangeMs ? '1m' : '1h');
  if (step === '1m' && rangeMs > apiLimits.maxMinuteStepRangeMs) {
    return fail('step', 'must be 1h for ranges over 7 days');
  }
  const stepMs = metricStepMs[step];
  return {
    success: true,
    data: {
      metric,
      step,
      from: new Date(floorTo(fromMs, stepMs)),
      to: new Date(ceilTo(toMs, stepMs)),
    },
  };
}

// ---- operations ----------------------------------------------------------------------------

/** `GET /healthz` of every role: the process is alive. */
export const healthResponseSchema = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });

/** `GET /readyz` of every role: 200 when every dependency answers, 503 otherwise. */
export const readinessResponseSchema = z
  .object({
    status: z.enum(['ready', 'unavailable']),
    checks: z
      .record(z.string(), z.enum(['up', 'down']))
      .meta({ description: 'Each dependency of the role, e.g. `database`.' }),
  })
  .meta({ id: 'Readiness' });
