import type {
  ClaimedInvestigation,
  FailOptions,
  InvestigationEvidence,
  InvestigationStore,
} from '@monitor/db';
import { DatabaseUnavailableError } from '@monitor/db';
import { createLogger } from '@monitor/platform';
import type { InvestigationReport } from '@monitor/schemas';
import { buildAlert } from '@monitor/testkit/builders';
import { describe, expect, it } from 'vitest';
import type { InvestigatorMetrics } from './investigator.js';
import { createInvestigator } from './investigator.js';
import type { Narrator } from './narrator.js';

const minuteMs = 60_000;
const firedAt = new Date('2025-06-01T12:05:00Z');
const startedAt = new Date(firedAt.getTime() - 5 * minuteMs);

const claim: ClaimedInvestigation = {
  id: 'inv_1',
  orgId: 'org_1',
  alertId: 'alr_1',
  serviceId: 'svc_1',
  title: 'cpu high on web-1',
  windowFrom: startedAt,
  windowTo: firedAt,
  attempts: 1,
  leaseUntil: new Date(firedAt.getTime() + minuteMs),
};

/** A host whose cpu_percent jumps when the alert starts, with process `burner` behind it. */
function evidence(): InvestigationEvidence {
  const samples: InvestigationEvidence['samples'] = [];
  const snapshots: InvestigationEvidence['snapshots'] = [];
  for (let t = startedAt.getTime() - 80 * minuteMs; t <= firedAt.getTime(); t += minuteMs) {
    const hot = t >= startedAt.getTime();
    const jitter = (t / minuteMs) % 3;
    samples.push({ time: new Date(t), metric: 'cpu_percent', value: (hot ? 90 : 15) + jitter });
    snapshots.push({
      time: new Date(t),
      containers: [],
      processes: [
        { name: 'burner', pid: 42, cpu_percent: (hot ? 74 : 1) + jitter },
        { bogus: true },
      ],
    });
  }
  return {
    service: { id: 'svc_1', name: 'web-1', tags: {} },
    alert: buildAlert({
      id: 'alr_1',
      ruleId: 'rul_1',
      serviceId: 'svc_1',
      threshold: 80,
      value: 91,
      startedAt,
      firedAt,
      investigationId: 'inv_1',
    }),
    samples,
    snapshots,
    ruleHistory: [],
    peers: [],
  };
}

type FakeStore = InvestigationStore & {
  completed: InvestigationReport[];
  failures: FailOptions[];
  requests: Parameters<InvestigationStore['loadEvidence']>[0][];
  renewals: number[];
};

function fakeStore(overrides: Partial<InvestigationStore> = {}): FakeStore {
  const queue = [claim];
  const store: FakeStore = {
    completed: [],
    failures: [],
    requests: [],
    renewals: [],
    claim: () => Promise.resolve(queue.shift()),
    complete: (_claim, report) => {
      store.completed.push(report);
      return Promise.resolve(true);
    },
    fail: (_claim, options) => {
      store.failures.push(options);
      return Promise.resolve(
        options.retriable && claim.attempts < options.maxAttempts ? 'queued' : 'failed',
      );
    },
    renew: (_claim, leaseMs) => {
      store.renewals.push(leaseMs);
      return Promise.resolve(true);
    },
    loadEvidence: (request) => {
      store.requests.push(request);
      return Promise.resolve(evidence());
    },
    ...overrides,
  };
  return store;
}

function fakeMetrics(): InvestigatorMetrics & { finished: string[]; narrations: string[] } {
  const finished: string[] = [];
  const narrations: string[] = [];
  return {
    finished,
    narrations,
    investigationFinished: (outcome) => finished.push(outcome),
    narrated: (outcome) => narrations.push(outcome),
  };
}

const logger = createLogger({ level: 'silent' });
const clock = { now: () => new Date() };

