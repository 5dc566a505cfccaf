import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AlertCondition } from '@monitor/schemas';
import type { MetricSample, WindowEvent, WindowRule, WindowState } from './rule-window.js';
import { evaluateSample, isPlainOk, parseWindowState, ruleApplies } from './rule-window.js';

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
      state: { v: 2, status: 'firing', lastSampleMs: at(1), startedMs: at(1) },
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
    expect(state).toEqual({ v: 2, status: 'pending', lastSampleMs: at(9), startedMs: at(5) });
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
    expect(state).toEqual({ v: 2, status: 'ok', lastSampleMs: at(3) });
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
    const flap = { changesMs: [at(0), at(1)], flapping: true };
    const states: WindowState[] = [
      { v: 2, status: 'ok', lastSampleMs: at(1) },
      { v: 2, status: 'pending', lastSampleMs: at(2), startedMs: at(1) },
      { v: 2, status: 'firing', lastSampleMs: at(3), startedMs: at(1) },
      { v: 2, status: 'ok', lastSampleMs: at(1), flap },
      { v: 2, status: 'pending', lastSampleMs: at(2), startedMs: at(1), flap },
      { v: 2, status: 'firing', lastSampleMs: at(3), startedMs: at(1), clearStartMs: at(2), flap },
    ];
    for (const state of states) {
      expect(parseWindowState(JSON.parse(JSON.stringify(state)))).toEqual(state);
    }
  });

  it('reads a version 1 checkpoint as the same state in version 2', () => {
    expect(parseWindowState({ v: 1, status: 'ok', lastSampleMs: at(1) })).toEqual({
      v: 2,
      status: 'ok',
      lastSampleMs: at(1),
    });
    expect(
      parseWindowState({ v: 1, status: 'pending', lastSampleMs: at(2), startedMs: at(1) }),
    ).toEqual({ v: 2, status: 'pending', lastSampleMs: at(2), startedMs: at(1) });
    const firing = parseWindowState({
      v: 1,
      status: 'firing',
      lastSampleMs: at(3),
      startedMs: at(1),
    });
    expect(firing).toEqual({ v: 2, status: 'firing', lastSampleMs: at(3), startedMs: at(1) });
    // And it goes on from there: a good sample resolves the alert it fired.
    expect(evaluateSample(cpuAbove90(0), firing, s(4, 10)).events).toEqual([
      { type: 'resolve', resolvedMs: at(4) },
    ]);
  });

  it('rejects what it did not write', () => {
    for (const json of [
      null,
      'ok',
      { v: 3, status: 'ok', lastSampleMs: 1 },
      { v: 2, status: 'ok', lastSampleMs: 1, flap: { changesMs: ['1'], flapping: false } },
      { v: 2, status: 'ok', lastSampleMs: 1, flap: { changesMs: [], flapping: 'no' } },
      { v: 2, status: 'ok', lastSampleMs: 1, clearStartMs: 1 },
      { v: 2, status: 'firing', lastSampleMs: 1, startedMs: 1, clearStartMs: null },
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

// ---- rule options: recovery threshold, keep-firing-for, flapping -------------------------------

const withRecovery = (
  rule: Partial<WindowRule> & Pick<WindowRule, 'durationMinutes'>,
): WindowRule => ({
  condition: 'greater_than',
  threshold: 90,
  ...rule,
});

describe('evaluateSample with a recovery threshold', () => {
  it('keeps firing until a sample no longer breaches the recovery threshold', () => {
    const rule = withRecovery({ durationMinutes: 0, recoveryThreshold: 80 });
    const { events, state } = run(rule, [s(0, 95), s(1, 85), s(2, 80.5), s(3, 80), s(4, 85)]);
    expect(events).toEqual([
      { type: 'fire', startedMs: at(0), firedMs: at(0), value: 95 },
      { type: 'resolve', resolvedMs: at(3) },
    ]);
    // Once resolved, firing again takes the threshold itself: 85 is not above 90.
    expect(state).toEqual({ v: 2, status: 'ok', lastSampleMs: at(4) });
  });

  it('works the other way for less_than', () => {
    const rule: WindowRule = {
      condition: 'less_than',
      threshold: 10,
      durationMinutes: 0,
      recoveryThreshold: 20,
    };
    expect(run(rule, [s(0, 5), s(1, 15), s(2, 19.9), s(3, 20)]).events).toEqual([
      { type: 'fire', startedMs: at(0), firedMs: at(0), value: 5 },
      { type: 'resolve', resolvedMs: at(3) },
    ]);
  });

  it('treats null as the threshold', () => {
    const rule = withRecovery({ durationMinutes: 0, recoveryThreshold: null });
    expect(run(rule, [s(0, 95), s(1, 90)]).events).toEqual([
      { type: 'fire', startedMs: at(0), firedMs: at(0), value: 95 },
      { type: 'resolve', resolvedMs: at(1) },
    ]);
  });
});

describe('evaluateSample with keep_firing_for_minutes', () => {
  const rule = withRecovery({ durationMinutes: 0, keepFiringForMinutes: 5 });

  it('resolves at the first sample at or after clear start + N minutes', () => {
    const { events, state } = run(rule, [s(0, 95), s(1, 50), s(3, 50), s(5.99, 50), s(6, 50)]);
    expect(events).toEqual([
      { type: 'fire', startedMs: at(0), firedMs: at(0), value: 95 },
      { type: 'resolve', resolvedMs: at(6) },
    ]);
    expect(state).toEqual({ v: 2, status: 'ok', lastSampleMs: at(6) });
  });

  it('resolves at a later sample when none falls on the end of the clear period', () => {
    expect(run(rule, [s(0, 95), s(1, 50), s(30, 50)]).events).toEqual([
      { type: 'fire', startedMs: at(0), firedMs: at(0), value: 95 },
      { type: 'resolve', resolvedMs: at(30) },
    ]);
  });

  it('cancels the clear period on a breaching sample: one episode is one alert', () => {
    const { events, state } = run(rule, [s(0, 95), s(1, 50), s(4, 95), s(5, 50), s(9, 50)]);
    expect(events).toEqual([{ type: 'fire', startedMs: at(0), firedMs: at(0), value: 95 }]);
    expect(state).toEqual({
      v: 2,
      status: 'firing',
      lastSampleMs: at(9),
      startedMs: at(0),
      clearStartMs: at(5),
    });
    expect(evaluateSample(rule, state, s(10, 50)).events).toEqual([
      { type: 'resolve', resolvedMs: at(10) },
    ]);
  });

  it('counts only samples meeting the recovery threshold as clearing', () => {
    const both = withRecovery({
      durationMinutes: 0,
      keepFiringForMinutes: 2,
      recoveryThreshold: 80,
    });
    expect(run(both, [s(0, 95), s(1, 70), s(2, 85), s(3, 70), s(4, 70), s(5, 70)]).events).toEqual([
      { type: 'fire', startedMs: at(0), firedMs: at(0), value: 95 },
      { type: 'resolve', resolvedMs: at(5) },
    ]);
  });
});

describe('evaluateSample with flapping', () => {
  // More than 2 changes within 10 minutes is flapping.
  const rule = withRecovery({
    durationMinutes: 0,
    flapping: { windowMinutes: 10, maxTransitions: 2 },
  });

  it('marks the change that makes too many, and the following ones, flapping', () => {
    const { events } = run(rule, [s(0, 95), s(1, 50), s(2, 95), s(3, 50), s(4, 95)]);
    expect(events).toEqual([
      { type: 'fire', startedMs: at(0), firedMs: at(0), value: 95 },
      { type: 'resolve', resolvedMs: at(1) },
      { type: 'fire', startedMs: at(2), firedMs: at(2), value: 95, flapping: true },
      { type: 'resolve', resolvedMs: at(3), flapping: true },
      { type: 'fire', startedMs: at(4), firedMs: at(4), value: 95, flapping: true },
    ]);
  });

  it('settles once stable for the window after the last change, saying where', () => {
    const flapped = run(rule, [s(0, 95), s(1, 50), s(2, 95), s(3, 50)]);
    const later = run(rule, [s(5, 50), s(12.99, 50), s(13, 50), s(14, 50)], flapped.state);
    expect(later.events).toEqual([{ type: 'settle', settledMs: at(13), firing: false }]);
    const firing = run(rule, [s(4, 95), s(10, 96), s(14, 97), s(15, 98)], flapped.state);
    expect(firing.events).toEqual([
      { type: 'fire', startedMs: at(4), firedMs: at(4), value: 95, flapping: true },
      { type: 'settle', settledMs: at(14), firing: true },
    ]);
    // Settled: a later change is notified again.
    expect(evaluateSample(rule, firing.state, s(16, 10)).events).toEqual([
      { type: 'resolve', resolvedMs: at(16) },
    ]);
  });

  it('settles before a change that comes after a stable window', () => {
    const flapped = run(rule, [s(0, 95), s(1, 50), s(2, 95), s(3, 50)]);
    expect(run(rule, [s(20, 95)], flapped.state).events).toEqual([
      { type: 'settle', settledMs: at(20), firing: false },
      { type: 'fire', startedMs: at(20), firedMs: at(20), value: 95 },
    ]);
  });

  it('does not count changes spread wider than the window', () => {
    const { events } = run(rule, [s(0, 95), s(6, 50), s(12, 95), s(18, 50)]);
    expect(events.some((event) => 'flapping' in event)).toBe(false);
  });

  it('keeps flap data only while it matters, then the state is a plain ok again', () => {
    const { state } = run(rule, [s(0, 95), s(1, 50)]);
    expect(state).toEqual({
      v: 2,
      status: 'ok',
      lastSampleMs: at(1),
      flap: { changesMs: [at(0), at(1)], flapping: false },
    });
    expect(isPlainOk(state!)).toBe(false);
    const later = evaluateSample(rule, state, s(11, 50)).state;
    expect(later).toEqual({ v: 2, status: 'ok', lastSampleMs: at(11) });
    expect(isPlainOk(later)).toBe(true);
  });

  it('drops the flap data when the rule no longer detects flapping', () => {
    const { state } = run(rule, [s(0, 95), s(1, 50), s(2, 95), s(3, 50)]);
    const off = { ...rule, flapping: null };
    expect(evaluateSample(off, state, s(4, 50))).toEqual({
      state: { v: 2, status: 'ok', lastSampleMs: at(4) },
      events: [],
    });
  });
});

// ---- property: rule options against a whole-sequence reference, with restarts and replays -----

/**
 * The alerts of a whole sequence with the rule options, computed from the whole sequence:
 * episodes are found by index (a run of samples breaching the threshold that lasts `duration`
 * fires; the alert resolves at the first sample ending a run of samples that do not breach the
 * recovery threshold and that lasts `keep`), then flapping is read off the list of changes: a
 * change is flapping when more than `max` changes fall in the window ending at it, or when the
 * previous change was flapping and less than the window before it; a flapping episode settles
 * at the first sample at least the window after its last change.
 */
function referenceWithRuleOptions(
  rule: WindowRule,
  samples: readonly MetricSample[],
): WindowEvent[] {
  const effective: MetricSample[] = [];
  for (const sample of samples) {
    if (effective.every((earlier) => sample.timeMs > earlier.timeMs)) effective.push(sample);
  }
  const breach = (value: number, threshold: number) =>
    referenceBreach[rule.condition](value, threshold);
  const recovery = rule.recoveryThreshold ?? rule.threshold;
  const keepMs = (rule.keepFiringForMinutes ?? 0) * minuteMs;
  type Change = Extract<WindowEvent, { type: 'fire' | 'resolve' }>;
  /** index in `effective` → the change it makes. */
  const changes = new Map<number, Change>();
  let i = 0;
  while (i < effective.length) {
    if (!breach(effective[i]!.value, rule.threshold)) {
      i++;
      continue;
    }
    let end = i;
    while (end < effective.length && breach(effective[end]!.value, rule.threshold)) end++;
    const startedMs = effective[i]!.timeMs;
    let fired = -1;
    for (let k = i; k < end; k++) {
      if (effective[k]!.timeMs - startedMs >= rule.durationMinutes * minuteMs) {
        fired = k;
        break;
      }
    }
    if (fired < 0) {
      i = end;
      continue;
    }
    const firing = effective[fired]!;
    changes.set(fired, { type: 'fire', startedMs, firedMs: firing.timeMs, value: firing.value });
    let resolved = -1;
    let runStart = -1;
    for (let j = fired + 1; j < effective.length; j++) {
      if (breach(effective[j]!.value, recovery)) {
        runStart = -1;
        continue;
      }
      if (runStart < 0) runStart = j;
      if (effective[j]!.timeMs - effective[runStart]!.timeMs >= keepMs) {
        resolved = j;
        break;
      }
    }
    if (resolved < 0) break;
    changes.set(resolved, { type: 'resolve', resolvedMs: effective[resolved]!.timeMs });
    i = resolved + 1;
  }
  const flapping = rule.flapping ?? null;
  if (flapping === null) return [...changes.entries()].sort(([a], [b]) => a - b).map(([, e]) => e);
  const windowMs = flapping.windowMinutes * minuteMs;
  const changeTimes = [...changes.keys()].sort((a, b) => a - b).map((k) => effective[k]!.timeMs);
  const events: WindowEvent[] = [];
  let isFlapping = false;
  let lastChangeMs: number | undefined;
  let active = false;
  effective.forEach((sample, index) => {
    if (isFlapping && lastChangeMs !== undefined && sample.timeMs - lastChangeMs >= windowMs) {
      events.push({ type: 'settle', settledMs: sample.timeMs, firing: active });
      isFlapping = false;
    }
    const change = changes.get(index);
    if (change === undefined) return;
    const inWindow = changeTimes.filter(
      (changeMs) => changeMs <= sample.timeMs && changeMs > sample.timeMs - windowMs,
    ).length;
    isFlapping = isFlapping || inWindow > flapping.maxTransitions;
    events.push(isFlapping ? { ...change, flapping: true } : change);
    lastChangeMs = sample.timeMs;
    active = change.type === 'fire';
  });
  return events;
}

const ruleWithOptionsArbitrary: fc.Arbitrary<WindowRule> = fc
  .record({
    condition: fc.constantFrom<AlertCondition>(
      'greater_than',
      'greater_than_or_equal',
      'less_than',
      'less_than_or_equal',
    ),
    durationMinutes: fc.integer({ min: 0, max: 3 }),
    recoveryOffset: fc.option(fc.constantFrom(0, 0.5, 1), { nil: null }),
    keepFiringForMinutes: fc.integer({ min: 0, max: 3 }),
    flapping: fc.option(
      fc.record({
        windowMinutes: fc.integer({ min: 1, max: 8 }),
        maxTransitions: fc.integer({ min: 2, max: 4 }),
      }),
      { nil: null },
    ),
  })
  .map(({ condition, recoveryOffset, ...rest }) => ({
    condition,
    threshold: 50,
    // On the non-breaching side, as the API insists.
    recoveryThreshold:
      recoveryOffset === null
        ? null
        : condition.startsWith('greater')
          ? 50 - recoveryOffset
          : 50 + recoveryOffset,
    ...rest,
  }));

/** A run cut into checkpointed segments, each maybe lost once (a crash before its commit). */
const scheduleArbitrary = fc.array(
  fc.record({ cut: fc.nat(), lost: fc.boolean(), replayFrom: fc.nat() }),
  { maxLength: 6 },
);

/** The events fire and resolve alternate, starting with a fire: at most one active alert. */
function atMostOneActive(events: readonly WindowEvent[]): boolean {
  let active = false;
  for (const event of events) {
    if (event.type === 'fire') {
      if (active) return false;
      active = true;
    } else if (event.type === 'resolve') {
      if (!active) return false;
      active = false;
    }
  }
  return true;
}

describe('evaluateSample (rule options) against a whole-sequence reference', () => {
  it('produces the same alerts, flapping marks and settles, times and values', () => {
    fc.assert(
      fc.property(ruleWithOptionsArbitrary, samplesArbitrary, (rule, samples) => {
        const { events } = run(rule, samples);
        expect(events).toEqual(referenceWithRuleOptions(rule, samples));
        expect(atMostOneActive(events)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('produces the same through restarts from JSON checkpoints, lost batches and replays', () => {
    fc.assert(
      fc.property(
        ruleWithOptionsArbitrary,
        samplesArbitrary,
        scheduleArbitrary,
        (rule, samples, schedule) => {
          const cuts = [...new Set(schedule.map(({ cut }) => cut % (samples.length + 1)))].sort(
            (a, b) => a - b,
          );
          // The committed checkpoint and events; a batch is its segment of samples.
          let checkpoint: unknown = null;
          const committed: WindowEvent[] = [];
          let from = 0;
          for (const [index, to] of [...cuts, samples.length].entries()) {
            const step = schedule[index];
            const segment = samples.slice(from, to);
            const restored = parseWindowState(checkpoint);
            if (step?.lost === true) {
              // Evaluated, then lost before its commit: it leaves nothing behind.
              run(rule, segment, restored);
            }
            // Redelivered with some already-applied samples in front (a replay): they change nothing.
            const replayed = samples.slice(
              step === undefined ? from : step.replayFrom % (from + 1),
              from,
            );
            const result = run(rule, [...replayed, ...segment], restored);
            committed.push(...result.events);
            checkpoint = JSON.parse(JSON.stringify(result.state ?? null));
            if (result.state !== undefined)
              expect(parseWindowState(checkpoint)).toEqual(result.state);
            from = to;
          }
          expect(committed).toEqual(referenceWithRuleOptions(rule, samples));
          expect(atMostOneActive(committed)).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
