import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, createMetrics } from '@monitor/platform';
import { createRoleApp } from './ops-app.js';

const server = createServer(
  createRoleApp({
    logger: createLogger({ level: 'silent' }),
    metrics: createMetrics({ defaultMetrics: false }),
    readiness: [{ name: 'database', check: () => Promise.resolve(true) }],
  }),
);
let baseUrl = '';

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** node:http rather than fetch, which refuses to send TRACE. */
async function send(
  method: string,
  path: string,
): Promise<{ status: number; headers: Record<string, unknown> }> {
  const req = request(baseUrl + path, { method });
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  res.resume();
  await once(res, 'end');
  return { status: res.statusCode ?? 0, headers: res.headers };
}

describe('createRoleApp', () => {
  it.each(['/healthz', '/readyz', '/metrics'])('answers GET %s', async (path) => {
    expect((await fetch(baseUrl + path)).status).toBe(200);
  });

  it.each([
    ['TRACE', '/healthz'],
    ['POST', '/readyz'],
    ['DELETE', '/metrics'],
    ['TRACE', '/metrics'],
  ])('answers %s %s with 405, Allow and a problem', async (method, path) => {
    const response = await send(method, path);
    expect(response.status).toBe(405);
    expect(response.headers['allow']).toBe('GET, HEAD');
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('answers 404 on an unknown path', async () => {
    expect((await send('TRACE', '/nowhere')).status).toBe(404);
  });
});
