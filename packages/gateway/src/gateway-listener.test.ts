import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { noteRequestOrg } from '@monitor/platform';
import { ingestPath } from '@monitor/schemas';
import { createMemoryLogger } from '@monitor/testkit/builders';
import { describe, expect, it } from 'vitest';
import type { GatewayMetrics } from './gateway-metrics.js';
import { createGatewayListener } from './gateway-listener.js';

const apiKey = 'mon_live_fedcba9876543210fedcba9876543210';

const noMetrics: GatewayMetrics = {
  accepted: () => undefined,
  rejected: () => undefined,
  observeRequest: () => undefined,
  observeAgentWrite: () => undefined,
  points: () => undefined,
  seriesRefused: () => undefined,
  rateLimitStoreError: () => undefined,
};

function fakeRequest(method: string, url: string): IncomingMessage {
  return {
    method,
    url,
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
  } as unknown as IncomingMessage;
}

/** A response that records its status and emits `close` once ended, as node:http does. */
function fakeResponse(): ServerResponse & EventEmitter {
  const res = Object.assign(new EventEmitter(), {
    statusCode: 200,
    writableFinished: false,
    headersSent: false,
    end() {
      res.writableFinished = true;
      res.emit('close');
    },
  });
  return res as unknown as ServerResponse & EventEmitter;
}

describe('createGatewayListener', () => {
  it('logs one line per ingest request with its org, status and duration, never the key', async () => {
    const { logger, lines, text } = createMemoryLogger({ level: 'info' });
    const listener = createGatewayListener({
      agentWrites: new Map(),
      ingest: (_req, res) => {
        noteRequestOrg(res, 'org_42');
        res.statusCode = 200;
        res.end();
        return Promise.resolve();
      },
      app: () => {
        throw new Error('ingest must not reach the express app');
      },
      metrics: noMetrics,
      logger,
    });
    const res = fakeResponse();
    listener(fakeRequest('POST', `${ingestPath}?api_key=${apiKey}`), res);
    await Promise.resolve();

    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'info',
        component: 'http',
        msg: 'request',
        method: 'POST',
        path: ingestPath,
        status: 200,
        orgId: 'org_42',
      }),
    ]);
    expect(typeof lines()[0]?.durationMs).toBe('number');
    expect(text()).not.toContain(apiKey);
  });

  it('logs a rejected key at info without an org', async () => {
    const { logger, lines } = createMemoryLogger({ level: 'info' });
    const listener = createGatewayListener({
      agentWrites: new Map(),
      ingest: (_req, res) => {
        res.statusCode = 401;
        res.end();
        return Promise.resolve();
      },
      app: () => undefined,
      metrics: noMetrics,
      logger,
    });
    listener(fakeRequest('POST', ingestPath), fakeResponse());
    await Promise.resolve();
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatchObject({ level: 'info', status: 401 });
    expect(lines()[0]).not.toHaveProperty('orgId');
  });

  it('leaves every other request to the express app, which logs it itself', () => {
    const { logger, lines } = createMemoryLogger({ level: 'info' });
    let appCalls = 0;
    const listener = createGatewayListener({
      agentWrites: new Map(),
      ingest: () => Promise.reject(new Error('not ingest')),
      app: () => {
        appCalls++;
      },
      metrics: noMetrics,
      logger,
    });
    const res = fakeResponse();
    listener(fakeRequest('GET', '/api/v1/services'), res);
    res.end();
    expect(appCalls).toBe(1);
    expect(lines()).toEqual([]);
  });
});
