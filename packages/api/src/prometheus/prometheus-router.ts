import express, { Router } from 'express';
import type { RequestHandler, Response, Router as ExpressRouter } from 'express';
import type { ApiKeyAuthenticator } from '@monitor/auth';
import { apiKeyFromHeaders, hasScope } from '@monitor/auth';
import type { Logger } from '@monitor/platform';
import { forbidden, noteRequestOrg, unauthorized } from '@monitor/platform';
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

const orgLocal = 'prometheusOrgId';

/**
 * The Prometheus-compatible API under `/prometheus` (absolute paths: mount with `app.use`).
 * Its own authentication step and error mapper, so that every answer, failures included, has
 * the shape Prometheus clients read.
 */
export function createPrometheusRouter(deps: PrometheusRouterDeps): ExpressRouter {
  const { authenticator, logger, ...routeDeps } = deps;
  const router = Router();
  const authenticate: RequestHandler = async (req, res, next) => {
    const key = await authenticator.authenticate(apiKeyFromHeaders(req.headers));
    if (key === undefined) throw unauthorized();
    noteRequestOrg(res, key.orgId);
    if (!hasScope(key, 'read'))
      throw forbidden('The API key lacks the read scope this operation needs.');
    res.locals[orgLocal] = key.orgId;
    next();
  };
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
      (res: Response) => res.locals[orgLocal] as string,
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
        deps: { ...routeDeps, orgId: res.locals[orgLocal] as string },
      });
    });
  }
  const onError = prometheusErrorHandler(logger, 'prometheus');
  router.use('/prometheus', onError);
  return router;
}
