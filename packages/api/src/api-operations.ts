import { z } from 'zod';
import type { ZodType } from 'zod';
import { ingestPath } from '@monitor/gateway';
import { idSchema } from '@monitor/platform';
import {
  healthResponseSchema,
  ingestLimits,
  ingestPayloadSchema,
  ingestResponseSchema,
  problemSchema,
  readinessResponseSchema,
  serviceDetailSchema,
  serviceListQuerySchema,
  serviceListResponseSchema,
  serviceMetricsQuerySchema,
  serviceMetricsResponseSchema,
} from '@monitor/schemas';

export const apiBasePath = '/api/v1';
export const openApiPath = `${apiBasePath}/openapi.json`;
export const servicesPath = `${apiBasePath}/services`;
export const servicePath = `${apiBasePath}/services/:id`;
export const serviceMetricsPath = `${apiBasePath}/services/:id/metrics`;

export type ApiMethod = 'get' | 'post';

export type ApiResponseSpec = {
  description: string;
  contentType: 'application/json' | 'application/problem+json' | 'text/plain';
  /** The body; a `text/plain` body is a string. */
  schema: ZodType;
  /** Response headers worth documenting, name → description. */
  headers?: Readonly<Record<string, string>>;
};

/**
 * One operation of the HTTP interface. The OpenAPI document is generated from this table and
 * the conformance tests validate real responses with the same schemas, so neither can drift.
 */
export type ApiOperation = {
  method: ApiMethod;
  /** Express style (`/api/v1/services/:id`); the document writes `{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** The API key scope required; `none` for public endpoints. */
  scope: 'read' | 'ingest' | 'none';
  request?: {
    params?: z.ZodObject;
    query?: z.ZodObject;
    headers?: z.ZodObject;
    body?: { schema: ZodType; description: string };
  };
  responses: Readonly<Record<number, ApiResponseSpec>>;
};

const problemDescriptions: Readonly<Record<number, string>> = {
  401: 'The API key is missing or unknown.',
  403: 'The API key lacks the scope this operation needs.',
  404: 'No such resource in the caller’s organization (a resource of another organization is 404 too).',
  413: 'The body exceeds 1 MiB after decompression.',
  415: 'The body is not application/json, or its Content-Encoding is not gzip.',
  422: 'A parameter or the body is invalid; `errors` names each one with the reason.',
  429: 'Rate limited: too many requests for this API key.',
  500: 'An unexpected error; it has been logged.',
  503: 'A dependency (database, message bus) is unavailable; retry after `Retry-After` seconds.',
};

const problemHeaders: Readonly<Record<number, Readonly<Record<string, string>>>> = {
  401: { 'WWW-Authenticate': 'Bearer realm="monitor"' },
  429: { 'Retry-After': 'Seconds to wait before trying again.' },
  503: { 'Retry-After': 'Seconds to wait before trying again.' },
};

/** Problem responses for these statuses (401 and 403 come with `scope`, 500 always). */
function problems(...statuses: number[]): Record<number, ApiResponseSpec> {
  const result: Record<number, ApiResponseSpec> = {};
  for (const status of [...statuses, 500]) {
    const headers = problemHeaders[status];
    result[status] = {
      description: problemDescriptions[status] ?? 'A problem.',
      contentType: 'application/problem+json',
      schema: problemSchema,
      ...(headers === undefined ? {} : { headers }),
    };
  }
  return result;
}

const json = (description: string, schema: ZodType): ApiResponseSpec => ({
  description,
  contentType: 'application/json',
  schema,
});

const serviceIdParams = z.object({
  id: idSchema('svc').meta({
    description: 'The service id, `svc_<ULID>`. A malformed id is 404, like an unknown one.',
  }),
});

/**
 * The ingest body for the document: `ingestBodySchema`'s alternatives with the payload named,
 * and the rules zod refinements carry (which JSON Schema cannot show) written out.
 */
const ingestPayloadDocument = ingestPayloadSchema.meta({
  id: 'IngestPayload',
  description:
    `One host sample. \`metrics\`: 1 to ${ingestLimits.maxMetricsPerPayload} entries, names ` +
    'matching `^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$`, finite numbers. `timestamp`: default the ' +
    'time of receipt; more than 10 minutes in the future or older than the raw retention is ' +
    `422. \`tags\`: at most ${ingestLimits.maxTags}.`,
});
const ingestBodyDocument = z.union([
  ingestPayloadDocument,
  z.array(ingestPayloadDocument).min(1).max(ingestLimits.maxPayloadsPerRequest),
]);

