import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from '@monitor/platform';
import { AppError, logRequest, sendProblem } from '@monitor/platform';
import { ingestPath } from '@monitor/schemas';
import type { GatewayMetrics } from './gateway-metrics.js';

type WriteHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * The gateway's request listener: `POST /api/v1/ingest` and the agent protocols' writes go
 * straight to their handlers on node:http; everything else (health, metrics, 404/405 problems,
 * and in role `all` the REST API) goes to the express app, where express costs nothing that
 * matters.
 */
export function createGatewayListener(deps: {
  ingest: WriteHandler;
  /** The agent protocols' handlers by path. */
  agentWrites: ReadonlyMap<string, { protocol: string; handle: WriteHandler }>;
  app: RequestListener;
  metrics: GatewayMetrics;
  logger: Logger;
}): RequestListener {
  // The express app logs every other request itself, with the same fields and component.
  const requestLog = deps.logger.child({ component: 'http' });
  return (req, res) => {
    const path = req.method === 'POST' ? pathOf(req.url) : undefined;
    if (path === ingestPath) {
      serve(req, res, path, deps.ingest, (status, seconds) =>
        deps.metrics.observeRequest(status, seconds),
      );
      return;
    }
    const agentWrite = path === undefined ? undefined : deps.agentWrites.get(path);
    if (path === undefined || agentWrite === undefined) {
      deps.app(req, res);
      return;
    }
    serve(req, res, path, agentWrite.handle, (status, seconds) =>
      deps.metrics.observeAgentWrite(agentWrite.protocol, status, seconds),
    );
  };

  function serve(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    handle: WriteHandler,
    observe: (status: number, seconds: number) => void,
  ): void {
    const startedAt = performance.now();
    res.once('close', () => {
      const durationMs = performance.now() - startedAt;
      observe(res.writableFinished ? res.statusCode : 499, durationMs / 1000);
      // One line per request, never per payload or sample (its org, once the key is known).
      logRequest(requestLog, req, res, durationMs, path);
    });
    handle(req, res).catch((err: unknown) => {
      // A dependency that is away heals itself (WARN); anything else is a bug (ERROR).
      if (err instanceof AppError && err.code === 'dependency_unavailable') {
        deps.logger.warn({ err }, 'write request failed: a dependency is unavailable');
      } else deps.logger.error({ err }, 'write request failed unexpectedly');
      if (!res.headersSent) sendProblem(res, err);
      else res.destroy();
    });
  }
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}
