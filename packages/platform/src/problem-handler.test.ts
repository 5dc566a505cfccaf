import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dependencyUnavailable, notFound } from './app-error.js';
import { internalErrorDetail, problemContentType } from './problem.js';
import { createMemoryLogger } from './testing/memory-logger.js';
import {
  methodNotAllowedHandler,
  notFoundHandler,
  problemHandler,
  sendProblem,
} from './problem-handler.js';

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(async (server) => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }),
  );
});

/** Serves `handler` on an ephemeral port of 127.0.0.1 until the test ends. */
async function serve(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An app the way roles build one: routes, then the 404 and problem handlers. */
function buildApp() {
  const { logger, lines } = createMemoryLogger();
  const app = express();
  app.use(express.json({ limit: '64b' }));
  app
    .route('/rules')
    .get((_req, res) => {
      res.json({ rules: [] });
    })
    .post((req, res) => {
      const body = z.object({ name: z.string(), threshold: z.number() }).parse(req.body);
      res.status(201).json(body);
    })
    .all(methodNotAllowedHandler(['GET', 'POST']));
  app.get('/rules/:id', (req) => {
    throw notFound(`Rule ${req.params.id}`);
  });
  app.get('/boom', async () => {
    await Promise.resolve();
    throw new Error('SELECT secret FROM api_keys');
  });
  app.get('/bus', () => {
    throw dependencyUnavailable('The message bus', 7, new Error('broker down'));
  });
  app.get('/late', (_req, res, next) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.write('partial');
    next(new Error('failed mid-response'));
  });
  app.use(notFoundHandler);
  app.use(problemHandler(logger));
  return { app, lines };
}

async function problemOf(response: Response) {
  expect(response.headers.get('content-type')).toBe(problemContentType);
  return (await response.json()) as Record<string, unknown>;
}

describe('problemHandler', () => {
  it('answers malformed JSON with 422 problem+json', async () => {
    const { app } = buildApp();
    const url = await serve(app);
    const response = await fetch(`${url}/rules`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name": "cpu",',
    });
    expect(response.status).toBe(422);
    expect(await problemOf(response)).toEqual({
      type: 'https://monitor.dev/problems/validation',
      title: 'Invalid request',
      status: 422,
      detail: 'The request body is not valid JSON.',
      errors: [{ path: '', message: 'malformed JSON' }],
    });
  });

  it('answers an invalid body with 422 naming each path', async () => {
    const { app, lines } = buildApp();
    const url = await serve(app);
    const response = await fetch(`${url}/rules`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'cpu', threshold: 'high' }),
    });
    expect(response.status).toBe(422);
    const body = await problemOf(response);
    const errors = body.errors as { path: string; message: string }[];
    expect(errors.map((issue) => issue.path)).toEqual(['threshold']);
    expect(errors[0]?.message).toMatch(/number/);
    expect(lines().at(-1)).toMatchObject({
      level: 'info',
      msg: 'request rejected',
      status: 422,
      code: 'validation',
      method: 'POST',
      path: '/rules',
    });
  });

  it('answers a body over the limit with 413', async () => {
    const { app } = buildApp();
    const url = await serve(app);
    const response = await fetch(`${url}/rules`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(100), threshold: 1 }),
    });
    expect(response.status).toBe(413);
    expect((await problemOf(response)).detail).toBe('The request body exceeds 64 bytes.');
  });

  it('answers an AppError thrown by a route with its status', async () => {
    const { app } = buildApp();
    const url = await serve(app);
    const response = await fetch(`${url}/rules/rul_missing`);
    expect(response.status).toBe(404);
    expect((await problemOf(response)).detail).toBe('Rule rul_missing was not found.');
  });

  it('answers a rejected async handler with a generic 500 and logs the error', async () => {
    const { app, lines } = buildApp();
    const url = await serve(app);
    const response = await fetch(`${url}/boom?token=abc`);
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(response.headers.get('content-type')).toBe(problemContentType);
    expect(JSON.parse(text)).toMatchObject({ status: 500, detail: internalErrorDetail });
    expect(text).not.toContain('SELECT');
    expect(text).not.toContain('api_keys');
    const line = lines().at(-1);
    expect(line).toMatchObject({
      level: 'error',
      msg: 'request failed',
      path: '/boom',
      status: 500,
      err: { message: 'SELECT secret FROM api_keys' },
    });
    expect((line?.err as { stack: string }).stack).toContain('problem-handler.test.ts');
  });

  it('answers an unavailable dependency with 503 and Retry-After, logged at warn', async () => {
    const { app, lines } = buildApp();
    const url = await serve(app);
    const response = await fetch(`${url}/bus`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('7');
    expect((await problemOf(response)).detail).toBe('The message bus is temporarily unavailable.');
    expect(lines().at(-1)).toMatchObject({ level: 'warn', code: 'dependency_unavailable' });
  });

  it('closes the connection when the response had already started', async () => {
    const { app, lines } = buildApp();
    const url = await serve(app);
    const response = await fetch(`${url}/late`);
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    expect(lines().at(-1)).toMatchObject({
      level: 'error',
      msg: 'request failed after the response started',
    });
  });
});

describe('notFoundHandler', () => {
  it('answers an unknown route with a 404 problem', async () => {
    const { app } = buildApp();
    const url = await serve(app);
    const response = await fetch(`${url}/nowhere?x=1`);
    expect(response.status).toBe(404);
    expect(await problemOf(response)).toEqual({
      type: 'https://monitor.dev/problems/not-found',
      title: 'Not found',
      status: 404,
      detail: 'Route GET /nowhere was not found.',
    });
  });
});

describe('methodNotAllowedHandler', () => {
  it('answers a wrong method on a known path with 405 and Allow', async () => {
    const { app } = buildApp();
    const url = await serve(app);
    const response = await fetch(`${url}/rules`, { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, POST, HEAD');
    expect((await problemOf(response)).status).toBe(405);
  });

  it('leaves the allowed methods alone', async () => {
    const { app } = buildApp();
    const url = await serve(app);
    const response = await fetch(`${url}/rules`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ rules: [] });
  });
});

describe('sendProblem', () => {
  it('writes a problem on a plain node response', async () => {
    const url = await serve((_req, res) => {
      sendProblem(res, dependencyUnavailable('The database', 3));
    });
    const response = await fetch(url);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await problemOf(response)).toMatchObject({
      type: 'https://monitor.dev/problems/dependency-unavailable',
      status: 503,
    });
  });
});