describe('createInvestigator', () => {
  it('reads the evidence of the windows around the alert and completes with the computed report', async () => {
    const store = fakeStore();
    const metrics = fakeMetrics();
    const investigator = createInvestigator({ store, clock, logger, metrics });
    const outcome = await investigator.runOnce();
    expect(outcome).toMatchObject({
      status: 'completed',
      investigationId: 'inv_1',
      verdict: { kind: 'process', subject: 'burner' },
    });
    expect(store.requests[0]).toMatchObject({
      orgId: 'org_1',
      serviceId: 'svc_1',
      alertId: 'alr_1',
      from: new Date(startedAt.getTime() - 70 * minuteMs),
      incidentFrom: new Date(startedAt.getTime() - 10 * minuteMs),
      to: firedAt,
      historyFrom: new Date(firedAt.getTime() - 24 * 60 * minuteMs),
    });
    expect(store.completed[0]?.analysis.method).toBe('statistical');
    expect(store.completed[0]?.analysis.root_cause).toContain('burner');
    expect(metrics.finished).toEqual(['completed']);
    expect(metrics.narrations).toEqual([]);
    expect(await investigator.runOnce()).toEqual({ status: 'idle' });
  });

  it("reads the peers on the metric the analysis focuses on, the alert's or the one that moved most", async () => {
    const store = fakeStore();
    await createInvestigator({ store, clock, logger, metrics: fakeMetrics() }).runOnce();
    const request = store.requests[0];
    const { alert, samples } = evidence();
    const calm = samples.map((s) => ({ ...s, metric: 'memory_percent', value: 40 }));
    expect(request?.choosePeerMetrics({ alert, samples: [...samples, ...calm] })).toEqual([
      'cpu_percent',
    ]);
    const moved = samples.map((s) => ({ ...s, metric: 'disk_used_percent', value: s.value * 9 }));
    expect(request?.choosePeerMetrics({ alert: undefined, samples: [...calm, ...moved] })).toEqual([
      'disk_used_percent',
    ]);
  });

  it('renews the lease while the investigation is in hand, and stops when it is done', async () => {
    const store = fakeStore({
      loadEvidence: async () => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        return evidence();
      },
    });
    const investigator = createInvestigator(
      { store, clock, logger, metrics: fakeMetrics() },
      { leaseMs: 60 },
    );
    expect(await investigator.runOnce()).toMatchObject({ status: 'completed' });
    expect(store.renewals.length).toBeGreaterThanOrEqual(3);
    expect(new Set(store.renewals)).toEqual(new Set([60]));
    const renewed = store.renewals.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(store.renewals).toHaveLength(renewed);
  });

  it('lets a configured narrator reword the report before storing it', async () => {
    const store = fakeStore();
    const metrics = fakeMetrics();
    const narrator: Narrator = {
      narrate: (report) =>
        Promise.resolve({
          report: {
            ...report,
            analysis: { ...report.analysis, summary: 'reworded', method: 'statistical+llm:m' },
          },
          outcome: 'rewritten',
        }),
    };
    await createInvestigator({ store, clock, logger, metrics, narrator }).runOnce();
    expect(store.completed[0]?.analysis).toMatchObject({
      summary: 'reworded',
      method: 'statistical+llm:m',
    });
    expect(metrics.narrations).toEqual(['rewritten']);
  });

  it('requeues a transient failure with a delay that grows with the attempts', async () => {
    const unreachable = new DatabaseUnavailableError(new Error('connect ECONNREFUSED'));
    const store = fakeStore({ loadEvidence: () => Promise.reject(unreachable) });
    const metrics = fakeMetrics();
    const investigator = createInvestigator(
      { store, clock, logger, metrics },
      { retryDelayMs: 1000, maxAttempts: 3 },
    );
    expect(await investigator.runOnce()).toEqual({ status: 'retried', investigationId: 'inv_1' });
    expect(store.failures).toEqual([
      {
        error: 'The database is temporarily unavailable.',
        retriable: true,
        retryDelayMs: 1000,
        maxAttempts: 3,
      },
    ]);
    expect(metrics.finished).toEqual(['retried']);
  });

  it('fails for good on an error a retry cannot fix', async () => {
    const store = fakeStore({
      loadEvidence: () => Promise.reject(new Error('service svc_1 not found')),
    });
    const outcome = await createInvestigator({
      store,
      clock,
      logger,
      metrics: fakeMetrics(),
    }).runOnce();
    expect(outcome).toEqual({ status: 'failed', investigationId: 'inv_1' });
    expect(store.failures[0]).toMatchObject({ retriable: false, error: 'service svc_1 not found' });
  });

  it('stop waits for the investigation in hand to finish', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let loading: () => void = () => undefined;
    const loaded = new Promise<void>((resolve) => (loading = resolve));
    const store = fakeStore({
      loadEvidence: async () => {
        loading();
        await gate;
        return evidence();
      },
    });
    const investigator = createInvestigator(
      { store, clock, logger, metrics: fakeMetrics() },
      { pollIntervalMs: 10_000 },
    );
    investigator.start();
    await loaded;
    let stopped = false;
    const stopping = investigator.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(store.completed).toHaveLength(1);
  });

  it('stop ends an idle loop without waiting for the poll interval', async () => {
    const store = fakeStore({ claim: () => Promise.resolve(undefined) });
    const investigator = createInvestigator(
      { store, clock, logger, metrics: fakeMetrics() },
      { pollIntervalMs: 60_000 },
    );
    investigator.start();
    await new Promise((resolve) => setTimeout(resolve, 10));
    const startedMs = Date.now();
    await investigator.stop();
    expect(Date.now() - startedMs).toBeLessThan(1000);
  });
});
