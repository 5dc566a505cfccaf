import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from '@monitor/platform';
import { AppError, logRequest, sendProblem } from '@monitor/platform';
import { ingestPath } from '@monitor/schemas';
import type { GatewayMetrics } from './gateway-metrics.js';

/**
 * The gateway's request listener: `POST /api/v1/ingest` goes straight to the ingest handler on
 * node:http; everything else (health, metrics, 404/405 problems, and in role `all` the REST API)
 * goes to the express app, where express costs nothing that matters.
 */
export function createGatewayListener(deps: {
  ingest: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  app: RequestListener;
  metrics: GatewayMetrics;
  logger: Logger;
}): RequestListener {
  // The express app logs every other request itself, with the same fields and component.
  const requestLog = deps.logger.child({ component: 'http' });
  return (req, res) => {
    if (req.method !== 'POST' || pathOf(req.url) !== ingestPath) {
      deps.app(req, res);
      return;
    }
    const startedAt = performance.now();
    res.once('close', () => {
      const durationMs = performance.now() - startedAt;
      deps.metrics.observeRequest(res.writableFinished ? res.statusCode : 499, durationMs / 1000);
      // One line per request, never per payload or sample (its org, once the key is known).
      logRequest(requestLog, req, res, durationMs, ingestPath);
    });
    deps.ingest(req, res).catch((err: unknown) => {
      // A dependency that is away heals itself (WARN); anything else is a bug (ERROR).
      if (err instanceof AppError && err.code === 'dependency_unavailable') {
        deps.logger.warn({ err }, 'ingest request failed: a dependency is unavailable');
      } else deps.logger.error({ err }, 'ingest request failed unexpectedly');
      if (!res.headersSent) sendProblem(res, err);
      else res.destroy();
    });
  };
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}
