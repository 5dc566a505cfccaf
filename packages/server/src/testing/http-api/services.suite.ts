import { beforeAll, describe, expect, it } from 'vitest';
import { refreshRollups } from '@monitor/db';
import type {
  Alert,
  ServiceDetailResponse,
  ServiceListResponse,
  ServiceMetricsResponse,
} from '@monitor/schemas';
import { toAlertResponse } from '@monitor/schemas';
import type { ApiExchange } from '@monitor/testkit/builders';
import { buildAlert, createApiCall, problemBody, waitFor } from '@monitor/testkit/builders';
import type { ApiTarget } from '../api-target.js';
import { newOrganization } from '../api-target.js';
import { postIngest } from '../ingest-client.js';
import { expectExchangesDocumented } from '../openapi-conformance.js';

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;

/**
 * The services API over HTTP (list, detail, metrics, authentication and isolation, the
 * operations endpoints), on data this suite ingests into an organization of its own through
 * `target().ingestUrl`. Every answer is checked against the served OpenAPI document at the end.
 */
export function describeServicesApi(target: () => ApiTarget, exchanges: ApiExchange[]): void {
  /** A key with every scope of the suite's organization, and one of another organization. */
  let key: string;
  let orgId: string;
  let otherOrgKey: string;
  let serviceIds: Record<string, string> = {};
  let otherServiceId: string;
  // Set when the data is sent, not when the suite is declared: a stack may take a minute to start.
  let now: number;
  let base: number;
  /** `load` samples of web-1: beyond the last hour, two in one minute, and the newest minute. */
  let loadPoints: [number, number][];
  /** The active critical alert stored for web-1. */
  let criticalAlert: Alert;

  const request = createApiCall({ baseUrl: () => target().apiUrl, exchanges });

  async function ingest(payload: unknown, ingestKey = key): Promise<void> {
    const result = await postIngest(target().ingestUrl, payload, { key: ingestKey });
    expect(result.status).toBe(200);
  }

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

  beforeAll(async () => {
    const { db } = target();
    const own = await newOrganization(db);
    const other = await newOrganization(db, ['ingest', 'read']);
    key = own.key;
    orgId = own.orgId;
    otherOrgKey = other.key;
    now = Date.now();
    base = Math.floor(now / minuteMs) * minuteMs;
    loadPoints = [
      [base - 100 * minuteMs, 5],
      [base - 70 * minuteMs, 7],
      [base - 30 * minuteMs, 1],
      [base - 30 * minuteMs + 10_000, 3],
      [base - minuteMs, 10],
    ];
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
    await ingest({ host: 'web-1', metrics: { cpu_percent: 1 } }, otherOrgKey);

    const expected = 5 + loadPoints.length + 1;
    await waitFor(
      async () => {
        let stored = 0;
        for (const { sql } of target().sampleDbs ?? [db]) {
          const rows = await sql<{ n: string }[]>`
            select count(*) as n
            from samples s join series r on r.id = s.series_id join services v on v.id = r.service_id
            where v.org_id in ${sql([own.orgId, other.orgId])}`;
          stored += Number(rows[0]!.n);
        }
        // web-1: 2 metrics; web-2, db-1, api-1: 1 each; the load points; the other org's one.
        return stored === expected ? true : undefined;
      },
      30_000,
      `the ${expected} samples to be stored`,
    );
    const list = await request<ServiceListResponse>('/api/v1/services', { key });
    serviceIds = Object.fromEntries(list.body.services.map((s) => [s.name, s.id]));
    const others = await request<ServiceListResponse>('/api/v1/services', { key: otherOrgKey });
    otherServiceId = others.body.services[0]!.id;
  });

  describe('GET /api/v1/services', () => {
    it('lists the organization’s services by name with their latest metrics and tags', async () => {
      const result = await request<ServiceListResponse>('/api/v1/services', { key });
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
        key,
      });
      expect(first.body.services.map((s) => s.name)).toEqual(['api-1', 'db-1', 'web-1']);
      expect(first.body.pagination).toEqual({ limit: 3, offset: 0, total: 4, has_more: true });
      const second = await request<ServiceListResponse>('/api/v1/services?limit=3&offset=3', {
        key,
      });
      expect(second.body.services.map((s) => s.name)).toEqual(['web-2']);
      expect(second.body.pagination).toEqual({ limit: 3, offset: 3, total: 4, has_more: false });
      const past = await request<ServiceListResponse>('/api/v1/services?offset=10', {
        key,
      });
      expect(past.body).toEqual({
        services: [],
        pagination: { limit: 50, offset: 10, total: 4, has_more: false },
      });
    });

    it('answers 422 naming the parameter and its bound', async () => {
      for (const limit of ['0', '101', 'ten', '2.5']) {
        const result = await request(`/api/v1/services?limit=${limit}`, { key });
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
      expect(await request('/api/v1/services?offset=-1', { key })).toMatchObject({
        status: 422,
        body: {
          errors: [{ path: 'offset', message: 'must be an integer from 0 to 9007199254740991' }],
        },
      });
      expect(await request('/api/v1/services?status=down', { key })).toMatchObject({
        status: 422,
        body: { errors: [{ path: 'status' }] },
      });
    });

    it('filters by tags and by status', async () => {
      const names = async (query: string) =>
        (
          await request<ServiceListResponse>(`/api/v1/services?${query}`, { key })
        ).body.services.map((s) => s.name);
      expect(await names('tag.environment=prod')).toEqual(['api-1', 'db-1', 'web-1']);
      expect(await names('tag.environment=prod&tag.region=eu-west-1')).toEqual(['web-1']);
      expect(await names('tag.environment=nowhere')).toEqual([]);
      expect(await names('status=stale')).toEqual(['db-1']);
      expect(await names('status=healthy&tag.environment=prod')).toEqual(['api-1', 'web-1']);
    });

    it('shows an active critical alert as status critical', async () => {
      const id = serviceIds['web-1']!;
      const alert = buildAlert({
        ruleName: 'cpu above 40',
        serviceId: id,
        threshold: 40,
        value: 42.5,
        startedAt: new Date(now - 60_000),
        firedAt: new Date(now - 10_000),
      });
      criticalAlert = alert;
      await target().db.sql`
        insert into alerts (id, org_id, rule_id, rule_name, service_id, host, metric, condition,
          threshold, severity, status, value, started_at, fired_at)
        values (${alert.id}, ${orgId}, ${alert.ruleId}, ${alert.ruleName},
          ${alert.serviceId}, ${alert.host}, ${alert.metric}, ${alert.condition},
          ${alert.threshold}, ${alert.severity}, ${alert.status}, ${alert.value},
          ${alert.startedAt}, ${alert.firedAt})
      `;
      const critical = await request<ServiceListResponse>('/api/v1/services?status=critical', {
        key,
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
        { key },
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
        active_alerts: [toAlertResponse(criticalAlert)],
      });
    });

    it('has an empty snapshot for a host that never sent one', async () => {
      const result = await request<ServiceDetailResponse>(
        `/api/v1/services/${serviceIds['api-1']}`,
        { key },
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
      // On every database holding samples (each sample shard's).
      for (const db of target().sampleDbs ?? [target().db]) {
        await refreshRollups(db, { now: new Date() });
      }
      const from = new Date(base - 2 * hourMs).toISOString();
      const to = new Date(base + minuteMs).toISOString();
      const minutes = await request<ServiceMetricsResponse>(
        metricsPath(`metric=load&from=${from}&to=${to}`),
        { key },
      );
      expect(minutes).toMatchObject({
        status: 200,
        body: { metric: 'load', step: '1m', from, to, points: expectedPoints(minuteMs, 0) },
      });
      const hourFrom = Math.floor((base - 3 * hourMs) / hourMs) * hourMs;
      const hours = await request<ServiceMetricsResponse>(
        metricsPath(`metric=load&step=1h&from=${new Date(hourFrom).toISOString()}`),
        { key },
      );
      expect(hours).toMatchObject({
        status: 200,
        body: { metric: 'load', step: '1h', points: expectedPoints(hourMs, 0) },
      });
    });

    it('defaults to the last hour and answers empty points for an unknown metric', async () => {
      const lastHour = await request<ServiceMetricsResponse>(metricsPath('metric=load'), {
        key,
      });
      expect(lastHour.body.step).toBe('1m');
      expect(lastHour.body.points).toEqual(
        expectedPoints(minuteMs, Date.parse(lastHour.body.from)),
      );
      const none = await request<ServiceMetricsResponse>(metricsPath('metric=nothing'), {
        key,
      });
      expect(none).toMatchObject({ status: 200, body: { points: [] } });
    });

    it('answers 422 for a missing metric and for 1m steps over more than 7 days', async () => {
      expect(await request(metricsPath(''), { key })).toMatchObject({
        status: 422,
        body: { errors: [{ path: 'metric', message: 'is required' }] },
      });
      const from = new Date(now - 8 * 24 * hourMs).toISOString();
      expect(await request(metricsPath(`metric=load&step=1m&from=${from}`), { key })).toMatchObject(
        {
          status: 422,
          body: { errors: [{ path: 'step', message: 'must be 1h for ranges over 7 days' }] },
        },
      );
    });
  });

  describe('authentication and isolation', () => {
    it('answers 401 without a key or with an unknown one, on every endpoint', async () => {
      for (const path of [
        '/api/v1/services',
        `/api/v1/services/${serviceIds['web-1']}`,
        `/api/v1/services/${serviceIds['web-1']}/metrics?metric=load`,
      ]) {
        expect(await request(path)).toMatchObject({ status: 401, body: problemBody(401) });
        expect((await request(path, { key: 'mon_unknown' })).status).toBe(401);
      }
    });

    it('accepts the key as a bearer token', async () => {
      const response = await fetch(`${target().apiUrl}/api/v1/services`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(response.status).toBe(200);
    });

    it('answers 403 for a key without the read scope', async () => {
      const { key: ingestOnly } = await newOrganization(target().db, ['ingest']);
      expect(await request('/api/v1/services', { key: ingestOnly })).toMatchObject({
        status: 403,
        body: problemBody(403),
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
          body: problemBody(404),
        });
      }
      expect(
        (await request(`/api/v1/services/${otherServiceId}`, { key: otherOrgKey })).status,
      ).toBe(200);
      expect((await request(`/api/v1/services/${otherServiceId}`, { key })).status).toBe(404);
    });

    it('answers 405 with Allow for another method', async () => {
      const result = await request('/api/v1/services', { method: 'DELETE', key });
      expect(result).toMatchObject({ status: 405, body: problemBody(405) });
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
}
