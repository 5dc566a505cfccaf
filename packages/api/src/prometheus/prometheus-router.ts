import express, { Router } from 'express';
import type { Response, Router as ExpressRouter } from 'express';
import type { ApiKeyAuthenticator } from '@monitor/auth';
import { authenticatedKey, requireScope } from '@monitor/auth';
import type { Logger } from '@monitor/platform';
import { prometheusErrorHandler } from './prometheus-error.js';
import type { PrometheusRouteDeps } from './prometheus-routes.js';
import { prometheusRoutes } from './prometheus-routes.js';
import { formatQueryRoutes } from './format-query-routes.js';
import { prometheusStatusRoutes } from './prometheus-status-routes.js';
import { createRemoteReadHandler } from './remote-read.js';

export type PrometheusRouterDeps = PrometheusRouteDeps & {
  authenticator: ApiKeyAuthenticator;
  logger: Logger;
};

/**
 * The Prometheus-compatible API under `/prometheus` (absolute paths: mount with `app.use`),
 * every route behind the `read` scope. Its own error mapper, so that every answer, refusals of
 * the key included, has the shape Prometheus clients read.
 */
export function createPrometheusRouter(deps: PrometheusRouterDeps): ExpressRouter {
  const { authenticator, logger, ...routeDeps } = deps;
  const router = Router();
  // Refusals are thrown, for `prometheusErrorHandler` to answer in Prometheus' shape.
  const authenticate = requireScope(authenticator, 'read');
  const orgOf = (res: Response): string => authenticatedKey(res).orgId;
  const form = express.urlencoded({ extended: false, limit: '1mb' });
  // Remote read beside the JSON routes: its body is snappy protobuf, not a form.
  router.post(
    '/prometheus/api/v1/read',
    authenticate,
    createRemoteReadHandler(
      {
        sourceFor: (orgId) => routeDeps.sourceFor(orgId),
        limits: routeDeps.limits,
      },
      orgOf,
    ),
  );
  for (const route of [...prometheusRoutes, ...prometheusStatusRoutes, ...formatQueryRoutes]) {
    const handle = route.handle;
    if (handle === undefined) continue;
    router[route.method](route.path, authenticate, form, async (req, res) => {
      await handle({
        params: req.params,
        query: req.query,
        body: req.body as unknown,
        res,
        deps: { ...routeDeps, orgId: orgOf(res) },
      });
    });
  }
  const onError = prometheusErrorHandler(logger, 'prometheus');
  router.use('/prometheus', onError);
  return router;
}