const rateLimitHeaders = {
  'RateLimit-Policy': 'The limit per API key, e.g. `6000;w=60`.',
  RateLimit: 'Requests left in the current window and when it resets.',
};

/** Every operation served, in document order. */
export const apiOperations: readonly ApiOperation[] = [
  {
    method: 'get',
    path: servicesPath,
    operationId: 'listServices',
    summary: 'List the monitored services',
    description:
      'The services (hosts) of the caller’s organization, ordered by name then id, with their ' +
      'derived status and the latest value of each metric. Filters combine with AND.',
    tags: ['services'],
    scope: 'read',
    request: { query: serviceListQuerySchema },
    responses: {
      200: json('One page of services.', serviceListResponseSchema),
      ...problems(401, 403, 422, 503),
    },
  },
  {
    method: 'get',
    path: servicePath,
    operationId: 'getService',
    summary: 'Get a service with its latest snapshot and active alerts',
    tags: ['services'],
    scope: 'read',
    request: { params: serviceIdParams },
    responses: {
      200: json('The service.', serviceDetailSchema),
      ...problems(401, 403, 404, 503),
    },
  },
  {
    method: 'get',
    path: serviceMetricsPath,
    operationId: 'getServiceMetrics',
    summary: 'Read a metric of a service over time',
    description:
      'Buckets of one metric from the 1-minute and 1-hour aggregates. `from` is rounded down ' +
      'and `to` up to whole steps. Raw samples are never read for more than the last hour: ' +
      'they only fill the newest buckets that the aggregates have not reached yet. A metric ' +
      'the service never reported gives an empty `points` list.',
    tags: ['services'],
    scope: 'read',
    request: { params: serviceIdParams, query: serviceMetricsQuerySchema },
    responses: {
      200: json('The metric’s buckets, oldest first.', serviceMetricsResponseSchema),
      ...problems(401, 403, 404, 422, 503),
    },
  },
  {
    method: 'post',
    path: ingestPath,
    operationId: 'ingest',
    summary: 'Send host samples',
    description:
      'One payload or an array of 1 to 1000. Answered 200 only once the samples are durable. ' +
      'The API key is checked before the body is read. Unknown top-level fields are ignored.',
    tags: ['ingest'],
    scope: 'ingest',
    request: {
      headers: z.object({
        'Content-Encoding': z
          .enum(['gzip'])
          .optional()
          .meta({ description: 'gzip-compressed bodies are accepted.' }),
      }),
      body: { schema: ingestBodyDocument, description: 'A host sample, or an array of them.' },
    },
    responses: {
      200: {
        ...json('Samples accepted.', ingestResponseSchema.meta({ id: 'IngestResponse' })),
        headers: rateLimitHeaders,
      },
      ...problems(401, 403, 413, 415, 422, 429, 503),
    },
  },
  {
    method: 'get',
    path: openApiPath,
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI document',
    description: 'Public: it describes the interface and reveals no data.',
    tags: ['meta'],
    scope: 'none',
    responses: {
      200: json('The OpenAPI 3.1 document.', z.record(z.string(), z.unknown())),
      ...problems(),
    },
  },
  {
    method: 'get',
    path: '/healthz',
    operationId: 'getHealth',
    summary: 'Liveness: the process answers',
    description: 'Public, like /readyz and /metrics: they reveal nothing but up or down.',
    tags: ['operations'],
    scope: 'none',
    responses: { 200: json('Alive.', healthResponseSchema) },
  },
  {
    method: 'get',
    path: '/readyz',
    operationId: 'getReadiness',
    summary: 'Readiness: every dependency of the role answers',
    tags: ['operations'],
    scope: 'none',
    responses: {
      200: json('Ready.', readinessResponseSchema),
      503: json('A dependency is down.', readinessResponseSchema),
    },
  },
  {
    method: 'get',
    path: '/metrics',
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    tags: ['operations'],
    scope: 'none',
    responses: {
      200: {
        description: 'The Prometheus text exposition format.',
        contentType: 'text/plain',
        schema: z.string(),
      },
    },
  },
];

function toPattern(path: string): RegExp {
  const escaped = path
    .split('/')
    .map((segment) =>
      segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

const patterns = apiOperations.map((operation) => ({
  operation,
  pattern: toPattern(operation.path),
}));

/** The operation serving `method` on a concrete path (`/api/v1/services/svc_…`), if any. */
export function findApiOperation(method: string, path: string): ApiOperation | undefined {
  const wanted = method.toLowerCase();
  const bare = path.split('?', 1)[0] ?? '';
  return patterns.find(
    ({ operation, pattern }) => operation.method === wanted && pattern.test(bare),
  )?.operation;
}
