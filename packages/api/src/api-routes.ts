import { z } from 'zod';
import {
  formatRateLimit,
  formatRateLimitPolicy,
  healthResponseSchema,
  ingestLimits,
  ingestPath,
  ingestPayloadSchema,
  ingestResponseSchema,
  rateLimitHeaderPatterns,
  rateLimitPolicyName,
  readinessResponseSchema,
} from '@monitor/schemas';
import type { AlertRouteDeps } from './alert-routes.js';
import { alertRoutes } from './alert-routes.js';
import type { AlertRuleRouteDeps } from './alert-rule-routes.js';
import { alertRuleRoutes } from './alert-rule-routes.js';
import type { ApiRoute } from './api-route.js';
import { apiBasePath, json, problems } from './api-route.js';
import type { InvestigationRouteDeps } from './investigation-routes.js';
import { investigationRoutes } from './investigation-routes.js';
import type { NotificationRouteDeps } from './notification-routes.js';
import { notificationRoutes } from './notification-routes.js';
import type { ServiceRouteDeps } from './service-routes.js';
import { serviceRoutes } from './service-routes.js';
import type { SilenceRouteDeps } from './silence-routes.js';
import { silenceRoutes } from './silence-routes.js';

const openApiPath = `${apiBasePath}/openapi.json`;

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

/** What the handlers of `apiRoutes` need. */
export type ApiRouteDeps = ServiceRouteDeps &
  AlertRuleRouteDeps &
  AlertRouteDeps &
  InvestigationRouteDeps &
  NotificationRouteDeps &
  SilenceRouteDeps & {
    /** The OpenAPI document, serialized once: the schemas do not change while running. */
    openApiJson: string;
  };

/**
 * Every route of the HTTP interface, in document order (rules before alerts: see
 * `alertRoutes`). The ingest and operations routes are served by other roles: documented only.
 */
export const apiRoutes: readonly ApiRoute<ApiRouteDeps>[] = [
  ...serviceRoutes,
  ...alertRuleRoutes,
  ...alertRoutes,
  ...silenceRoutes,
  ...investigationRoutes,
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
    handle: ({ res, deps }) => {
      res.type('application/json').send(deps.openApiJson);
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

const patterns = apiRoutes.map((route) => ({ route, pattern: toPattern(route.path) }));

/** The route serving `method` on a concrete path (`/api/v1/services/svc_…`), if any. */
export function findApiRoute(method: string, path: string): ApiRoute | undefined {
  const wanted = method.toLowerCase();
  const bare = path.split('?', 1)[0] ?? '';
  return patterns.find(({ route, pattern }) => route.method === wanted && pattern.test(bare))
    ?.route;
}
