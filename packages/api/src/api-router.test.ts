import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert, AlertRule } from '@monitor/schemas';
import { alertRuleOptionDefaults } from '@monitor/schemas';
import type {
  AlertQueries,
  InvestigationDetailRow,
  InvestigationQueries,
  ListAlertsQuery,
  ListInvestigationsQuery,
  ListServicesQuery,
  MetricSeriesQuery,
  RuleStore,
  ServiceDetailRow,
  ServiceQueries,
} from '@monitor/db';
import type { ApiKeyAuthenticator, AuthenticatedKey } from '@monitor/auth';
import { DatabaseUnavailableError } from '@monitor/db';
import {
  createLogger,
  createTargetAddressPolicy,
  newId,
  notFoundHandler,
  problemHandler,
} from '@monitor/platform';
import { findApiRoute } from './api-routes.js';
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
  'write-key': { keyId: 'key_w', orgId: 'org_a', scopes: ['read', 'write'] },
  'other-key': { keyId: 'key_o', orgId: 'org_b', scopes: ['read', 'write'] },
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
      reason: 'threshold',
      acknowledgedAt: null,
      acknowledgedBy: null,
      acknowledgementComment: null,
      silenced: false,
      flapping: false,
      labels: {},
      annotations: {},
    },
  ],
};

