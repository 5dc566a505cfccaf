import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  ListServicesQuery,
  MetricSeriesQuery,
  ServiceDetailRow,
  ServiceQueries,
} from '@monitor/db';
import type { ApiKeyAuthenticator, AuthenticatedKey } from '@monitor/gateway';
import { createLogger, notFoundHandler, problemHandler } from '@monitor/platform';
import { findApiOperation } from './api-operations.js';
import { createApiRouter } from './api-router.js';
import type { OpenApiDocument } from './openapi-document.js';
import { createOpenApiDocument, toOpenApiPath } from './openapi-document.js';

// ajv-formats is CommonJS with `exports.default`; under NodeNext the default import is the module.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const serviceId = 'svc_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A';
const otherServiceId = 'svc_01JDQ4ZK8X3N7Q9V5R2T6W8Y0B';
const nowMs = Date.parse('2026-11-22T10:30:00.000Z');

const keys: Record<string, AuthenticatedKey> = {
  'read-key': { keyId: 'key_r', orgId: 'org_a', scopes: ['read'] },
  'ingest-key': { keyId: 'key_i', orgId: 'org_a', scopes: ['ingest'] },
};

const authenticator: ApiKeyAuthenticator = {
  authenticate: (plaintext) => Promise.resolve(plaintext ? keys[plaintext] : undefined),
};

const serviceRow = {
  id: serviceId,
  name: 'web-1',
  status: 'critical' as const,
  lastSeen: new Date('2026-11-22T10:29:00.000Z'),
  metrics: { cpu_percent: 97 },
  tags: { env: 'prod' },
};

const detailRow: ServiceDetailRow = {
  ...serviceRow,
  snapshot: {
    time: new Date('2026-11-22T10:29:00.000Z'),
    containers: [{ name: 'api', image: 'api:1', status: 'running', cpu_percent: 2 }],
    processes: [{ name: 'node', pid: 7, cpu_percent: 1.5, memory_rss: 1024 }],
  },
  activeAlerts: [
    {
      id: 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0C',
      ruleId: 'rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0D',
      ruleName: 'cpu high',
      serviceId,
      host: 'web-1',
      metric: 'cpu_percent',
      condition: 'greater_than',
      threshold: 90,
      severity: 'critical',
      status: 'active',
      value: 97,
      startedAt: new Date('2026-11-22T10:20:00.000Z'),
      firedAt: new Date('2026-11-22T10:25:00.000Z'),
      resolvedAt: null,
      investigationId: null,
    },
  ],
};

/** A fake of the database reads that records what it was asked. */
function fakeQueries() {
  const calls = { list: [] as ListServicesQuery[], series: [] as MetricSeriesQuery[] };
  let failure: Error | undefined;
  const queries: ServiceQueries = {
    listServices(query) {
      calls.list.push(query);
      if (failure !== undefined) return Promise.reject(failure);
      return Promise.resolve({ services: [serviceRow], total: 3 });
    },
    getService(query) {
      return Promise.resolve(query.id === serviceId ? detailRow : undefined);
    },
    readMetricSeries(query) {
      calls.series.push(query);
      if (query.serviceId !== serviceId) return Promise.resolve(undefined);
      return Promise.resolve([
        { time: new Date('2026-11-22T10:00:00.000Z'), avg: 2, min: 1, max: 3, count: 2 },
      ]);
    },
  };
  return {
    queries,
    calls,
    failWith: (err: Error | undefined) => {
      failure = err;
    },
  };
}

type Exchange = { method: string; path: string; status: number; type: string; body: unknown };

let server: Server;
let baseUrl: string;
const fake = fakeQueries();
const exchanges: Exchange[] = [];

async function call(
  path: string,
  options: { method?: string; key?: string; bearer?: string } = {},
): Promise<{ status: number; headers: Headers; body: unknown }> {
  const headers: Record<string, string> = {};
  if (options.key !== undefined) headers['x-api-key'] = options.key;
  if (options.bearer !== undefined) headers['authorization'] = `Bearer ${options.bearer}`;
  const method = options.method ?? 'GET';
  const response = await fetch(baseUrl + path, { method, headers });
  const text = await response.text();
  const body: unknown = text === '' ? undefined : JSON.parse(text);
  exchanges.push({
    method,
    path,
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    body,
  });
  return { status: response.status, headers: response.headers, body };
}

