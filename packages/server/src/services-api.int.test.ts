// @services postgres kafka
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '@monitor/db';
import { createApiKeyStore, createDatabase, createOrgStore, refreshRollups } from '@monitor/db';
import type {
  ServiceDetailResponse,
  ServiceListResponse,
  ServiceMetricsResponse,
} from '@monitor/schemas';
import { createTestDatabase } from '@monitor/testkit';
import type { TestDatabase } from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';
import { postIngest } from './testing/ingest-client.js';
import type { RoleProcess } from './testing/role-process.js';
import { runCommand, startRoleProcess } from './testing/role-process.js';
import type { Exchange } from './testing/openapi-conformance.js';
import { expectExchangesDocumented } from './testing/openapi-conformance.js';
import { waitFor } from './testing/wait-for.js';

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;
const bootstrapKey = `mon_test_${randomBytes(16).toString('hex')}`;

let testDb: TestDatabase;
let db: Database;
let env: Record<string, string>;
let gateway: RoleProcess;
let api: RoleProcess;
const started: RoleProcess[] = [];

/** Every API response the tests saw, for the conformance check at the end. */
const exchanges: Exchange[] = [];

type Reply<T> = { status: number; headers: Headers; body: T };

async function request<T = unknown>(
  path: string,
  options: { key?: string; method?: string; baseUrl?: string } = {},
): Promise<Reply<T>> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = {};
  if (options.key !== undefined) headers['x-api-key'] = options.key;
  const response = await fetch((options.baseUrl ?? api.baseUrl) + path, { method, headers });
  const contentType = response.headers.get('content-type') ?? '';
  const text = await response.text();
  const body: unknown = contentType.includes('json') ? JSON.parse(text) : text;
  exchanges.push({ method, path, status: response.status, contentType, body });
  return { status: response.status, headers: response.headers, body: body as T };
}

async function newKey(scopes: ('ingest' | 'read' | 'write')[]): Promise<string> {
  const org = await createOrgStore(db).createOrganization(`org-${randomBytes(4).toString('hex')}`);
  return (await createApiKeyStore(db).createKey({ orgId: org.id, name: 'test', scopes })).key;
}

async function ingest(payload: unknown, key = bootstrapKey): Promise<void> {
  const result = await postIngest(gateway.baseUrl, payload, { key });
  expect(result.status).toBe(200);
}

const now = Date.now();
const base = Math.floor(now / minuteMs) * minuteMs;
/** `load` samples of web-1: beyond the last hour, two in one minute, and the newest minute. */
const loadPoints: [number, number][] = [
  [base - 100 * minuteMs, 5],
  [base - 70 * minuteMs, 7],
  [base - 30 * minuteMs, 1],
  [base - 30 * minuteMs + 10_000, 3],
  [base - minuteMs, 10],
];

function expectedPoints(stepMs: number, fromMs: number): ServiceMetricsResponse['points'] {
  const buckets = new Map<number, number[]>();
  for (const [timeMs, value] of loadPoints) {
    if (timeMs < fromMs) continue;
    const start = Math.floor(timeMs / stepMs) * stepMs;
    buckets.set(start, [...(buckets.get(start) ?? []), value]);
  }
  return [...buckets.entries()]
    .sort(([a], [b]) => a - b)
    .map(([start, values]) => ({
      time: new Date(start).toISOString(),
      avg: values.reduce((sum, v) => sum + v, 0) / values.length,
      min: Math.min(...values),
      max: Math.max(...values),
      count: values.length,
    }));
}

let serviceIds: Record<string, string> = {};
let otherOrgKey: string;
let otherServiceId: string;

