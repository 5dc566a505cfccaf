import type { Router as ExpressRouter } from 'express';
import type { ApiKeyAuthenticator } from '@monitor/auth';
import type { ApiRouteDeps } from './api-routes.js';
import { apiRoutes } from './api-routes.js';
import { createOpenApiDocument } from './openapi-document.js';
import { createRoutesRouter } from './routes-router.js';

export type ApiRouterDeps = Omit<ApiRouteDeps, 'nowMs' | 'openApiJson'> & {
  /** Resolves API keys (cached); a lookup that throws is a dependency failure (503). */
  authenticator: ApiKeyAuthenticator;
  /**
   * The clock of staleness, of the metrics defaults, of the resolution time of alerts a rule
   * change resolves and of the investigation range check; `Date.now` when omitted.
   */
  nowMs?: () => number;
};

/**
 * The REST API under `/api/v1` (absolute paths: mount it with `app.use(router)`): `apiRoutes`
 * but ingest, GETs behind the `read` scope, changes behind `write`, the OpenAPI document public.
 */
export function createApiRouter(deps: ApiRouterDeps): ExpressRouter {
  const { authenticator, nowMs = Date.now, ...stores } = deps;
  const openApiJson = JSON.stringify(createOpenApiDocument());
  return createRoutesRouter(apiRoutes, {
    deps: { ...stores, nowMs, openApiJson },
    authenticator,
  });
}