beforeAll(async () => {
  const app = express();
  app.use(createApiRouter({ services: fake.queries, authenticator, nowMs: () => nowMs }));
  app.use(notFoundHandler);
  app.use(problemHandler(createLogger({ level: 'silent', name: 'test' })));
  server = createServer(app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const problem = (status: number) =>
  expect.objectContaining({ type: expect.any(String), title: expect.any(String), status });

describe('createApiRouter', () => {
  describe('authentication', () => {
    it('answers 401 with a problem for a missing or unknown key', async () => {
      const missing = await call('/api/v1/services');
      expect(missing).toMatchObject({ status: 401, body: problem(401) });
      expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(missing.headers.get('www-authenticate')).toContain('Bearer');
      expect((await call('/api/v1/services/' + serviceId, { key: 'nope' })).status).toBe(401);
    });

    it('answers 403 for a key without the read scope', async () => {
      const result = await call('/api/v1/services', { key: 'ingest-key' });
      expect(result).toMatchObject({ status: 403, body: problem(403) });
    });

    it('accepts the key as a bearer token', async () => {
      expect((await call('/api/v1/services', { bearer: 'read-key' })).status).toBe(200);
    });

    it('serves the OpenAPI document without a key', async () => {
      const result = await call('/api/v1/openapi.json');
      expect(result).toMatchObject({ status: 200, body: { openapi: '3.1.0' } });
    });
  });

  describe('GET /api/v1/services', () => {
    it('lists the key’s organization with filters and pagination', async () => {
      const result = await call('/api/v1/services?limit=1&offset=1&status=critical&tag.env=prod', {
        key: 'read-key',
      });
      expect(result).toEqual({
        status: 200,
        headers: expect.anything(),
        body: {
          services: [
            {
              id: serviceId,
              name: 'web-1',
              status: 'critical',
              last_seen: '2026-11-22T10:29:00.000Z',
              metrics: { cpu_percent: 97 },
              tags: { env: 'prod' },
            },
          ],
          pagination: { limit: 1, offset: 1, total: 3, has_more: true },
        },
      });
      expect(fake.calls.list.at(-1)).toEqual({
        orgId: 'org_a',
        status: 'critical',
        tags: { env: 'prod' },
        limit: 1,
        offset: 1,
        now: new Date(nowMs),
      });
    });

    it('answers 422 naming the parameter and its bounds', async () => {
      const result = await call('/api/v1/services?limit=101&status=down', { key: 'read-key' });
      expect(result).toMatchObject({
        status: 422,
        body: {
          detail: expect.stringContaining('limit: must be an integer from 1 to 100'),
          errors: [
            { path: 'limit', message: 'must be an integer from 1 to 100' },
            { path: 'status', message: 'must be one of healthy, warning, critical, stale' },
          ],
        },
      });
    });

    it('answers 503 with Retry-After when the database is unreachable', async () => {
      fake.failWith(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      try {
        const result = await call('/api/v1/services', { key: 'read-key' });
        expect(result).toMatchObject({ status: 503, body: problem(503) });
        expect(result.headers.get('retry-after')).toBe('5');
      } finally {
        fake.failWith(undefined);
      }
    });
  });

  describe('GET /api/v1/services/:id', () => {
    it('answers the detail with snapshot and active alerts', async () => {
      const result = await call(`/api/v1/services/${serviceId}`, { key: 'read-key' });
      expect(result).toMatchObject({
        status: 200,
        body: {
          id: serviceId,
          snapshot_at: '2026-11-22T10:29:00.000Z',
          docker_containers: [{ name: 'api' }],
          processes: [{ name: 'node', pid: 7 }],
          active_alerts: [
            {
              id: 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0C',
              rule_name: 'cpu high',
              severity: 'critical',
              fired_at: '2026-11-22T10:25:00.000Z',
              resolved_at: null,
            },
          ],
        },
      });
    });

    it('answers 404 for an unknown or malformed id', async () => {
      expect(await call(`/api/v1/services/${otherServiceId}`, { key: 'read-key' })).toMatchObject({
        status: 404,
        body: problem(404),
      });
      expect((await call('/api/v1/services/not-an-id', { key: 'read-key' })).status).toBe(404);
      expect(
        (await call('/api/v1/services/svc_01jdq4zk8x3n7q9v5r2t6w8y0a', { key: 'read-key' })).status,
      ).toBe(404);
    });
  });

  describe('GET /api/v1/services/:id/metrics', () => {
    it('reads the series with the defaults applied', async () => {
      const result = await call(`/api/v1/services/${serviceId}/metrics?metric=cpu_percent`, {
        key: 'read-key',
      });
      expect(result).toMatchObject({
        status: 200,
        body: {
          metric: 'cpu_percent',
          step: '1m',
          from: '2026-11-22T09:30:00.000Z',
          to: '2026-11-22T10:30:00.000Z',
          points: [{ time: '2026-11-22T10:00:00.000Z', avg: 2, min: 1, max: 3, count: 2 }],
        },
      });
      expect(fake.calls.series.at(-1)).toEqual({
        orgId: 'org_a',
        serviceId,
        metric: 'cpu_percent',
        step: '1m',
        from: new Date('2026-11-22T09:30:00.000Z'),
        to: new Date('2026-11-22T10:30:00.000Z'),
        now: new Date(nowMs),
      });
    });

    it('answers 422 for a missing metric or a bad range, and 404 for another service', async () => {
      const missing = await call(`/api/v1/services/${serviceId}/metrics`, { key: 'read-key' });
      expect(missing).toMatchObject({
        status: 422,
        body: { errors: [{ path: 'metric', message: 'is required' }] },
      });
      const tooLong = await call(
        `/api/v1/services/${serviceId}/metrics?metric=m&step=1m&from=2026-11-01T00:00:00Z`,
        { key: 'read-key' },
      );
      expect(tooLong).toMatchObject({ status: 422, body: { errors: [{ path: 'step' }] } });
      expect(
        (await call(`/api/v1/services/${otherServiceId}/metrics?metric=m`, { key: 'read-key' }))
          .status,
      ).toBe(404);
    });
  });

  it('answers 405 with Allow for another method on a known path, 404 on an unknown one', async () => {
    for (const path of [
      '/api/v1/services',
      `/api/v1/services/${serviceId}`,
      '/api/v1/openapi.json',
    ]) {
      const result = await call(path, { method: 'POST', key: 'read-key' });
      expect(result).toMatchObject({ status: 405, body: problem(405) });
      expect(result.headers.get('allow')).toBe('GET, HEAD');
    }
    expect((await call('/api/v1/nothing', { key: 'read-key' })).status).toBe(404);
  });
});

describe('the OpenAPI document', () => {
  const document: OpenApiDocument = createOpenApiDocument();
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, 'openapi');

  /** The JSON pointer of a response body schema inside the document. */
  function schemaPointer(templatePath: string, method: string, status: number, type: string) {
    const escape = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');
    return ['paths', templatePath, method, 'responses', String(status), 'content', type]
      .map(escape)
      .join('/');
  }

  it('documents every route the router serves', () => {
    const router = createApiRouter({ services: fake.queries, authenticator });
    const served = router.stack.flatMap((layer) => {
      const route = layer.route as { path: string; methods: Record<string, boolean> } | undefined;
      if (route === undefined) return [];
      return Object.keys(route.methods)
        .filter((method) => method !== '_all')
        .map((method) => `${method} ${toOpenApiPath(route.path)}`);
    });
    expect(served.length).toBeGreaterThan(0);
    const documented = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      Object.keys(item as object).map((method) => `${method} ${path}`),
    );
    expect(documented).toEqual(expect.arrayContaining(served));
  });

  it('refuses a body that drifted from it', () => {
    const validate = ajv.getSchema(
      `openapi#/${schemaPointer('/api/v1/services', 'get', 200, 'application/json')}/schema`,
    );
    const service = {
      id: serviceId,
      name: 'web-1',
      status: 'healthy',
      last_seen: '2026-11-22T10:29:00.000Z',
      metrics: {},
      tags: {},
    };
    const pagination = { limit: 50, offset: 0, total: 1, has_more: false };
    expect(validate!({ services: [service], pagination })).toBe(true);
    expect(validate!({ services: [{ ...service, status: 'down' }], pagination })).toBe(false);
    expect(validate!({ services: [{ ...service, last_seen: undefined }], pagination })).toBe(false);
    expect(validate!({ services: [service] })).toBe(false);
  });

  it('accepts every response these tests received, as served', () => {
    expect(exchanges.length).toBeGreaterThan(10);
    for (const exchange of exchanges) {
      const operation = findApiOperation(exchange.method, exchange.path);
      if (operation === undefined) {
        // Only 404s of unknown routes and 405s are outside the document.
        expect([404, 405], `${exchange.method} ${exchange.path}`).toContain(exchange.status);
        continue;
      }
      const spec = operation.responses[exchange.status];
      expect(spec, `${exchange.method} ${exchange.path} ${exchange.status}`).toBeDefined();
      expect(exchange.type.startsWith(spec!.contentType)).toBe(true);
      const pointer = schemaPointer(
        toOpenApiPath(operation.path),
        operation.method,
        exchange.status,
        spec!.contentType,
      );
      const validate = ajv.getSchema(`openapi#/${pointer}/schema`);
      expect(validate, pointer).toBeDefined();
      const valid = validate!(exchange.body);
      expect(valid, `${pointer}: ${JSON.stringify(validate!.errors)}`).toBe(true);
      expect(spec!.schema.safeParse(exchange.body).success).toBe(true);
    }
  });
});
