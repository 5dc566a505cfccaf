import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AlertCondition } from '@monitor/schemas';
import type { MetricSample, WindowEvent, WindowRule, WindowState } from './rule-window.js';
import { evaluateSample, parseWindowState, ruleApplies } from './rule-window.js';

const minuteMs = 60_000;
const t0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const at = (minutes: number): number => t0 + minutes * minuteMs;

const cpuAbove90 = (durationMinutes: number): WindowRule => ({
  condition: 'greater_than',
  threshold: 90,
  durationMinutes,
});

/** Folds samples through evaluateSample, collecting every event. */
function run(
  rule: WindowRule,
  samples: readonly MetricSample[],
  initial?: WindowState,
): { state: WindowState | undefined; events: WindowEvent[] } {
  let state = initial;
  const events: WindowEvent[] = [];
  for (const sample of samples) {
    const result = evaluateSample(rule, state, sample);
    state = result.state;
    events.push(...result.events);
  }
  return { state, events };
}

const s = (minutes: number, value: number): MetricSample => ({ timeMs: at(minutes), value });

describe('ruleApplies', () => {
  const sample = { metrics: { cpu_percent: 95 }, tags: { env: 'prod', region: 'eu' } };

  it('applies to a sample carrying the metric whose tags include every scope pair', () => {
    expect(ruleApplies({ metric: 'cpu_percent', scope: {} }, sample)).toBe(true);
    expect(ruleApplies({ metric: 'cpu_percent', scope: { env: 'prod' } }, sample)).toBe(true);
    expect(
      ruleApplies({ metric: 'cpu_percent', scope: { env: 'prod', region: 'eu' } }, sample),
    ).toBe(true);
  });

  it('does not apply without the metric, with a different tag value or a missing tag', () => {
    expect(ruleApplies({ metric: 'memory_percent', scope: {} }, sample)).toBe(false);
    expect(ruleApplies({ metric: 'cpu_percent', scope: { env: 'staging' } }, sample)).toBe(false);
    expect(ruleApplies({ metric: 'cpu_percent', scope: { team: 'core' } }, sample)).toBe(false);
    expect(ruleApplies({ metric: 'toString', scope: {} }, sample)).toBe(false);
  });
});

describe('evaluateSample', () => {
  it('fires on the first breaching sample when duration_minutes is 0', () => {
    expect(run(cpuAbove90(0), [s(0, 80), s(1, 95)])).toEqual({
      state: { v: 1, status: 'firing', lastSampleMs: at(1), startedMs: at(1) },
      events: [{ type: 'fire', startedMs: at(1), firedMs: at(1), value: 95 }],
    });
  });

  it('fires at the first sample at least duration_minutes after the first breaching one', () => {
    const { events } = run(cpuAbove90(5), [s(0, 95), s(2, 96), s(4.99, 97), s(5, 98), s(6, 99)]);
    expect(events).toEqual([{ type: 'fire', startedMs: at(0), firedMs: at(5), value: 98 }]);
  });

  it('fires at a later sample when no sample falls exactly on the end of the window', () => {
    const { events } = run(cpuAbove90(5), [s(0, 95), s(3, 96), s(7, 97)]);
    expect(events).toEqual([{ type: 'fire', startedMs: at(0), firedMs: at(7), value: 97 }]);
  });

  it('clears a pending window on one good sample and starts the next window afresh', () => {
    const { events, state } = run(cpuAbove90(5), [s(0, 95), s(4, 50), s(5, 95), s(9, 95)]);
    expect(events).toEqual([]);
    expect(state).toEqual({ v: 1, status: 'pending', lastSampleMs: at(9), startedMs: at(5) });
    expect(run(cpuAbove90(5), [s(0, 95), s(4, 50), s(5, 95), s(10, 95)]).events).toEqual([
      { type: 'fire', startedMs: at(5), firedMs: at(10), value: 95 },
    ]);
  });

  it('resolves a firing alert on the first good sample, once', () => {
    const { events, state } = run(cpuAbove90(0), [s(0, 95), s(1, 99), s(2, 10), s(3, 20)]);
    expect(events).toEqual([
      { type: 'fire', startedMs: at(0), firedMs: at(0), value: 95 },
      { type: 'resolve', resolvedMs: at(2) },
    ]);
    expect(state).toEqual({ v: 1, status: 'ok', lastSampleMs: at(3) });
  });

  it('ignores samples older than the newest evaluated one', () => {
    const { events } = run(cpuAbove90(0), [s(5, 50), s(4, 95), s(6, 50)]);
    expect(events).toEqual([]);
    const firing = run(cpuAbove90(0), [s(5, 95)]);
    expect(run(cpuAbove90(0), [s(4, 10)], firing.state).events).toEqual([]);
  });

  it('ignores a sample at the same time as the newest evaluated one: the first value wins', () => {
    const { state } = run(cpuAbove90(0), [s(5, 95)]);
    const duplicate = evaluateSample(cpuAbove90(0), state, s(5, 95));
    expect(duplicate.state).toBe(state);
    expect(duplicate.events).toEqual([]);
    expect(run(cpuAbove90(0), [s(5, 50), s(5, 95)]).events).toEqual([]);
  });

  it('never fires twice for a replayed sequence', () => {
    const samples = [s(0, 95), s(1, 96), s(2, 97)];
    const first = run(cpuAbove90(1), samples);
    expect(first.events).toHaveLength(1);
    expect(run(cpuAbove90(1), samples, first.state).events).toEqual([]);
  });

  it('applies the rule as it is now to a window that began under an older version', () => {
    const pending = run(cpuAbove90(10), [s(0, 95)]).state;
    expect(run(cpuAbove90(2), [s(2, 95)], pending).events).toEqual([
      { type: 'fire', startedMs: at(0), firedMs: at(2), value: 95 },
    ]);
  });
});

