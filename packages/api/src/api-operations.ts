import { z } from 'zod';
import { idSchema } from '@monitor/platform';
import type { ApiRoute } from './api-route.js';
import { apiBasePath, created, json, noContent, problems } from './api-route.js';
import { notificationRoutes } from './notification-routes.js';
import {
  alertListQuerySchema,
  alertListResponseSchema,
  alertRuleCreateSchema,
  alertRuleListResponseSchema,
  alertRuleSchema,
  alertRuleUpdateSchema,
  alertSchema,
  formatRateLimit,
  formatRateLimitPolicy,
  healthResponseSchema,
  ingestLimits,
  ingestPath,
  ingestPayloadSchema,
  ingestResponseSchema,
  investigationCreateDocumentSchema,
  investigationDetailSchema,
  investigationListQuerySchema,
  investigationListResponseSchema,
  paginationQuerySchema,
  rateLimitHeaderPatterns,
  rateLimitPolicyName,
  readinessResponseSchema,
  serviceDetailSchema,
  serviceListQuerySchema,
  serviceListResponseSchema,
  serviceMetricsQuerySchema,
  serviceMetricsResponseSchema,
} from '@monitor/schemas';

export const openApiPath = `${apiBasePath}/openapi.json`;
export const servicesPath = `${apiBasePath}/services`;
export const servicePath = `${apiBasePath}/services/:id`;
export const serviceMetricsPath = `${apiBasePath}/services/:id/metrics`;
export const alertRulesPath = `${apiBasePath}/alerts/rules`;
export const alertRulePath = `${apiBasePath}/alerts/rules/:id`;
export const alertsPath = `${apiBasePath}/alerts`;
export const alertPath = `${apiBasePath}/alerts/:id`;
export const investigationsPath = `${apiBasePath}/investigations`;
export const investigationPath = `${apiBasePath}/investigations/:id`;

