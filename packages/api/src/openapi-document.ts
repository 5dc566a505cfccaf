import { OpenApiGeneratorV31, OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { ResponseConfig, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { apiLimits } from '@monitor/schemas';
import type { ApiResponseSpec, ApiRoute } from './api-route.js';
import { apiRoutes } from './api-routes.js';

/** An OpenAPI 3.1 document as JSON. */
export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

const description = `Host monitoring: ingest metrics, list services and read their history, define
alert rules, follow alerts and read the investigations opened when they fire.

**Authentication.** Every \`/api/v1\` endpoint except this document takes an API key in
\`X-API-Key\` or \`Authorization: Bearer <key>\`. A missing or unknown key is 401; a key without
the scope an operation needs (\`read\` for GETs, \`write\` for creating, changing and deleting
rules and opening investigations, \`ingest\` for POST /ingest) is 403. A resource of another
organization is 404, exactly as if it did not exist; so is a malformed id in a path.

**Errors.** Every 4xx and 5xx body is an RFC 9457 problem (\`application/problem+json\`). A
known path with another method is 405 with an \`Allow\` header; an unknown path is 404. A
request body must be \`application/json\` (415 otherwise) of at most 1 MiB (413); an invalid
body, malformed JSON included, is 422 with \`errors[{ path, message }]\` naming each field.

**Pagination.** Lists take \`limit\` (1 to ${apiLimits.maxLimit}, default ${apiLimits.defaultLimit})
and \`offset\` (default 0) and answer \`pagination { limit, offset, total, has_more }\`. A value
out of range or not an integer is 422 naming the parameter and the bound. Services are ordered
by name (unique within an organization); rules, alerts and investigations newest first.

**Input.** Every string of a body or query parameter is refused (422, naming it) when it
contains NUL (U+0000) or an unpaired UTF-16 surrogate (\`\\ud800\` alone): neither can be stored.
Patterns state the first; the second, which JSON text should not carry anyway (RFC 8259 §8.2),
only here. \`__proto__\` is refused as a metric name or as the key of any map (tags, scope).
Metric values are finite numbers from -1e100 to 1e100, so no aggregate can overflow.

**Time.** Timestamps are ISO 8601 in UTC with \`Z\`.`;

/** `/api/v1/services/:id` → `/api/v1/services/{id}`. */
export function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function toResponse(spec: ApiResponseSpec): ResponseConfig {
  return {
    description: spec.description,
    ...(spec.contentType === 'none'
      ? {}
      : { content: { [spec.contentType]: { schema: spec.schema } } }),
    ...(spec.headers === undefined
      ? {}
      : {
          headers: Object.fromEntries(
            Object.entries(spec.headers).map(([name, header]) => {
              const { description, example, pattern } =
                typeof header === 'string' ? { description: header } : header;
              return [
                name,
                {
                  description,
                  schema: {
                    type: 'string',
                    ...(pattern === undefined ? {} : { pattern }),
                    ...(example === undefined ? {} : { examples: [example] }),
                  },
                  ...(example === undefined ? {} : { example }),
                },
              ];
            }),
          ),
        }),
  };
}

function toRouteConfig(route: ApiRoute): RouteConfig {
  const { request } = route;
  return {
    method: route.method,
    path: toOpenApiPath(route.path),
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    tags: route.tags,
    ...(route.scope === 'none'
      ? { security: [] }
      : {
          'x-required-scope': route.scope,
          security: [{ apiKey: [] }, { bearer: [] }],
        }),
    request: {
      ...(request?.params === undefined ? {} : { params: request.params }),
      ...(request?.query === undefined ? {} : { query: request.query }),
      ...(request?.headers === undefined ? {} : { headers: request.headers }),
      ...(request?.body === undefined
        ? {}
        : {
            body: {
              description: request.body.description,
              required: request.body.optional !== true,
              content: { 'application/json': { schema: request.body.schema } },
            },
          }),
    },
    responses: Object.fromEntries(
      Object.entries(route.responses).map(([status, spec]) => [status, toResponse(spec)]),
    ),
  };
}

/** The OpenAPI 3.1 document of `apiRoutes`, generated from their zod schemas. */
export function createOpenApiDocument(): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
  });
  registry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'The API key as a bearer token.',
  });
  for (const route of apiRoutes) {
    registry.registerPath(toRouteConfig(route));
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Monitor API', version: '1.0.0', description },
    security: [{ apiKey: [] }, { bearer: [] }],
    tags: [
      { name: 'services', description: 'Monitored hosts, their status and metric history.' },
      { name: 'alert rules', description: 'What fires an alert, and where it is notified.' },
      { name: 'alerts', description: 'Alerts fired by the rules, active and resolved.' },
      {
        name: 'silences',
        description:
          'Silences and recurring maintenance windows: they act on notifications, not on alerts.',
      },
      {
        name: 'investigations',
        description: 'Automated analyses of an alert or of a service over a time range.',
      },
      { name: 'ingest', description: 'Metric ingestion from agents.' },
      { name: 'meta', description: 'This document.' },
      { name: 'operations', description: 'Health, readiness and metrics of every role.' },
    ],
  });
}
