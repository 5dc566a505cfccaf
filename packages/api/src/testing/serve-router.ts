import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Router } from 'express';
import { afterAll, beforeAll } from 'vitest';
import type { ApiCall, ApiExchange } from '@monitor/testkit/builders';
import { createApiCall } from '@monitor/testkit/builders';
import { createLogger, notFoundHandler, problemHandler } from '@monitor/platform';

/**
 * Serves `router` as a role does (then the 404 and problem handlers) on a local port for the
 * test file that calls it, from its `beforeAll` to its `afterAll`. `call` records every
 * exchange in `exchanges`, for the file's OpenAPI conformance check.
 */
export function serveRouter(router: () => Router): { call: ApiCall; exchanges: ApiExchange[] } {
  const exchanges: ApiExchange[] = [];
  let server: Server | undefined;
  let baseUrl = '';

  beforeAll(async () => {
    const app = express();
    app.use(router());
    app.use(notFoundHandler);
    app.use(problemHandler(createLogger({ level: 'silent', name: 'test' })));
    server = createServer(app);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  return { call: createApiCall({ baseUrl: () => baseUrl, exchanges }), exchanges };
}