describe('parseWindowState', () => {
  it('reads back every state it wrote, through JSON', () => {
    const states: WindowState[] = [
      { v: 1, status: 'ok', lastSampleMs: at(1) },
      { v: 1, status: 'pending', lastSampleMs: at(2), startedMs: at(1) },
      { v: 1, status: 'firing', lastSampleMs: at(3), startedMs: at(1) },
    ];
    for (const state of states) {
      expect(parseWindowState(JSON.parse(JSON.stringify(state)))).toEqual(state);
    }
  });

  it('rejects what it did not write', () => {
    for (const json of [
      null,
      'ok',
      { v: 2, status: 'ok', lastSampleMs: 1 },
      { v: 1, status: 'ok' },
      { v: 1, status: 'pending', lastSampleMs: 1 },
      { v: 1, status: 'done', lastSampleMs: 1, startedMs: 1 },
      { v: 1, status: 'firing', lastSampleMs: 1, startedMs: '1' },
    ]) {
      expect(parseWindowState(json)).toBeUndefined();
    }
  });
});

// ---- property: the state machine agrees with a whole-sequence reference ----------------------

const conditions: AlertCondition[] = [
  'greater_than',
  'greater_than_or_equal',
  'less_than',
  'less_than_or_equal',
  'equal',
  'not_equal',
];

/** The contract's comparison, written as a table independent of `breaches`. */
const referenceBreach: Record<AlertCondition, (value: number, threshold: number) => boolean> = {
  greater_than: (v, t) => v - t > 0,
  greater_than_or_equal: (v, t) => !(v < t),
  less_than: (v, t) => t - v > 0,
  less_than_or_equal: (v, t) => !(v > t),
  equal: (v, t) => !(v < t) && !(v > t),
  not_equal: (v, t) => v < t || v > t,
};

/**
 * The alerts of a whole sequence, computed the other way round: keep the samples newer than
 * every earlier one, cut them into maximal runs of breaching samples; a run fires at its first
 * sample at least `duration` after its start, and a run that fired resolves at the good sample
 * that ends it.
 */
function referenceEvents(rule: WindowRule, samples: readonly MetricSample[]): WindowEvent[] {
  const effective: MetricSample[] = [];
  for (const sample of samples) {
    if (effective.every((earlier) => sample.timeMs > earlier.timeMs)) effective.push(sample);
  }
  const breaching = (sample: MetricSample) =>
    referenceBreach[rule.condition](sample.value, rule.threshold);
  const events: WindowEvent[] = [];
  let i = 0;
  while (i < effective.length) {
    let end = i;
    while (end < effective.length && breaching(effective[end]!)) end++;
    if (end === i) {
      i++;
      continue;
    }
    const run = effective.slice(i, end);
    const startedMs = run[0]!.timeMs;
    const firing = run.find(
      (sample) => sample.timeMs - startedMs >= rule.durationMinutes * minuteMs,
    );
    if (firing !== undefined) {
      events.push({ type: 'fire', startedMs, firedMs: firing.timeMs, value: firing.value });
      const good = effective[end];
      if (good !== undefined) events.push({ type: 'resolve', resolvedMs: good.timeMs });
    }
    i = end;
  }
  return events;
}

const ruleArbitrary: fc.Arbitrary<WindowRule> = fc.record({
  condition: fc.constantFrom(...conditions),
  threshold: fc.constant(50),
  durationMinutes: fc.integer({ min: 0, max: 6 }),
});

/** Times on a 30 s grid over 15 minutes (duplicates and disorder likely), values around 50. */
const samplesArbitrary: fc.Arbitrary<MetricSample[]> = fc.array(
  fc.record({
    timeMs: fc.integer({ min: 0, max: 30 }).map((half) => t0 + half * 30_000),
    value: fc.constantFrom(49, 49.5, 50, 50.5, 51),
  }),
  { maxLength: 60 },
);

describe('evaluateSample against a whole-sequence reference', () => {
  it('produces the same fires and resolves, times and values', () => {
    fc.assert(
      fc.property(ruleArbitrary, samplesArbitrary, (rule, samples) => {
        expect(run(rule, samples).events).toEqual(referenceEvents(rule, samples));
      }),
      { numRuns: 2000 },
    );
  });

  it('produces the same when cut anywhere, the state serialized and resumed afresh', () => {
    fc.assert(
      fc.property(ruleArbitrary, samplesArbitrary, fc.nat(), (rule, samples, cutSeed) => {
        const cut = cutSeed % (samples.length + 1);
        const before = run(rule, samples.slice(0, cut));
        const checkpoint: unknown = JSON.parse(JSON.stringify(before.state ?? null));
        const resumed = parseWindowState(checkpoint);
        if (before.state !== undefined) expect(resumed).toEqual(before.state);
        const after = run(rule, samples.slice(cut), resumed);
        expect([...before.events, ...after.events]).toEqual(referenceEvents(rule, samples));
      }),
      { numRuns: 2000 },
    );
  });
});