const alertRow: Alert = detailRow.activeAlerts[0]!;
const resolvedAlertRow: Alert = {
  ...alertRow,
  id: 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0E',
  status: 'resolved',
  resolvedAt: new Date('2026-11-22T10:28:00.000Z'),
  investigationId: 'inv_01JDQ4ZK8X3N7Q9V5R2T6W8Y0F',
  reason: 'threshold',
  acknowledgedAt: null,
  acknowledgedBy: null,
  acknowledgementComment: null,
  silenced: false,
  flapping: false,
  labels: {},
  annotations: {},
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

/** An in-memory rule store, per organization, recording the clock it was given. */
function fakeRuleStore() {
  const rows = new Map<string, { orgId: string; row: AlertRule }>();
  const nows: Date[] = [];
  const live = (orgId: string, id: string) => {
    const entry = rows.get(id);
    return entry?.orgId === orgId ? entry.row : undefined;
  };
  const store: RuleStore = {
    createRule(orgId, fields) {
      const at = new Date(nowMs);
      const row: AlertRule = {
        id: newId('rul'),
        ...alertRuleOptionDefaults,
        ...fields,
        channels: [...fields.channels],
        scope: { ...fields.scope },
        createdAt: at,
        updatedAt: at,
      };
      rows.set(row.id, { orgId, row });
      return Promise.resolve(row);
    },
    listRules({ orgId, limit, offset }) {
      const all = [...rows.values()]
        .filter((entry) => entry.orgId === orgId)
        .map((entry) => entry.row)
        .sort((a, b) => (a.id < b.id ? 1 : -1));
      return Promise.resolve({ rules: all.slice(offset, offset + limit), total: all.length });
    },
    getRule(orgId, id) {
      return Promise.resolve(live(orgId, id));
    },
    updateRule(orgId, id, changes, now) {
      nows.push(now);
      const row = live(orgId, id);
      if (row === undefined) return Promise.resolve(undefined);
      const updated: AlertRule = {
        ...row,
        ...(changes as Partial<AlertRule>),
        updatedAt: new Date(nowMs + 1000),
      };
      rows.set(id, { orgId, row: updated });
      return Promise.resolve(updated);
    },
    deleteRule(orgId, id, now) {
      nows.push(now);
      if (live(orgId, id) === undefined) return Promise.resolve(false);
      rows.delete(id);
      return Promise.resolve(true);
    },
  };
  return { store, nows, rows };
}

/** Alerts of org_a: one active, one resolved. */
function fakeAlertQueries() {
  const calls: ListAlertsQuery[] = [];
  const queries: AlertQueries = {
    listAlerts(query) {
      calls.push(query);
      if (query.orgId !== 'org_a') return Promise.resolve({ alerts: [], total: 0 });
      return Promise.resolve({ alerts: [resolvedAlertRow, alertRow], total: 12 });
    },
    getAlert(orgId, id) {
      const row = [alertRow, resolvedAlertRow].find((alert) => alert.id === id);
      return Promise.resolve(orgId === 'org_a' ? row : undefined);
    },
    // Acknowledgement has its HTTP tests against PostgreSQL (server's alerting-api tests).
    acknowledgeAlert: () => Promise.reject(new Error('not used here')),
    unacknowledgeAlert: () => Promise.reject(new Error('not used here')),
  };
  return { queries, calls };
}

const completedInvestigation: InvestigationDetailRow = {
  id: 'inv_01JDQ4ZK8X3N7Q9V5R2T6W8Y0F',
  alertId: resolvedAlertRow.id,
  serviceId,
  title: 'cpu high on web-1',
  status: 'completed',
  findings: [
    { title: 'java grew', detail: 'pid 7 from 5% to 90%', evidence: { pid: 7, cpu: [5, 90] } },
  ],
  createdAt: new Date('2026-11-22T10:25:00.000Z'),
  updatedAt: new Date('2026-11-22T10:26:00.000Z'),
  completedAt: new Date('2026-11-22T10:26:00.000Z'),
  analysis: {
    summary: 'A hog.',
    root_cause: 'process java',
    confidence: 0.9,
    method: 'statistical',
  },
  timeline: [
    { at: '2026-11-22T10:20:00.000Z', type: 'alert_started', description: 'breach', data: {} },
  ],
  recommendations: [{ title: 'Restart java', detail: 'On web-1.', priority: 'high' }],
};

/** Investigations of org_a; opening one for an alert answers the alert's existing one. */
function fakeInvestigationQueries() {
  const calls: ListInvestigationsQuery[] = [];
  const opened: InvestigationDetailRow[] = [completedInvestigation];
  const queued = (fields: Partial<InvestigationDetailRow>): InvestigationDetailRow => ({
    id: newId('inv'),
    alertId: null,
    serviceId,
    title: 'queued',
    status: 'queued',
    findings: [],
    createdAt: new Date(nowMs),
    updatedAt: new Date(nowMs),
    completedAt: null,
    analysis: null,
    timeline: [],
    recommendations: [],
    ...fields,
  });
  const serviceCalls: { orgId: string; serviceId: string; from: Date; to: Date }[] = [];
  const queries: InvestigationQueries = {
    listInvestigations(query) {
      calls.push(query);
      return Promise.resolve({
        investigations: query.orgId === 'org_a' ? opened : [],
        total: query.orgId === 'org_a' ? opened.length : 0,
      });
    },
    getInvestigation(orgId, id) {
      return Promise.resolve(orgId === 'org_a' ? opened.find((row) => row.id === id) : undefined);
    },
    openForAlert(orgId, alertId) {
      if (orgId !== 'org_a' || ![alertRow.id, resolvedAlertRow.id].includes(alertId)) {
        return Promise.resolve(undefined);
      }
      const existing = opened.find((row) => row.alertId === alertId);
      if (existing !== undefined) return Promise.resolve(existing);
      const row = queued({ alertId, title: 'cpu high on web-1' });
      opened.push(row);
      return Promise.resolve(row);
    },
    openForService(input) {
      serviceCalls.push(input);
      if (input.orgId !== 'org_a' || input.serviceId !== serviceId) {
        return Promise.resolve(undefined);
      }
      const row = queued({ title: 'web-1 from … to …' });
      opened.push(row);
      return Promise.resolve(row);
    },
  };
  return { queries, calls, serviceCalls };
}

type Exchange = { method: string; path: string; status: number; type: string; body: unknown };

let server: Server;
let baseUrl: string;
const fake = fakeQueries();
const fakeRules = fakeRuleStore();
const fakeAlerts = fakeAlertQueries();
const fakeInvestigations = fakeInvestigationQueries();
const exchanges: Exchange[] = [];

const routerDeps = {
  services: fake.queries,
  rules: fakeRules.store,
  alerts: fakeAlerts.queries,
  investigations: fakeInvestigations.queries,
  // The notification routes have their own tests (notification-routes.test.ts).
  channels: {
    listChannels: () => Promise.resolve([]),
    getChannel: () => Promise.resolve(undefined),
    putChannel: () => Promise.reject(new Error('not used here')),
    deleteChannel: () => Promise.resolve(false),
  },
  notifications: { listForAlert: () => Promise.resolve(undefined) },
  // The silence routes have their HTTP tests against PostgreSQL (server's alerting-api tests).
  silences: {
    createSilence: () => Promise.reject(new Error('not used here')),
    listSilences: () => Promise.resolve({ silences: [], total: 0 }),
    getSilence: () => Promise.resolve(undefined),
    expireSilence: () => Promise.resolve(false),
  },
  authenticator,
  targetPolicy: createTargetAddressPolicy([]),
};

async function call(
  path: string,
  options: {
    method?: string;
    key?: string;
    bearer?: string;
    /** Sent as JSON. */
    body?: unknown;
    /** Sent as is, with this Content-Type. */
    raw?: { text: string; contentType: string };
  } = {},
): Promise<{ status: number; headers: Headers; body: unknown }> {
  const headers: Record<string, string> = {};
  if (options.key !== undefined) headers['x-api-key'] = options.key;
  if (options.bearer !== undefined) headers['authorization'] = `Bearer ${options.bearer}`;
  const method = options.method ?? 'GET';
  let sent: string | undefined;
  if (options.raw !== undefined) {
    headers['content-type'] = options.raw.contentType;
    sent = options.raw.text;
  } else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    sent = JSON.stringify(options.body);
  }
  const response = await fetch(baseUrl + path, { method, headers, body: sent });
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
  app.use(createApiRouter({ ...routerDeps, nowMs: () => nowMs }));
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
      fake.failWith(new DatabaseUnavailableError(new Error('connect ECONNREFUSED')));
      try {
        const result = await call('/api/v1/services', { key: 'read-key' });
        expect(result).toMatchObject({ status: 503, body: problem(503) });
        expect(result.headers.get('retry-after')).toBe('2');
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

  describe('alert rules', () => {
    const rulesPath = '/api/v1/alerts/rules';
    const cpuRule = {
      name: 'cpu high',
      metric: 'cpu_percent',
      condition: 'greater_than',
      threshold: 90,
      severity: 'critical',
    };

    async function createRule(body: object = cpuRule): Promise<Record<string, unknown>> {
      const result = await call(rulesPath, { method: 'POST', key: 'write-key', body });
      expect(result.status).toBe(201);
      return result.body as Record<string, unknown>;
    }

    it('creates a rule with the defaults: 201, Location and the stored rule', async () => {
      const result = await call(rulesPath, { method: 'POST', key: 'write-key', body: cpuRule });
      expect(result).toMatchObject({
        status: 201,
        body: {
          id: expect.stringMatching(/^rul_[0-9A-Z]{26}$/),
          ...cpuRule,
          duration_minutes: 0,
          channels: [],
          scope: {},
          enabled: true,
          created_at: '2026-11-22T10:30:00.000Z',
          updated_at: '2026-11-22T10:30:00.000Z',
        },
      });
      const { id } = result.body as { id: string };
      expect(result.headers.get('location')).toBe(`${rulesPath}/${id}`);
      expect(fakeRules.rows.get(id)).toEqual({
        orgId: 'org_a',
        row: expect.objectContaining({ durationMinutes: 0, enabled: true, channels: [] }),
      });
    });

    it('stores every field it is given', async () => {
      const rule = await createRule({
        ...cpuRule,
        condition: 'less_than_or_equal',
        duration_minutes: 1440,
        severity: 'info',
        channels: ['webhook', 'slack', 'email'],
        scope: { environment: 'prod', region: 'eu' },
        enabled: false,
      });
      expect(rule).toMatchObject({
        condition: 'less_than_or_equal',
        duration_minutes: 1440,
        severity: 'info',
        channels: ['webhook', 'slack', 'email'],
        scope: { environment: 'prod', region: 'eu' },
        enabled: false,
      });
    });

    it('answers 422 naming every invalid field', async () => {
      const result = await call(rulesPath, {
        method: 'POST',
        key: 'write-key',
        body: {
          name: '',
          metric: 'cpu percent',
          condition: 'above',
          duration_minutes: 2.5,
          severity: 'fatal',
          channels: ['slack', 'slack'],
          scope: { env: 1 },
          id: 'rul_x',
        },
      });
      expect(result).toMatchObject({ status: 422, body: problem(422) });
      const paths = (result.body as { errors: { path: string }[] }).errors.map((e) => e.path);
      expect(paths.sort()).toEqual(
        [
          'name',
          'metric',
          'condition',
          'threshold',
          'duration_minutes',
          'severity',
          'channels',
          'scope.env',
          'id',
        ].sort(),
      );
      expect(fakeRules.rows.size).toBeGreaterThan(0); // created by earlier tests only
    });

    it('answers 422 for malformed JSON or no body, 415 for another type, 403 without write', async () => {
      expect(
        await call(rulesPath, {
          method: 'POST',
          key: 'write-key',
          raw: { text: '{"name":', contentType: 'application/json' },
        }),
      ).toMatchObject({ status: 422, body: { detail: 'The request body is not valid JSON.' } });
      expect(await call(rulesPath, { method: 'POST', key: 'write-key' })).toMatchObject({
        status: 422,
        body: { errors: [{ path: '', message: 'must be a JSON object' }] },
      });
      expect(
        await call(rulesPath, {
          method: 'POST',
          key: 'write-key',
          raw: { text: 'name=x', contentType: 'application/x-www-form-urlencoded' },
        }),
      ).toMatchObject({ status: 415, body: problem(415) });
      expect(
        await call(rulesPath, { method: 'POST', key: 'read-key', body: cpuRule }),
      ).toMatchObject({ status: 403, body: problem(403) });
      expect((await call(rulesPath, { method: 'POST', body: cpuRule })).status).toBe(401);
    });

    it('answers 413 for a body over 1 MiB', async () => {
      const result = await call(rulesPath, {
        method: 'POST',
        key: 'write-key',
        body: { ...cpuRule, name: 'x'.repeat(1024 * 1024) },
      });
      expect(result).toMatchObject({ status: 413, body: problem(413) });
    });

    it('lists the organization’s rules newest first with pagination', async () => {
      const older = await createRule({ ...cpuRule, name: 'older' });
      const newer = await createRule({ ...cpuRule, name: 'newer' });
      const result = await call(`${rulesPath}?limit=2`, { key: 'read-key' });
      expect(result).toMatchObject({
        status: 200,
        body: {
          rules: [{ id: newer['id'], name: 'newer' }, { id: older['id'] }],
          pagination: { limit: 2, offset: 0, has_more: true },
        },
      });
      const other = await call(rulesPath, { key: 'other-key' });
      expect(other.body).toEqual({
        rules: [],
        pagination: { limit: 50, offset: 0, total: 0, has_more: false },
      });
      expect(await call(`${rulesPath}?offset=-1`, { key: 'read-key' })).toMatchObject({
        status: 422,
        body: {
          errors: [{ path: 'offset', message: 'must be an integer from 0 to 9007199254740991' }],
        },
      });
    });

    it('reads one rule; another organization’s, an unknown or a malformed id is 404', async () => {
      const rule = await createRule();
      expect(await call(`${rulesPath}/${String(rule['id'])}`, { key: 'read-key' })).toMatchObject({
        status: 200,
        body: rule,
      });
      for (const [path, key] of [
        [`${rulesPath}/${String(rule['id'])}`, 'other-key'],
        [`${rulesPath}/rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0Z`, 'read-key'],
        [`${rulesPath}/nope`, 'read-key'],
      ] as const) {
        expect(await call(path, { key })).toMatchObject({ status: 404, body: problem(404) });
      }
    });

    it('changes only the fields a PATCH names, at the router’s clock', async () => {
      const rule = await createRule({ ...cpuRule, channels: ['email'] });
      const path = `${rulesPath}/${String(rule['id'])}`;
      const result = await call(path, {
        method: 'PATCH',
        key: 'write-key',
        body: { threshold: 75.5, enabled: false },
      });
      expect(result).toEqual({
        status: 200,
        headers: expect.anything(),
        body: {
          ...rule,
          threshold: 75.5,
          enabled: false,
          updated_at: '2026-11-22T10:30:01.000Z',
        },
      });
      expect(fakeRules.nows.at(-1)).toEqual(new Date(nowMs));
      expect(await call(path, { key: 'read-key' })).toMatchObject({ body: { threshold: 75.5 } });
    });

    it('refuses an empty, unknown-only or invalid PATCH with 422, and 404 for another org', async () => {
      const rule = await createRule();
      const path = `${rulesPath}/${String(rule['id'])}`;
      expect(await call(path, { method: 'PATCH', key: 'write-key', body: {} })).toMatchObject({
        status: 422,
        body: { errors: [{ path: '', message: 'must set at least one field' }] },
      });
      expect(
        await call(path, { method: 'PATCH', key: 'write-key', body: { colour: 'red' } }),
      ).toMatchObject({
        status: 422,
        body: { errors: [{ path: 'colour', message: 'is not a writable field of a rule' }] },
      });
      expect(
        await call(path, { method: 'PATCH', key: 'write-key', body: { duration_minutes: 1441 } }),
      ).toMatchObject({
        status: 422,
        body: {
          errors: [{ path: 'duration_minutes', message: 'must be an integer from 0 to 1440' }],
        },
      });
      expect(
        await call(path, { method: 'PATCH', key: 'other-key', body: { name: 'mine' } }),
      ).toMatchObject({ status: 404 });
      expect(await call(path, { key: 'read-key' })).toMatchObject({ body: { name: 'cpu high' } });
    });

    it('deletes with 204, and the rule is 404 from then on', async () => {
      const rule = await createRule();
      const path = `${rulesPath}/${String(rule['id'])}`;
      expect(await call(path, { method: 'DELETE', key: 'other-key' })).toMatchObject({
        status: 404,
      });
      expect(await call(path, { method: 'DELETE', key: 'read-key' })).toMatchObject({
        status: 403,
      });
      const deleted = await call(path, { method: 'DELETE', key: 'write-key' });
      expect(deleted.status).toBe(204);
      expect(deleted.body).toBeUndefined();
      expect(fakeRules.nows.at(-1)).toEqual(new Date(nowMs));
      expect((await call(path, { key: 'read-key' })).status).toBe(404);
      expect((await call(path, { method: 'DELETE', key: 'write-key' })).status).toBe(404);
      expect(
        (await call(path, { method: 'PATCH', key: 'write-key', body: { name: 'x' } })).status,
      ).toBe(404);
    });
  });

  describe('alerts', () => {
    it('lists active alerts by default with every field', async () => {
      const result = await call('/api/v1/alerts', { key: 'read-key' });
      expect(result).toMatchObject({
        status: 200,
        body: {
          alerts: [
            {
              id: resolvedAlertRow.id,
              status: 'resolved',
              resolved_at: '2026-11-22T10:28:00.000Z',
              investigation_id: 'inv_01JDQ4ZK8X3N7Q9V5R2T6W8Y0F',
              reason: 'threshold',
              acknowledged_at: null,
              acknowledged_by: null,
              acknowledgement_comment: null,
              silenced: false,
              flapping: false,
              labels: {},
              annotations: {},
            },
            {
              id: alertRow.id,
              rule_id: alertRow.ruleId,
              rule_name: 'cpu high',
              service_id: serviceId,
              host: 'web-1',
              metric: 'cpu_percent',
              condition: 'greater_than',
              threshold: 90,
              severity: 'critical',
              status: 'active',
              value: 97,
              started_at: '2026-11-22T10:20:00.000Z',
              fired_at: '2026-11-22T10:25:00.000Z',
              resolved_at: null,
              investigation_id: null,
              reason: 'threshold',
              acknowledged_at: null,
              acknowledged_by: null,
              acknowledgement_comment: null,
              silenced: false,
              flapping: false,
              labels: {},
              annotations: {},
            },
          ],
          pagination: { limit: 50, offset: 0, total: 12, has_more: true },
        },
      });
      expect(fakeAlerts.calls.at(-1)).toEqual({
        orgId: 'org_a',
        status: 'active',
        severity: undefined,
        serviceId: undefined,
        ruleId: undefined,
        acknowledged: undefined,
        silenced: undefined,
        reason: undefined,
        now: new Date(nowMs),
        limit: 50,
        offset: 0,
      });
    });

    it('passes every filter on', async () => {
      await call(
        `/api/v1/alerts?status=all&severity=warning&service_id=${serviceId}&rule_id=${alertRow.ruleId}&limit=5&offset=10&acknowledged=false&silenced=true&reason=no_data`,
        { key: 'read-key' },
      );
      expect(fakeAlerts.calls.at(-1)).toEqual({
        orgId: 'org_a',
        status: 'all',
        severity: 'warning',
        serviceId,
        ruleId: alertRow.ruleId,
        acknowledged: false,
        silenced: true,
        reason: 'no_data',
        now: new Date(nowMs),
        limit: 5,
        offset: 10,
      });
    });

    it('answers 422 naming each unknown filter value', async () => {
      const result = await call(
        '/api/v1/alerts?status=open&severity=fatal&service_id=web-1&rule_id=rul_1' +
          '&acknowledged=yes&silenced=1&reason=quiet',
        { key: 'read-key' },
      );
      expect(result).toMatchObject({
        status: 422,
        body: {
          errors: [
            { path: 'status', message: 'must be one of active, resolved, all' },
            { path: 'severity', message: 'must be one of critical, warning, info' },
            { path: 'service_id', message: 'must be an id of the form svc_<ULID>' },
            { path: 'rule_id', message: 'must be an id of the form rul_<ULID>' },
            { path: 'acknowledged', message: 'must be true or false' },
            { path: 'silenced', message: 'must be true or false' },
            { path: 'reason', message: 'must be one of threshold, no_data' },
          ],
        },
      });
    });

    it('reads one alert; another organization’s or a malformed id is 404', async () => {
      expect(await call(`/api/v1/alerts/${alertRow.id}`, { key: 'read-key' })).toMatchObject({
        status: 200,
        body: { id: alertRow.id, rule_name: 'cpu high' },
      });
      expect((await call(`/api/v1/alerts/${alertRow.id}`, { key: 'other-key' })).status).toBe(404);
      expect((await call('/api/v1/alerts/alr_nope', { key: 'read-key' })).status).toBe(404);
    });

    it('routes /api/v1/alerts/rules to the rules, not to an alert id', async () => {
      expect(await call('/api/v1/alerts/rules', { key: 'read-key' })).toMatchObject({
        status: 200,
        body: { rules: expect.any(Array) },
      });
    });
  });

  describe('investigations', () => {
    const investigationsPath = '/api/v1/investigations';

    it('lists with findings, passing the filters on', async () => {
      const result = await call(
        `${investigationsPath}?status=completed&alert_id=${resolvedAlertRow.id}&service_id=${serviceId}`,
        { key: 'read-key' },
      );
      expect(result).toMatchObject({
        status: 200,
        body: {
          investigations: [
            {
              id: completedInvestigation.id,
              alert_id: resolvedAlertRow.id,
              service_id: serviceId,
              title: 'cpu high on web-1',
              status: 'completed',
              findings: completedInvestigation.findings,
              created_at: '2026-11-22T10:25:00.000Z',
              updated_at: '2026-11-22T10:26:00.000Z',
              completed_at: '2026-11-22T10:26:00.000Z',
            },
          ],
        },
      });
      expect((result.body as { investigations: object[] }).investigations[0]).not.toHaveProperty(
        'analysis',
      );
      expect(fakeInvestigations.calls.at(-1)).toEqual({
        orgId: 'org_a',
        status: 'completed',
        alertId: resolvedAlertRow.id,
        serviceId,
        limit: 50,
        offset: 0,
      });
      expect(
        await call(`${investigationsPath}?status=done&alert_id=x`, { key: 'read-key' }),
      ).toMatchObject({
        status: 422,
        body: {
          errors: [
            { path: 'status', message: 'must be one of queued, running, completed, failed' },
            { path: 'alert_id', message: 'must be an id of the form alr_<ULID>' },
          ],
        },
      });
    });

    it('reads the detail with analysis, timeline and recommendations', async () => {
      const result = await call(`${investigationsPath}/${completedInvestigation.id}`, {
        key: 'read-key',
      });
      expect(result).toMatchObject({
        status: 200,
        body: {
          id: completedInvestigation.id,
          analysis: completedInvestigation.analysis,
          timeline: completedInvestigation.timeline,
          recommendations: completedInvestigation.recommendations,
        },
      });
      for (const [path, key] of [
        [`${investigationsPath}/${completedInvestigation.id}`, 'other-key'],
        [`${investigationsPath}/inv_01JDQ4ZK8X3N7Q9V5R2T6W8Y0Z`, 'read-key'],
        [`${investigationsPath}/nope`, 'read-key'],
      ] as const) {
        expect(await call(path, { key })).toMatchObject({ status: 404, body: problem(404) });
      }
    });

    it('opens one for an alert: 202 and Location; asking again answers the same one', async () => {
      const first = await call(investigationsPath, {
        method: 'POST',
        key: 'write-key',
        body: { alert_id: alertRow.id },
      });
      expect(first).toMatchObject({
        status: 202,
        body: {
          id: expect.stringMatching(/^inv_/),
          alert_id: alertRow.id,
          status: 'queued',
          analysis: null,
          findings: [],
          timeline: [],
          recommendations: [],
          completed_at: null,
        },
      });
      const { id } = first.body as { id: string };
      expect(first.headers.get('location')).toBe(`${investigationsPath}/${id}`);
      const again = await call(investigationsPath, {
        method: 'POST',
        key: 'write-key',
        body: { alert_id: alertRow.id },
      });
      expect(again).toMatchObject({ status: 202, body: { id } });
      const investigated = await call(investigationsPath, {
        method: 'POST',
        key: 'write-key',
        body: { alert_id: resolvedAlertRow.id },
      });
      expect(investigated).toMatchObject({
        status: 202,
        body: { id: completedInvestigation.id, status: 'completed' },
      });
    });

    it('opens one for a service over a range', async () => {
      const result = await call(investigationsPath, {
        method: 'POST',
        key: 'write-key',
        body: { service_id: serviceId, from: '2026-11-22T08:00:00Z', to: '2026-11-22T10:00:00Z' },
      });
      expect(result).toMatchObject({ status: 202, body: { alert_id: null, status: 'queued' } });
      expect(fakeInvestigations.serviceCalls.at(-1)).toEqual({
        orgId: 'org_a',
        serviceId,
        from: new Date('2026-11-22T08:00:00Z'),
        to: new Date('2026-11-22T10:00:00Z'),
      });
    });

    it('answers 422 for an alert or service the organization does not have', async () => {
      expect(
        await call(investigationsPath, {
          method: 'POST',
          key: 'other-key',
          body: { alert_id: alertRow.id },
        }),
      ).toMatchObject({
        status: 422,
        body: { errors: [{ path: 'alert_id', message: 'names no alert of this organization' }] },
      });
      expect(
        await call(investigationsPath, {
          method: 'POST',
          key: 'write-key',
          body: {
            service_id: otherServiceId,
            from: '2026-11-22T08:00:00Z',
            to: '2026-11-22T09:00:00Z',
          },
        }),
      ).toMatchObject({
        status: 422,
        body: {
          errors: [{ path: 'service_id', message: 'names no service of this organization' }],
        },
      });
    });

    it('answers 422 for an invalid body and 403 without the write scope', async () => {
      const invalid = async (body: unknown) =>
        (await call(investigationsPath, { method: 'POST', key: 'write-key', body })).body;
      expect(await invalid({ alert_id: alertRow.id, service_id: serviceId })).toMatchObject({
        status: 422,
        errors: [{ path: 'service_id', message: 'is not allowed with alert_id' }],
      });
      expect(await invalid({ service_id: serviceId, from: '2026-11-22T08:00:00Z' })).toMatchObject({
        errors: [{ path: 'to', message: 'is required' }],
      });
      expect(
        await invalid({
          service_id: serviceId,
          from: '2026-11-01T00:00:00Z',
          to: '2026-11-22T00:00:00Z',
        }),
      ).toMatchObject({ errors: [{ path: 'to', message: 'must be at most 7 days after from' }] });
      expect(await invalid([])).toMatchObject({
        errors: [{ path: '', message: 'must be a JSON object' }],
      });
      expect(
        await call(investigationsPath, {
          method: 'POST',
          key: 'read-key',
          body: { alert_id: alertRow.id },
        }),
      ).toMatchObject({ status: 403 });
    });
  });

  it('answers 405 with Allow for another method on a known path, 404 on an unknown one', async () => {
    for (const path of [
      '/api/v1/services',
      `/api/v1/services/${serviceId}`,
      '/api/v1/openapi.json',
      '/api/v1/alerts',
      `/api/v1/alerts/${alertRow.id}`,
      `/api/v1/investigations/${completedInvestigation.id}`,
    ]) {
      const result = await call(path, { method: 'POST', key: 'read-key' });
      expect(result).toMatchObject({ status: 405, body: problem(405) });
      expect(result.headers.get('allow')).toBe('GET, HEAD');
    }
    for (const [path, allow] of [
      ['/api/v1/alerts/rules', 'GET, POST, HEAD'],
      ['/api/v1/alerts/rules/rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0Z', 'GET, PATCH, DELETE, HEAD'],
      ['/api/v1/investigations', 'GET, POST, HEAD'],
    ]) {
      const result = await call(path!, { method: 'PUT', key: 'write-key' });
      expect(result).toMatchObject({ status: 405, body: problem(405) });
      expect(result.headers.get('allow')).toBe(allow);
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
    const router = createApiRouter(routerDeps);
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
      const operation = findApiRoute(exchange.method, exchange.path);
      if (operation === undefined) {
        // Only 404s of unknown routes and 405s are outside the document.
        expect([404, 405], `${exchange.method} ${exchange.path}`).toContain(exchange.status);
        continue;
      }
      const spec = operation.responses[exchange.status];
      expect(spec, `${exchange.method} ${exchange.path} ${exchange.status}`).toBeDefined();
      if (spec!.contentType === 'none') {
        expect(exchange.type).toBe('');
        expect(exchange.body).toBeUndefined();
        continue;
      }
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
