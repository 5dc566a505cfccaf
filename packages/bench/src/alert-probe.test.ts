import { describe, expect, it } from 'vitest';
import type { ProbeAlert, ProbeDeps, ProbeSample } from './alert-probe.js';
import { probeSpanMs, runProbe } from './alert-probe.js';

const startMs = Date.UTC(2026, 10, 22, 8);
const requestMs = 5;

/**
 * A fake clock, gateway and alerts API: each call takes `requestMs`; the alert shows up in the
 * `fireOnPoll`-th list after the completing sample, and resolved in the `resolveOnPoll`-th
 * list after the clearing sample.
 */
function fakeStack(options: {
  fireOnPoll?: number;
  resolveOnPoll?: number;
  investigationOnPoll?: number;
}) {
  let clock = 1_000;
  const sent: { sample: ProbeSample; answeredAt: number }[] = [];
  let pollsSinceSample = 0;
  let alert: ProbeAlert | undefined;
  let investigationPolls = 0;
  const deps: ProbeDeps = {
    ingest(sample) {
      clock += requestMs;
      sent.push({ sample, answeredAt: clock });
      pollsSinceSample = 0;
      return Promise.resolve();
    },
    listAlerts(ruleId) {
      expect(ruleId).toBe('rul_1');
      clock += requestMs;
      pollsSinceSample++;
      const last = sent[sent.length - 1]?.sample;
      const value = last?.metrics['probe_value'];
      if (alert === undefined && value === 90 && pollsSinceSample === options.fireOnPoll) {
        alert = {
          id: 'alr_1',
          status: 'active',
          fired_at: last?.timestamp ?? '',
          investigation_id: 'inv_1',
        };
      }
      if (alert && value === 10 && pollsSinceSample === options.resolveOnPoll) {
        alert = { ...alert, status: 'resolved' };
      }
      return Promise.resolve(alert ? [alert] : []);
    },
    investigationStatus(id) {
      expect(id).toBe('inv_1');
      clock += requestMs;
      investigationPolls++;
      return Promise.resolve(
        investigationPolls === options.investigationOnPoll ? 'completed' : 'running',
      );
    },
    now: () => clock,
    sleep(ms) {
      clock += ms;
      return Promise.resolve();
    },
  };
  return { deps, sent };
}

const spec = {
  host: 'probe-0',
  ruleId: 'rul_1',
  durationMinutes: 1,
  pollIntervalMs: 20,
  timeoutMs: 1_000,
};

describe('runProbe', () => {
  it('opens the window, completes it a duration later, then clears it one second after', async () => {
    const { deps, sent } = fakeStack({ fireOnPoll: 1, resolveOnPoll: 1 });
    await runProbe(spec, startMs, deps);
    expect(sent.map(({ sample }) => [sample.timestamp, sample.metrics])).toEqual([
      [new Date(startMs).toISOString(), { probe_value: 90 }],
      [new Date(startMs + 60_000).toISOString(), { probe_value: 90 }],
      [new Date(startMs + 61_000).toISOString(), { probe_value: 10 }],
    ]);
    expect(sent.every(({ sample }) => sample.tags['bench_probe'] === 'probe-0')).toBe(true);
    expect(startMs + 61_000).toBeLessThan(startMs + probeSpanMs(1));
  });

  it('sends one breaching sample when the rule fires without a duration', async () => {
    const { deps, sent } = fakeStack({ fireOnPoll: 1, resolveOnPoll: 1 });
    const outcome = await runProbe({ ...spec, durationMinutes: 0 }, startMs, deps);
    expect(sent.map(({ sample }) => sample.metrics['probe_value'])).toEqual([90, 10]);
    expect(outcome.firedAtMs).toBe(startMs);
  });

  it('times the alert from the 200 of the completing sample, polling every 20 ms', async () => {
    const { deps } = fakeStack({ fireOnPoll: 3, resolveOnPoll: 2, investigationOnPoll: 2 });
    const outcome = await runProbe(spec, startMs, deps);
    // Polls answered 5, 25 and 45 ms after the 200; the third lists the alert.
    expect(outcome).toMatchObject({
      firedAtMs: startMs + 60_000,
      fireMs: 45,
      resolveMs: 25,
      firePolls: 3,
    });
    // The investigation is polled from then on, beside the resolution (whose calls move the
    // shared fake clock too): its second poll, one interval later, shows it completed.
    expect(outcome.investigationMs).toBeGreaterThanOrEqual(45 + spec.pollIntervalMs);
    expect(outcome.investigationMs).toBeLessThan(45 + 3 * spec.pollIntervalMs);
  });

  it('reports a timeout, and still clears the window, when the alert never shows', async () => {
    const { deps, sent } = fakeStack({});
    const outcome = await runProbe({ ...spec, timeoutMs: 100 }, startMs, deps);
    expect(outcome.fireMs).toBeUndefined();
    expect(outcome.resolveMs).toBeUndefined();
    expect(outcome.investigationMs).toBeUndefined();
    expect(outcome.firePolls).toBe(6);
    expect(sent[sent.length - 1]?.sample.metrics['probe_value']).toBe(10);
  });

  it('ignores an alert of an earlier probe still listed first', async () => {
    const { deps } = fakeStack({ fireOnPoll: 2, resolveOnPoll: 1 });
    const earlier: ProbeAlert = {
      id: 'alr_0',
      status: 'resolved',
      fired_at: new Date(startMs - 2_000).toISOString(),
      investigation_id: null,
    };
    const listAlerts = deps.listAlerts;
    deps.listAlerts = async (ruleId) => [...(await listAlerts(ruleId)), earlier];
    const outcome = await runProbe(spec, startMs, deps);
    expect(outcome.firePolls).toBe(2);
    expect(outcome.fireMs).toBe(25);
  });
});