const idParams = (prefix: 'rul' | 'alr' | 'inv', what: string) =>
  z.object({
    id: idSchema(prefix).meta({
      description: `The ${what} id, \`${prefix}_<ULID>\`. A malformed id is 404, like an unknown one.`,
    }),
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

/** Examples made by the functions that write the real headers, for the default limit. */
const examplePolicy = rateLimitPolicyName(6000);

const rateLimitHeaders = {
  'RateLimit-Policy': {
    description:
      'The limit of the API key (IETF RateLimit headers, draft 8): the policy name, its quota ' +
      '`q` of requests per window `w` (seconds) and a partition key `pk` derived from the key ' +
      'id (never the key).',
    example: formatRateLimitPolicy(examplePolicy, 6000, 'MGE4ZjQ1YjE2NmFk'),
    pattern: rateLimitHeaderPatterns['RateLimit-Policy'],
  },
  RateLimit: {
    description:
      'The policy name, the requests `r` left in the current window and the seconds `t` until ' +
      'it resets.',
    example: formatRateLimit(examplePolicy, 5999, 60),
    pattern: rateLimitHeaderPatterns.RateLimit,
  },
};

/** Every operation served, in document order. */
export const apiOperations: readonly ApiRoute[] = [
  {
    method: 'get',
    path: servicesPath,
    operationId: 'listServices',
    summary: 'List the monitored services',
    description:
      'The services (hosts) of the caller’s organization, ordered by name (unique within an organization), with their ' +
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
    method: 'get',
    path: alertRulesPath,
    operationId: 'listAlertRules',
    summary: 'List the alert rules',
    description: 'The organization’s rules, newest first (by id). Deleted rules are not listed.',
    tags: ['alert rules'],
    scope: 'read',
    request: { query: paginationQuerySchema },
    responses: {
      200: json('One page of rules.', alertRuleListResponseSchema),
      ...problems(401, 403, 422, 503),
    },
  },
  {
    method: 'post',
    path: alertRulesPath,
    operationId: 'createAlertRule',
    summary: 'Create an alert rule',
    description:
      'Required: `name`, `metric`, `condition`, `threshold`, `severity`. Defaults: ' +
      '`duration_minutes` 0, `channels` [], `scope` {}, `enabled` true. An unknown or ' +
      'read-only field (`id`, `created_at`…) is 422. Evaluators apply the rule within seconds.',
    tags: ['alert rules'],
    scope: 'write',
    request: { body: { schema: alertRuleCreateSchema, description: 'The rule.' } },
    responses: {
      201: created('The stored rule.', alertRuleSchema),
      ...problems(401, 403, 413, 415, 422, 503),
    },
  },
  {
    method: 'get',
    path: alertRulePath,
    operationId: 'getAlertRule',
    summary: 'Get an alert rule',
    tags: ['alert rules'],
    scope: 'read',
    request: { params: idParams('rul', 'rule') },
    responses: {
      200: json('The rule.', alertRuleSchema),
      ...problems(401, 403, 404, 503),
    },
  },
  {
    method: 'patch',
    path: alertRulePath,
    operationId: 'updateAlertRule',
    summary: 'Change an alert rule',
    description:
      'Any non-empty subset of the writable fields; the others keep their value. `{}`, an ' +
      'unknown or a read-only field is 422. Changing what the rule evaluates (`metric`, ' +
      '`condition`, `threshold`, `duration_minutes`, `scope`) or `enabled` restarts its ' +
      'evaluation: its active alerts resolve (their channels are notified) and pending windows ' +
      'start afresh, in the same transaction; evaluators pick the change up within a second or ' +
      'two. `name`, `severity` and `channels` apply to alerts fired from then on.',
    tags: ['alert rules'],
    scope: 'write',
    request: {
      params: idParams('rul', 'rule'),
      body: { schema: alertRuleUpdateSchema, description: 'The fields to change.' },
    },
    responses: {
      200: json('The stored rule after the change.', alertRuleSchema),
      ...problems(401, 403, 404, 413, 415, 422, 503),
    },
  },
  {
    method: 'delete',
    path: alertRulePath,
    operationId: 'deleteAlertRule',
    summary: 'Delete an alert rule',
    description:
      'Resolves the rule’s active alerts (notifying their channels); the rule is 404 from ' +
      'then on. Its alerts stay listed with their `rule_name`.',
    tags: ['alert rules'],
    scope: 'write',
    request: { params: idParams('rul', 'rule') },
    responses: {
      204: noContent('Deleted.'),
      ...problems(401, 403, 404, 503),
    },
  },
  {
    method: 'get',
    path: alertsPath,
    operationId: 'listAlerts',
    summary: 'List alerts',
    description:
      'The organization’s alerts, newest first (by id): the active ones unless `status` says ' +
      'otherwise. Filters combine with AND.',
    tags: ['alerts'],
    scope: 'read',
    request: { query: alertListQuerySchema },
    responses: {
      200: json('One page of alerts.', alertListResponseSchema),
      ...problems(401, 403, 422, 503),
    },
  },
  {
    method: 'get',
    path: alertPath,
    operationId: 'getAlert',
    summary: 'Get an alert',
    tags: ['alerts'],
    scope: 'read',
    request: { params: idParams('alr', 'alert') },
    responses: {
      200: json('The alert.', alertSchema),
      ...problems(401, 403, 404, 503),
    },
  },
  {
    method: 'get',
    path: investigationsPath,
    operationId: 'listInvestigations',
    summary: 'List investigations',
    description:
      'The organization’s investigations, newest first (by id), with their findings. ' +
      'Filters combine with AND.',
    tags: ['investigations'],
    scope: 'read',
    request: { query: investigationListQuerySchema },
    responses: {
      200: json('One page of investigations.', investigationListResponseSchema),
      ...problems(401, 403, 422, 503),
    },
  },
  {
    method: 'post',
    path: investigationsPath,
    operationId: 'createInvestigation',
    summary: 'Open an investigation',
    description:
      'Of an alert (`{ alert_id }`, over its window `started_at`..`fired_at`), or of a service ' +
      'over a time range (`{ service_id, from, to }`). It is queued and runs in the ' +
      'background: poll its `Location`. An alert has at most one investigation: asking again ' +
      'answers the existing one, whatever its status. An alert or service the organization ' +
      'does not have is a 422 naming the field, like any other invalid body.',
    tags: ['investigations'],
    scope: 'write',
    request: {
      body: { schema: investigationCreateDocumentSchema, description: 'What to investigate.' },
    },
    responses: {
      202: created('The investigation, `queued` when new.', investigationDetailSchema),
      ...problems(401, 403, 413, 415, 422, 503),
    },
  },
  {
    method: 'get',
    path: investigationPath,
    operationId: 'getInvestigation',
    summary: 'Get an investigation with its analysis, timeline and recommendations',
    description: '`analysis` is null until the investigation has completed.',
    tags: ['investigations'],
    scope: 'read',
    request: { params: idParams('inv', 'investigation') },
    responses: {
      200: json('The investigation.', investigationDetailSchema),
      ...problems(401, 403, 404, 503),
    },
  },
  ...notificationRoutes,
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
export function findApiOperation(method: string, path: string): ApiRoute | undefined {
  const wanted = method.toLowerCase();
  const bare = path.split('?', 1)[0] ?? '';
  return patterns.find(
    ({ operation, pattern }) => operation.method === wanted && pattern.test(bare),
  )?.operation;
}
