import { describe, expect, it } from 'vitest';
import type { PartitionProbeDeps } from './failover-probe.js';
import { failoverProbeMetric, failoverSeqMetric, probePartition } from './failover-probe.js';

/**
 * A pipeline on a virtual clock: a sample's alert change is listed `alertDelayMs` after its 200
 * and its step number shown `storedDelayMs` after (each a function of the step, for stalls).
 */
function fakePipeline(alertDelayMs: (step: number) => number, storedDelayMs: () => number) {
  let clock = 0;
  const events: { atMs: number; apply: () => void }[] = [];
  const alerts: { status: string; fired_at: string }[] = [];
  let seq: number | undefined;
  const timers: { wakeMs: number; resolve: () => void }[] = [];
  const fireNextTimer = (): void => {
    timers.sort((a, b) => a.wakeMs - b.wakeMs);
    const next = timers.shift();
    if (next === undefined) return;
    clock = Math.max(clock, next.wakeMs);
    next.resolve();
  };
  const settle = (): void => {
    for (const event of events.filter((e) => e.atMs <= clock)) {
      event.apply();
      events.splice(events.indexOf(event), 1);
    }
  };
  const deps: PartitionProbeDeps = {
    ingest(sample) {
      const step = sample.metrics[failoverSeqMetric] ?? 0;
      const breaching = (sample.metrics[failoverProbeMetric] ?? 0) > 50;
      const firedAt = breaching
        ? sample.timestamp
        : new Date(Date.parse(sample.timestamp) - 1_000).toISOString();
      events.push({
        atMs: clock + alertDelayMs(step),
        apply: () => {
          if (breaching) alerts.unshift({ status: 'active', fired_at: firedAt });
          else
            for (const alert of alerts) if (alert.fired_at === firedAt) alert.status = 'resolved';
        },
      });
      events.push({
        atMs: clock + storedDelayMs(),
        apply: () => (seq = Math.max(seq ?? -1, step)),
      });
      return Promise.resolve();
    },
    listAlerts: () => {
      settle();
      return Promise.resolve(alerts.map((a) => ({ ...a })));
    },
    storedSeq: () => {
      settle();
      return Promise.resolve(seq);
    },
    now: () => clock,
    // Timers fire in time order once every pending microtask ran, so the two pollers of a
    // step share one virtual clock the way they share the real one.
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        timers.push({ wakeMs: clock + ms, resolve });
        setImmediate(fireNextTimer);
      }),
  };
  return deps;
}

const spec = {
  partition: 3,
  host: 'probe-3',
  ruleId: 'rul_1',
  startEventTimeMs: Date.parse('2026-11-24T00:00:00Z'),
  stepIntervalMs: 1_000,
  pollIntervalMs: 100,
  timeoutMs: 10_000,
};

describe('probePartition', () => {
  it('records, per step, when the alert change and the stored sample became visible', async () => {
    const deps = fakePipeline(
      () => 250,
      () => 150,
    );
    let steps = 0;
    const results = await probePartition(spec, deps, () => steps++ >= 4);
    expect(results.alert.map((p) => p.latencyMs)).toEqual([300, 300, 300, 300]);
    expect(results.stored.map((p) => p.latencyMs)).toEqual([200, 200, 200, 200]);
    expect(results.alert.map((p) => p.sentAtMs)).toEqual([0, 1_000, 2_000, 3_000]);
    expect(results.alert.every((p) => p.partition === 3)).toBe(true);
  });

  it('waits out a stall, then times out a change never seen', async () => {
    const deps = fakePipeline(
      (step) => (step === 1 ? 4_000 : step === 2 ? 60_000 : 100),
      () => 100,
    );
    let steps = 0;
    const results = await probePartition(spec, deps, () => steps++ >= 3);
    expect(results.alert.map((p) => p.latencyMs)).toEqual([100, 4_000, undefined]);
    // The step after a stall starts at once: the interval had passed.
    expect(results.alert[2]?.sentAtMs).toBe(5_000);
  });
});
