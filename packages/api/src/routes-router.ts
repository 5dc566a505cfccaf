import { Router } from 'express';
import type { RequestHandler, Router as ExpressRouter } from 'express';
import type { ApiKeyAuthenticator } from '@monitor/auth';
import { requireScope } from '@monitor/auth';
import { methodNotAllowedHandler } from '@monitor/platform';
import type { ApiRoute } from './api-route.js';
import { jsonBody } from './json-body.js';

export type RoutesRouterOptions<Deps> = {
  /** What the handlers need. */
  deps: Deps;
  /** Resolves API keys (cached); a lookup that throws is a dependency failure (503). */
  authenticator: ApiKeyAuthenticator;
};

/**
 * A router serving the `routes` that have a handler, at their absolute paths and in their
 * order (so `/alerts/rules` must come before `/alerts/:id`): the scope check (`requireScope`,
 * its refusals thrown as problems), then a JSON body when the route declares one, then the
 * handler. A known path with another method is 405 with `Allow`. Errors go to the app's problem
 * handler (the stores raise typed errors: a database that is away is already a 503
 * `dependency_unavailable`).
 */
export function createRoutesRouter<Deps>(
  routes: readonly ApiRoute<Deps>[],
  { deps, authenticator }: RoutesRouterOptions<Deps>,
): ExpressRouter {
  const router = Router();
  const routesByPath = new Map<string, ServedRoute<Deps>[]>();
  for (const route of routes) {
    if (!isServed(route)) continue;
    routesByPath.set(route.path, [...(routesByPath.get(route.path) ?? []), route]);
  }
  for (const [path, pathRoutes] of routesByPath) {
    const expressRoute = router.route(path);
    for (const { scope, checkPath, request, handle, method } of pathRoutes) {
      const handlers: RequestHandler[] =
        scope === 'none' ? [] : [requireScope(authenticator, scope)];
      if (checkPath !== undefined) {
        handlers.push((req, _res, next) => {
          checkPath(req.params);
          next();
        });
      }
      if (request?.body !== undefined) handlers.push(...jsonBody);
      handlers.push(async (req, res) => {
        await handle({ params: req.params, query: req.query, body: req.body, res, deps });
      });
      expressRoute[method](...handlers);
    }
    expressRoute.all(methodNotAllowedHandler(pathRoutes.map(({ method }) => method)));
  }
  return router;
}

type ServedRoute<Deps> = ApiRoute<Deps> & Required<Pick<ApiRoute<Deps>, 'handle'>>;

function isServed<Deps>(route: ApiRoute<Deps>): route is ServedRoute<Deps> {
  return route.handle !== undefined;
}
