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
import { createTargetAddressPolicy, newId } from '@monitor/platform';
import { buildAlert } from '@monitor/testkit/builders';
import type { ApiRouterDeps } from '../api-router.js';

// What the router's unit tests serve: the database reads and writes as in-memory fakes of
// organization org_a (and org_b, which has nothing), read at a fixed clock.

export const serviceId = 'svc_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A';
export const otherServiceId = 'svc_01JDQ4ZK8X3N7Q9V5R2T6W8Y0B';
export const nowMs = Date.parse('2026-11-22T10:30:00.000Z');

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

/** The service's active alert: testkit's alert, on this service. */
export const alertRow: Alert = buildAlert({ serviceId });

const detailRow: ServiceDetailRow = {
  ...serviceRow,
  snapshot: {
    time: new Date('2026-11-22T10:29:00.000Z'),
    containers: [{ name: 'api', image: 'api:1', status: 'running', cpu_percent: 2 }],
    processes: [{ name: 'node', pid: 7, cpu_percent: 1.5, memory_rss: 1024 }],
  },
  activeAlerts: [alertRow],
};

export const resolvedAlertRow: Alert = buildAlert({
  id: 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0E',
  serviceId,
  status: 'resolved',
  resolvedAt: new Date('2026-11-22T10:28:00.000Z'),
  investigationId: 'inv_01JDQ4ZK8X3N7Q9V5R2T6W8Y0F',
});

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
        { timeMs: Date.parse('2026-11-22T10:00:00.000Z'), avg: 2, min: 1, max: 3, count: 2 },
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
    // Acknowledgement has its HTTP tests against PostgreSQL (server's alerts suite).
    acknowledgeAlert: () => Promise.reject(new Error('not used here')),
    unacknowledgeAlert: () => Promise.reject(new Error('not used here')),
  };
  return { queries, calls };
}

export const completedInvestigation: InvestigationDetailRow = {
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

/**
 * The router's dependencies over fresh fakes (`fakes`, to read what they were asked): the
 * services, rules, alerts and investigations of org_a; channels, notifications and silences
 * empty, their routes tested elsewhere.
 */
export function createRouterDeps() {
  const fakes = {
    services: fakeQueries(),
    rules: fakeRuleStore(),
    alerts: fakeAlertQueries(),
    investigations: fakeInvestigationQueries(),
  };
  const deps: ApiRouterDeps = {
    services: fakes.services.queries,
    rules: fakes.rules.store,
    alerts: fakes.alerts.queries,
    investigations: fakes.investigations.queries,
    // The notification routes have their own tests (notification-routes.test.ts).
    channels: {
      listChannels: () => Promise.resolve([]),
      getChannel: () => Promise.resolve(undefined),
      putChannel: () => Promise.reject(new Error('not used here')),
      deleteChannel: () => Promise.resolve(false),
    },
    notifications: { listForAlert: () => Promise.resolve(undefined) },
    // The silence routes have their HTTP tests against PostgreSQL (server's silences suite).
    silences: {
      createSilence: () => Promise.reject(new Error('not used here')),
      listSilences: () => Promise.resolve({ silences: [], total: 0 }),
      getSilence: () => Promise.resolve(undefined),
      expireSilence: () => Promise.resolve(false),
    },
    authenticator,
    targetPolicy: createTargetAddressPolicy([]),
  };
  return { fakes, deps };
}
