import express from 'express';
import type { Express } from 'express';
import type { Logger, Metrics } from '@monitor/platform';
import {
  httpMetrics,
  methodNotAllowedHandler,
  metricsHandler,
  notFoundHandler,
  problemHandler,
  requestLogger,
} from '@monitor/platform';

/** Whether each dependency of a role answers; a check must settle within a few seconds. */
export type ReadinessCheck = { name: string; check: () => Promise<boolean> };

/**
 * The express app of every role: a log line per request (`component: http`; probes at debug),
 * `/healthz`, `/readyz`, `/metrics`, then whatever routes the role mounts through `mount`, then
 * 404 and the problem handler.
 */
export function createRoleApp(deps: {
  logger: Logger;
  metrics: Metrics;
  readiness: readonly ReadinessCheck[];
  mount?: (app: Express) => void;
}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(requestLogger(deps.logger.child({ component: 'http' })));
  app.use(httpMetrics(deps.metrics));
  // Another method on these known paths (TRACE included) is 405 with Allow, as on /api/v1.
  const getOnly = methodNotAllowedHandler(['GET']);
  app
    .route('/healthz')
    .get((_req, res) => {
      res.json({ status: 'ok' });
    })
    .all(getOnly);
  app
    .route('/readyz')
    .get(async (_req, res) => {
      const results = await Promise.all(
        deps.readiness.map(
          async ({ name, check }) => [name, await check().catch(() => false)] as const,
        ),
      );
      const ready = results.every(([, ok]) => ok);
      res.status(ready ? 200 : 503).json({
        status: ready ? 'ready' : 'unavailable',
        checks: Object.fromEntries(results.map(([name, ok]) => [name, ok ? 'up' : 'down'])),
      });
    })
    .all(getOnly);
  app.route('/metrics').get(metricsHandler(deps.metrics)).all(getOnly);
  deps.mount?.(app);
  app.use(notFoundHandler);
  app.use(problemHandler(deps.logger));
  return app;
}