const problem = (status: number) =>
  expect.objectContaining({
    type: expect.stringMatching(/^https:\/\//),
    title: expect.any(String),
    status,
    detail: expect.any(String),
  });

/**
 * The whole HTTP suite runs twice: against separate gateway, writer and api processes over Kafka,
 * and against the embedded default (role `all`, the in-process bus).
 */
describe.each(['kafka', 'embedded'] as const)('services API in %s mode', (mode) => {
  beforeAll(async () => {
    testDb = await createTestDatabase(serviceUrl('postgres'), `services_api_${mode}`);
    db = createDatabase({ url: testDb.url, maxConnections: 2 });
    env = {
      DATABASE_URL: testDb.url,
      ...(mode === 'kafka' ? { KAFKA_BROKERS: serviceUrl('kafka') } : {}),
      SAMPLES_TOPIC: `samples-${randomBytes(4).toString('hex')}`,
      SAMPLES_TOPIC_PARTITIONS: '3',
      MONITOR_BOOTSTRAP_API_KEY: bootstrapKey,
      API_KEY_CACHE_TTL_MS: '1000',
      WRITER_BATCH_MAX_WAIT_MS: '20',
    };
    await runCommand(['migrate'], env);
    if (mode === 'kafka') {
      const roles = await Promise.all(
        ['gateway', 'writer', 'api'].map((role) => startRoleProcess(role, env)),
      );
      started.push(...roles);
      [gateway, , api] = roles as [RoleProcess, RoleProcess, RoleProcess];
    } else {
      // One process, the in-process bus, the query API on the ingest port.
      gateway = await startRoleProcess('all', env);
      api = gateway;
      started.push(gateway);
    }

    const ago = (ms: number) => new Date(now - ms).toISOString();
    await ingest([
      {
        host: 'web-1',
        timestamp: ago(10_000),
        metrics: { cpu_percent: 42.5, memory_percent: 61 },
        tags: { environment: 'prod', region: 'eu-west-1' },
        docker_containers: [
          { name: 'api', image: 'api:1.2', status: 'running', cpu_percent: 3, memory_usage: 1024 },
        ],
        processes: [{ name: 'node', pid: 12, cpu_percent: 30, memory_rss: 2048 }],
      },
      {
        host: 'web-2',
        timestamp: ago(20_000),
        metrics: { cpu_percent: 5 },
        tags: { environment: 'staging' },
      },
      {
        host: 'db-1',
        timestamp: ago(20 * minuteMs),
        metrics: { cpu_percent: 9 },
        tags: { environment: 'prod' },
      },
      {
        host: 'api-1',
        timestamp: ago(5_000),
        metrics: { cpu_percent: 1 },
        tags: { environment: 'prod' },
      },
      ...loadPoints.map(([timeMs, value]) => ({
        host: 'web-1',
        timestamp: new Date(timeMs).toISOString(),
        metrics: { load: value },
        tags: { environment: 'prod', region: 'eu-west-1' },
      })),
    ]);
    otherOrgKey = await newKey(['ingest', 'read']);
    await ingest({ host: 'web-1', metrics: { cpu_percent: 1 } }, otherOrgKey);

    const stored = await waitFor(
      async () => {
        const rows = await db.sql<{ n: string }[]>`select count(*) as n from samples`;
        // web-1: 2 metrics; web-2, db-1, api-1: 1 each; the load points; the other org's one.
        return Number(rows[0]!.n) === 5 + loadPoints.length + 1 ? true : undefined;
      },
      30_000,
      'the samples to be stored',
    );
    expect(stored).toBe(true);
    const list = await request<ServiceListResponse>('/api/v1/services', { key: bootstrapKey });
    serviceIds = Object.fromEntries(list.body.services.map((s) => [s.name, s.id]));
    const other = await request<ServiceListResponse>('/api/v1/services', { key: otherOrgKey });
    otherServiceId = other.body.services[0]!.id;
  });

  afterAll(async () => {
    await Promise.all(started.splice(0).map((proc) => proc.stop()));
    await db?.close();
    await testDb?.drop();
  });

  describe('GET /api/v1/services', () => {
    it('lists the organization’s services by name with their latest metrics and tags', async () => {
      const result = await request<ServiceListResponse>('/api/v1/services', { key: bootstrapKey });
      expect(result.status).toBe(200);
      expect(result.body.services.map((s) => [s.name, s.status])).toEqual([
        ['api-1', 'healthy'],
        ['db-1', 'stale'],
        ['web-1', 'healthy'],
        ['web-2', 'healthy'],
      ]);
      expect(result.body.services[2]).toEqual({
        id: expect.stringMatching(/^svc_/),
        name: 'web-1',
        status: 'healthy',
        last_seen: new Date(now - 10_000).toISOString(),
        metrics: { cpu_percent: 42.5, memory_percent: 61, load: 10 },
        tags: { environment: 'prod', region: 'eu-west-1' },
      });
      expect(result.body.pagination).toEqual({ limit: 50, offset: 0, total: 4, has_more: false });
    });

    it('pages with limit and offset', async () => {
      const first = await request<ServiceListResponse>('/api/v1/services?limit=3', {
        key: bootstrapKey,
      });
      expect(first.body.services.map((s) => s.name)).toEqual(['api-1', 'db-1', 'web-1']);
      expect(first.body.pagination).toEqual({ limit: 3, offset: 0, total: 4, has_more: true });
      const second = await request<ServiceListResponse>('/api/v1/services?limit=3&offset=3', {
        key: bootstrapKey,
      });
      expect(second.body.services.map((s) => s.name)).toEqual(['web-2']);
      expect(second.body.pagination).toEqual({ limit: 3, offset: 3, total: 4, has_more: false });
      const past = await request<ServiceListResponse>('/api/v1/services?offset=10', {
        key: bootstrapKey,
      });
      expect(past.body).toEqual({
        services: [],
        pagination: { limit: 50, offset: 10, total: 4, has_more: false },
      });
    });

    it('answers 422 naming the parameter and its bound', async () => {
      for (const limit of ['0', '101', 'ten', '2.5']) {
        const result = await request(`/api/v1/services?limit=${limit}`, { key: bootstrapKey });
        expect(result).toMatchObject({
          status: 422,
          body: {
            type: 'https://monitor.dev/problems/validation',
            status: 422,
            detail: 'The request is invalid: limit: must be an integer from 1 to 100.',
            errors: [{ path: 'limit', message: 'must be an integer from 1 to 100' }],
          },
        });
        expect(result.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      }
      expect(await request('/api/v1/services?offset=-1', { key: bootstrapKey })).toMatchObject({
        status: 422,
        body: {
          errors: [{ path: 'offset', message: 'must be an integer from 0 to 9007199254740991' }],
        },
      });
      expect(await request('/api/v1/services?status=down', { key: bootstrapKey })).toMatchObject({
        status: 422,
        body: { errors: [{ path: 'status' }] },
      });
    });

    it('filters by tags and by status', async () => {
      const names = async (query: string) =>
        (
          await request<ServiceListResponse>(`/api/v1/services?${query}`, { key: bootstrapKey })
        ).body.services.map((s) => s.name);
      expect(await names('tag.environment=prod')).toEqual(['api-1', 'db-1', 'web-1']);
      expect(await names('tag.environment=prod&tag.region=eu-west-1')).toEqual(['web-1']);
      expect(await names('tag.environment=nowhere')).toEqual([]);
      expect(await names('status=stale')).toEqual(['db-1']);
      expect(await names('status=healthy&tag.environment=prod')).toEqual(['api-1', 'web-1']);
    });

    it('shows an active critical alert as status critical', async () => {
      const id = serviceIds['web-1']!;
      const [service] = await db.sql<{ org_id: string }[]>`
        select org_id from services where id = ${id}`;
      await db.sql`
        insert into alerts (id, org_id, rule_id, rule_name, service_id, host, metric, condition,
          threshold, severity, status, value, started_at, fired_at)
        values ('alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0C', ${service!.org_id},
          'rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0D', 'cpu above 40', ${id}, 'web-1', 'cpu_percent',
          'greater_than', 40, 'critical', 'active', 42.5, ${new Date(now - 60_000)},
          ${new Date(now - 10_000)})
      `;
      const critical = await request<ServiceListResponse>('/api/v1/services?status=critical', {
        key: bootstrapKey,
      });
      expect(critical.body.services.map((s) => [s.name, s.status])).toEqual([
        ['web-1', 'critical'],
      ]);
      expect(critical.body.pagination.total).toBe(1);
    });
  });

  describe('GET /api/v1/services/:id', () => {
    it('adds the latest snapshot and the active alerts', async () => {
      const result = await request<ServiceDetailResponse>(
        `/api/v1/services/${serviceIds['web-1']}`,
        { key: bootstrapKey },
      );
      expect(result.status).toBe(200);
      expect(result.body).toMatchObject({
        id: serviceIds['web-1'],
        name: 'web-1',
        status: 'critical',
        snapshot_at: new Date(now - 10_000).toISOString(),
        docker_containers: [
          { name: 'api', image: 'api:1.2', status: 'running', cpu_percent: 3, memory_usage: 1024 },
        ],
        processes: [{ name: 'node', pid: 12, cpu_percent: 30, memory_rss: 2048 }],
        active_alerts: [
          {
            id: 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0C',
            rule_id: 'rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0D',
            rule_name: 'cpu above 40',
            service_id: serviceIds['web-1'],
            host: 'web-1',
            metric: 'cpu_percent',
            condition: 'greater_than',
            threshold: 40,
            severity: 'critical',
            status: 'active',
            value: 42.5,
            started_at: new Date(now - 60_000).toISOString(),
            fired_at: new Date(now - 10_000).toISOString(),
            resolved_at: null,
            investigation_id: null,
          },
        ],
      });
    });

    it('has an empty snapshot for a host that never sent one', async () => {
      const result = await request<ServiceDetailResponse>(
        `/api/v1/services/${serviceIds['api-1']}`,
        { key: bootstrapKey },
      );
      expect(result.body).toMatchObject({
        status: 'healthy',
        snapshot_at: null,
        docker_containers: [],
        processes: [],
        active_alerts: [],
      });
    });
  });

  describe('GET /api/v1/services/:id/metrics', () => {
    const metricsPath = (query: string) =>
      `/api/v1/services/${serviceIds['web-1']}/metrics?${query}`;

    it('serves minute and hour buckets from the aggregates once they are refreshed', async () => {
      await refreshRollups(db, { now: new Date() });
      const from = new Date(base - 2 * hourMs).toISOString();
      const to = new Date(base + minuteMs).toISOString();
      const minutes = await request<ServiceMetricsResponse>(
        metricsPath(`metric=load&from=${from}&to=${to}`),
        { key: bootstrapKey },
      );
      expect(minutes).toMatchObject({
        status: 200,
        body: { metric: 'load', step: '1m', from, to, points: expectedPoints(minuteMs, 0) },
      });
      const hourFrom = Math.floor((base - 3 * hourMs) / hourMs) * hourMs;
      const hours = await request<ServiceMetricsResponse>(
        metricsPath(`metric=load&step=1h&from=${new Date(hourFrom).toISOString()}`),
        { key: bootstrapKey },
      );
      expect(hours).toMatchObject({
        status: 200,
        body: { metric: 'load', step: '1h', points: expectedPoints(hourMs, 0) },
      });
    });

    it('defaults to the last hour and answers empty points for an unknown metric', async () => {
      const lastHour = await request<ServiceMetricsResponse>(metricsPath('metric=load'), {
        key: bootstrapKey,
      });
      expect(lastHour.body.step).toBe('1m');
      expect(lastHour.body.points).toEqual(
        expectedPoints(minuteMs, Date.parse(lastHour.body.from)),
      );
      const none = await request<ServiceMetricsResponse>(metricsPath('metric=nothing'), {
        key: bootstrapKey,
      });
      expect(none).toMatchObject({ status: 200, body: { points: [] } });
    });

    it('answers 422 for a missing metric and for 1m steps over more than 7 days', async () => {
      expect(await request(metricsPath(''), { key: bootstrapKey })).toMatchObject({
        status: 422,
        body: { errors: [{ path: 'metric', message: 'is required' }] },
      });
      const from = new Date(now - 8 * 24 * hourMs).toISOString();
      expect(
        await request(metricsPath(`metric=load&step=1m&from=${from}`), { key: bootstrapKey }),
      ).toMatchObject({
        status: 422,
        body: { errors: [{ path: 'step', message: 'must be 1h for ranges over 7 days' }] },
      });
    });
  });

  describe('authentication and isolation', () => {
    it('answers 401 without a key or with an unknown one, on every endpoint', async () => {
      for (const path of [
        '/api/v1/services',
        `/api/v1/services/${serviceIds['web-1']}`,
        `/api/v1/services/${serviceIds['web-1']}/metrics?metric=load`,
      ]) {
        expect(await request(path)).toMatchObject({ status: 401, body: problem(401) });
        expect((await request(path, { key: 'mon_unknown' })).status).toBe(401);
      }
    });

    it('accepts the key as a bearer token', async () => {
      const response = await fetch(`${api.baseUrl}/api/v1/services`, {
        headers: { authorization: `Bearer ${bootstrapKey}` },
      });
      expect(response.status).toBe(200);
    });

    it('answers 403 for a key without the read scope', async () => {
      const ingestOnly = await newKey(['ingest']);
      expect(await request('/api/v1/services', { key: ingestOnly })).toMatchObject({
        status: 403,
        body: problem(403),
      });
    });

    it('answers 404 for another organization’s service, an unknown id and a malformed one', async () => {
      const other = await request<ServiceListResponse>('/api/v1/services', { key: otherOrgKey });
      expect(other.body.services.map((s) => s.name)).toEqual(['web-1']);
      for (const path of [
        `/api/v1/services/${serviceIds['web-1']}`,
        `/api/v1/services/${serviceIds['web-1']}/metrics?metric=load`,
        '/api/v1/services/svc_01JDQ4ZK8X3N7Q9V5R2T6W8Y0Z',
        '/api/v1/services/not-an-id',
      ]) {
        expect(await request(path, { key: otherOrgKey })).toMatchObject({
          status: 404,
          body: problem(404),
        });
      }
      expect(
        (await request(`/api/v1/services/${otherServiceId}`, { key: otherOrgKey })).status,
      ).toBe(200);
      expect(
        (await request(`/api/v1/services/${otherServiceId}`, { key: bootstrapKey })).status,
      ).toBe(404);
    });

    it('answers 405 with Allow for another method', async () => {
      const result = await request('/api/v1/services', { method: 'DELETE', key: bootstrapKey });
      expect(result).toMatchObject({ status: 405, body: problem(405) });
      expect(result.headers.get('allow')).toBe('GET, HEAD');
    });
  });

  describe('operations', () => {
    it('serves health, readiness (the database) and metrics', async () => {
      expect(await request('/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect(await request('/readyz')).toMatchObject({
        status: 200,
        body: { status: 'ready', checks: { database: 'up' } },
      });
      const metrics = await request<string>('/metrics');
      expect(metrics.body).toMatch(
        /http_requests_total\{[^}]*route="\/api\/v1\/services\/:id"[^}]*\} \d+/,
      );
    });
  });

  describe('the OpenAPI document', () => {
    it('is public and covers every response the API gave in these tests', async () => {
      const served = await request<{
        openapi: string;
        paths: Record<string, Record<string, { responses: Record<string, { content?: object }> }>>;
      }>('/api/v1/openapi.json');
      expect(served.status).toBe(200);
      expect(served.body.openapi).toBe('3.1.0');
      const checked = exchanges.filter((exchange) => exchange.path !== '/api/v1/openapi.json');
      expect(checked.length).toBeGreaterThan(30);
      expectExchangesDocumented(checked, served.body);
    });
  });
});
