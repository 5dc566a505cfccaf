import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { logRequest, loggedPath, noteRequestOrg, requestLogger } from './request-log.js';
import { createMemoryLogger } from './testing/memory-logger.js';

const apiKey = 'mon_live_0123456789abcdef0123456789abcdef';

function fakeRequest(method: string, url: string): IncomingMessage {
  return {
    method,
    url,
    headers: { 'x-api-key': apiKey, authorization: `Bearer ${apiKey}` },
  } as unknown as IncomingMessage;
}

/** A response that has ended with `status` (or, `finished: false`, was abandoned). */
function fakeResponse(status: number, finished = true): ServerResponse & EventEmitter {
  return Object.assign(new EventEmitter(), {
    statusCode: status,
    writableFinished: finished,
  }) as unknown as ServerResponse & EventEmitter;
}

describe('logRequest', () => {
  it('writes method, path, status, duration and org of an authenticated request', () => {
    const { logger, lines } = createMemoryLogger({ level: 'info' });
    const res = fakeResponse(200);
    noteRequestOrg(res, 'org_01J0000000000000000000000');
    logRequest(logger, fakeRequest('POST', '/api/v1/ingest'), res, 3.14159);
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'info',
        msg: 'request',
        method: 'POST',
        path: '/api/v1/ingest',
        status: 200,
        durationMs: 3.1,
        orgId: 'org_01J0000000000000000000000',
      }),
    ]);
  });

  it('leaves out the org of an unauthenticated request and logs its 4xx at info', () => {
    const { logger, lines } = createMemoryLogger({ level: 'info' });
    logRequest(logger, fakeRequest('GET', '/api/v1/services'), fakeResponse(401), 1);
    expect(lines()[0]).toMatchObject({ level: 'info', status: 401 });
    expect(lines()[0]).not.toHaveProperty('orgId');
  });

  it('never writes the API key, from a header or from the query string', () => {
    const { logger, text, lines } = createMemoryLogger({ level: 'trace' });
    const url = `/api/v1/services?api_key=${apiKey}&limit=5`;
    logRequest(logger, fakeRequest('GET', url), fakeResponse(200), 1);
    expect(lines()[0]).toMatchObject({ path: '/api/v1/services' });
    expect(text()).not.toContain(apiKey);
    expect(text()).not.toContain('limit');
  });

  it('logs 500 at error and 503, a dependency that comes back, at warn', () => {
    const { logger, lines } = createMemoryLogger({ level: 'info' });
    logRequest(logger, fakeRequest('POST', '/api/v1/ingest'), fakeResponse(500), 1);
    logRequest(logger, fakeRequest('POST', '/api/v1/ingest'), fakeResponse(503), 1);
    expect(lines().map((line) => [line.level, line.status])).toEqual([
      ['error', 500],
      ['warn', 503],
    ]);
  });

  it('logs an abandoned request as 499', () => {
    const { logger, lines } = createMemoryLogger({ level: 'info' });
    logRequest(logger, fakeRequest('POST', '/api/v1/ingest'), fakeResponse(200, false), 1);
    expect(lines()[0]).toMatchObject({ status: 499 });
  });

  it('logs health, readiness and metrics probes at debug only', () => {
    const quiet = createMemoryLogger({ level: 'info' });
    const verbose = createMemoryLogger({ level: 'debug' });
    for (const { logger } of [quiet, verbose]) {
      for (const path of ['/healthz', '/readyz', '/metrics']) {
        logRequest(
          logger,
          fakeRequest('GET', path),
          fakeResponse(path === '/readyz' ? 503 : 200),
          1,
        );
      }
    }
    expect(quiet.lines()).toEqual([]);
    expect(verbose.lines().map((line) => [line.level, line.path])).toEqual([
      ['debug', '/healthz'],
      ['debug', '/readyz'],
      ['debug', '/metrics'],
    ]);
  });
});

describe('loggedPath', () => {
  it('drops the query string and caps the length', () => {
    expect(loggedPath('/a/b?token=x')).toBe('/a/b');
    expect(loggedPath(undefined)).toBe('/');
    expect(loggedPath(`/${'x'.repeat(500)}`)).toHaveLength(201);
  });
});

describe('requestLogger', () => {
  it('logs one line when the response closes, with the path as the client sent it', () => {
    const { logger, lines } = createMemoryLogger({ level: 'info' });
    const req = Object.assign(fakeRequest('GET', '/services/svc_1'), {
      originalUrl: `/api/v1/services/svc_1?api_key=${apiKey}`,
    }) as unknown as Request;
    const res = fakeResponse(404);
    let nextCalls = 0;
    requestLogger(logger)(req, res as unknown as Response, (() => nextCalls++) as NextFunction);
    expect(nextCalls).toBe(1);
    expect(lines()).toEqual([]);
    res.emit('close');
    expect(lines()).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/api/v1/services/svc_1',
        status: 404,
        level: 'info',
      }),
    ]);
    expect(typeof lines()[0]?.durationMs).toBe('number');
  });
});
