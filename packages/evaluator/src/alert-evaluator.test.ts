import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LiveRule } from '@monitor/db';
import { dependencyUnavailable } from '@monitor/platform';
import type { WindowEvent, WindowState } from './rule-window.js';
import { evaluateSample } from './rule-window.js';
import { buildLiveRule } from './testing/live-rule.js';
import type { Harness } from './testing/evaluator-harness.js';
import {
  at,
  topic,
  record,
  packed,
  batch,
  ctx,
  keyOf,
  harness,
} from './testing/evaluator-harness.js';

/**
 * The consumer's side: rules brought up to date first, a record that fails for good set aside
 * alone (dead-lettered), a transient failure redelivered whole, removed rules forgotten; and over
 * random streams, the same alerts as a straight evaluation.
 */
describe('createAlertEvaluator', () => {
  it('brings its rules up to date before it evaluates a batch', async () => {
    const h = harness([]);
    const created = buildLiveRule({ id: 'rul_cpu' });
    let known = h.currentRules();
    const asked: number[] = [];
    const evaluator = h.newEvaluator({
      current: () => known,
      poll: () => Promise.resolve(),
      // The rule was created (and answered) before the sample arrived: the check sees it.
      refresh: () => {
        asked.push(Date.now());
        h.setRules([created]);
        known = h.currentRules();
        return Promise.resolve();
      },
    });
    await evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    expect(asked).toHaveLength(1);
    expect(h.alerts).toMatchObject([{ ruleId: 'rul_cpu', host: 'web-1' }]);
  });

  it('dead-letters a record whose evaluation fails for good and evaluates the rest of its batch', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    h.poisonHost('bad\u0000host');
    await h.evaluator.handleBatch(
      batch(
        0,
        { host: 'web-1', minutes: 0, cpu: 95 },
        { host: 'web-2', minutes: 0, cpu: 95 },
        { host: 'bad\u0000host', minutes: 0, cpu: 95 },
        { host: 'web-3', minutes: 0, cpu: 95 },
        { host: 'web-4', minutes: 0, cpu: 95 },
      ),
      ctx,
    );
    expect(h.alerts.map((a) => a.host).sort()).toEqual(['web-1', 'web-2', 'web-3', 'web-4']);
    expect(h.deadLetters).toEqual([{ offset: '2', reason: expect.stringContaining('0x00') }]);
    expect(h.counters.unprocessable).toBe(1);
    expect(h.offsets.get(0)).toBe(5);
    // The partition moves on: the next batch is evaluated as usual.
    await h.evaluator.handleBatch(batch(5, { host: 'web-5', minutes: 1, cpu: 95 }), ctx);
    expect(h.alerts).toHaveLength(5);
  });

  it('sets aside only the host of a many-host record whose evaluation fails for good', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    h.poisonHost('bad\u0000host');
    await h.evaluator.handleBatch(
      {
        topic,
        partition: 0,
        records: [
          record(0, { host: 'web-1', minutes: 0, cpu: 95 }),
          packed(1, [
            { host: 'web-2', minutes: 0, cpu: 95 },
            { host: 'bad\u0000host', minutes: 0, cpu: 95 },
            { host: 'web-3', minutes: 0, cpu: 95 },
          ]),
          record(2, { host: 'web-4', minutes: 0, cpu: 95 }),
        ],
        logEndOffset: 3,
      },
      ctx,
    );
    expect(h.alerts.map((a) => a.host).sort()).toEqual(['web-1', 'web-2', 'web-3', 'web-4']);
    expect(h.deadLetters).toEqual([{ offset: '1', reason: expect.stringContaining('0x00') }]);
    expect(h.counters.unprocessable).toBe(1);
    expect(h.offsets.get(0)).toBe(3);
  });

  it('redelivers a batch that fails on a transient error instead of setting records aside', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    h.failNextCommit(dependencyUnavailable('The database', 1, new Error('connection lost')));
    await expect(
      h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx),
    ).rejects.toMatchObject({ code: 'dependency_unavailable' });
    expect(h.deadLetters).toEqual([]);
    expect(h.offsets.get(0)).toBeUndefined();
  });

  it('forgets the windows of removed rules in memory and in storage', async () => {
    const cpu = buildLiveRule({ id: 'rul_cpu', durationMinutes: 0 });
    const h = harness([cpu]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    h.setRules([]);
    expect(await h.evaluator.rulesRemoved()).toBe(1);
    // Enabled again (its alert was resolved by the API meanwhile): it fires afresh.
    h.alerts[0]!.status = 'resolved';
    h.setRules([cpu]);
    await h.evaluator.handleBatch(batch(1, { host: 'web-1', minutes: 1, cpu: 95 }), ctx);
    expect(h.alerts.map((a) => [a.status, a.firedMs])).toEqual([
      ['resolved', at(0)],
      ['active', at(1)],
    ]);
  });
});

// ---- property: batching, caching, restarts and replays change nothing -----------------------

type Step = { host: string; minutes: number; cpu: number };

/** Each (rule, host)'s events when its samples go straight through evaluateSample. */
function straightEvents(rules: readonly LiveRule[], steps: readonly Step[]) {
  const windows = new Map<string, WindowState>();
  const events: (WindowEvent & { key: string })[] = [];
  for (const step of steps) {
    for (const r of rules) {
      const key = `org_1/${step.host}/${r.id}`;
      const result = evaluateSample(r, windows.get(key), {
        timeMs: at(step.minutes),
        value: step.cpu,
      });
      windows.set(key, result.state);
      events.push(...result.events.map((event) => ({ ...event, key })));
    }
  }
  return events;
}

/** The alerts those events make, as the fake store keeps them. */
function alertsOf(events: ReturnType<typeof straightEvents>) {
  const alerts: {
    key: string;
    value: number;
    startedMs: number;
    firedMs: number;
    resolvedMs: number | null;
    flapping: boolean;
    settled: number;
  }[] = [];
  for (const event of events) {
    const open = alerts.find((a) => a.key === event.key && a.resolvedMs === null);
    if (event.type === 'fire') {
      alerts.push({
        key: event.key,
        value: event.value,
        startedMs: event.startedMs,
        firedMs: event.firedMs,
        resolvedMs: null,
        flapping: event.flapping === true,
        settled: 0,
      });
    } else if (event.type === 'resolve') {
      if (open !== undefined) {
        open.resolvedMs = event.resolvedMs;
        open.flapping ||= event.flapping === true;
      }
    } else {
      const target = event.firing
        ? open
        : alerts.filter((a) => a.key === event.key).sort((a, b) => b.firedMs - a.firedMs)[0];
      if (target !== undefined) {
        target.flapping = false;
        target.settled++;
      }
    }
  }
  return alerts;
}

describe('createAlertEvaluator over random streams', () => {
  const rules = [
    buildLiveRule({ id: 'rul_now', durationMinutes: 0, threshold: 50 }),
    // Rule options: hysteresis and keep-firing-for, and flap detection (ok windows with flap
    // data are kept as windows of their own beside the group's mark).
    buildLiveRule({
      id: 'rul_deep',
      durationMinutes: 0,
      threshold: 50,
      recoveryThreshold: 49.5,
      keepFiringForMinutes: 1,
      flapping: { windowMinutes: 8, maxTransitions: 2 },
    }),
    buildLiveRule({
      id: 'rul_flap',
      durationMinutes: 0,
      threshold: 50,
      condition: 'greater_than_or_equal',
      flapping: { windowMinutes: 6, maxTransitions: 2 },
    }),
    buildLiveRule({
      id: 'rul_slow',
      durationMinutes: 2,
      threshold: 50,
      condition: 'greater_than_or_equal',
    }),
  ];
  const steps = fc.array(
    fc.record({
      host: fc.constantFrom('a', 'b', 'c'),
      minutes: fc.integer({ min: 0, max: 19 }).map((half) => half / 2),
      cpu: fc.constantFrom(49, 50, 51),
    }),
    { maxLength: 50 },
  );
  const sizes = fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 20 });

  /** The alerts the evaluator stored, as alertsOf lists them. */
  const storedAlerts = (h: Harness) =>
    h.alerts.map(({ status: _status, ...a }) => ({
      key: keyOf(a),
      value: a.value,
      startedMs: a.startedMs,
      firedMs: a.firedMs,
      resolvedMs: a.resolvedMs,
      flapping: a.flapping,
      settled: a.settled,
    }));

  it('makes the alerts of a straight evaluation in one process, whatever the order, batches, failed commits and replays', async () => {
    await fc.assert(
      fc.asyncProperty(
        steps,
        sizes,
        fc.array(fc.constantFrom('continue', 'replay', 'fail'), { maxLength: 20 }),
        async (steps, sizes, actions) => {
          const h = harness(rules);
          let offset = 0;
          for (let i = 0; offset < steps.length; i++) {
            const size = sizes[i % sizes.length]!;
            const chunk = batch(offset, ...steps.slice(offset, offset + size));
            const action = actions[i % Math.max(1, actions.length)] ?? 'continue';
            if (action === 'fail') {
              h.failNextCommit(dependencyUnavailable('The database', 1, new Error('transient')));
              await expect(h.evaluator.handleBatch(chunk, ctx)).rejects.toMatchObject({
                code: 'dependency_unavailable',
              });
            }
            await h.evaluator.handleBatch(chunk, ctx);
            if (action === 'replay') await h.evaluator.handleBatch(chunk, ctx);
            offset += size;
          }
          expect(storedAlerts(h)).toEqual(alertsOf(straightEvents(rules, steps)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('makes the alerts of a straight evaluation across restarts, evictions, rules added, scopes, failed commits and replays', async () => {
    // Each rule applies to the samples of the batches from the one where it was added on.
    const pool = [
      { rule: buildLiveRule({ id: 'rul_now', durationMinutes: 0, threshold: 50 }), scoped: false },
      {
        rule: buildLiveRule({
          id: 'rul_prod',
          durationMinutes: 1,
          threshold: 50,
          scope: { env: 'prod' },
        }),
        scoped: true,
      },
      {
        rule: buildLiveRule({
          id: 'rul_late',
          durationMinutes: 1,
          threshold: 50,
          condition: 'greater_than_or_equal',
        }),
        scoped: false,
      },
      {
        rule: buildLiveRule({
          id: 'rul_flap_prod',
          durationMinutes: 0,
          threshold: 50,
          scope: { env: 'prod' },
          recoveryThreshold: 49.5,
          keepFiringForMinutes: 1,
          flapping: { windowMinutes: 6, maxTransitions: 2 },
        }),
        scoped: true,
      },
      {
        rule: buildLiveRule({
          id: 'rul_late_prod',
          durationMinutes: 0,
          threshold: 50,
          scope: { env: 'prod' },
        }),
        scoped: true,
      },
    ];
    const taggedSteps = fc.array(
      fc.record({
        host: fc.constantFrom('a', 'b', 'c'),
        minutes: fc.integer({ min: 0, max: 19 }).map((half) => half / 2),
        cpu: fc.constantFrom(49, 50, 51),
        env: fc.constantFrom('prod', 'staging'),
      }),
      { maxLength: 50 },
    );
    await fc.assert(
      fc.asyncProperty(
        taggedSteps,
        sizes,
        fc.array(fc.constantFrom('continue', 'restart', 'replay', 'fail'), { maxLength: 20 }),
        fc.tuple(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 10 })),
        async (steps, sizes, actions, [lateAt, lateProdAt]) => {
          const addedAt = new Map([
            ['rul_now', 0],
            ['rul_prod', 0],
            ['rul_flap_prod', 0],
            ['rul_late', lateAt],
            ['rul_late_prod', lateProdAt],
          ]);
          // Generations in the order the rules were added, as the database hands them out.
          const ordered = [...pool].sort(
            (x, y) => addedAt.get(x.rule.id)! - addedAt.get(y.rule.id)!,
          );
          const rules = ordered.map(({ rule: r }, i) => ({ ...r, generation: i + 1 }));
          const liveAt = (batchIndex: number) =>
            rules.filter((r) => addedAt.get(r.id)! <= batchIndex);

          const h = harness(liveAt(0), { maxCachedHostsPerPartition: 2 });
          let evaluator = h.evaluator;
          const expected: (WindowEvent & { key: string })[] = [];
          const windows = new Map<string, WindowState>();
          let offset = 0;
          for (let i = 0; offset < steps.length; i++) {
            h.setRules(liveAt(i));
            const size = sizes[i % sizes.length]!;
            const chunkSteps = steps.slice(offset, offset + size);
            for (const step of chunkSteps) {
              for (const r of liveAt(i)) {
                if (Object.keys(r.scope).length > 0 && step.env !== 'prod') continue;
                const key = `org_1/${step.host}/${r.id}`;
                const result = evaluateSample(r, windows.get(key), {
                  timeMs: at(step.minutes),
                  value: step.cpu,
                });
                windows.set(key, result.state);
                expected.push(...result.events.map((event) => ({ ...event, key })));
              }
            }
            const chunk = batch(
              offset,
              ...chunkSteps.map(({ env, ...step }) => ({ ...step, tags: { env } })),
            );
            const action = actions[i % Math.max(1, actions.length)] ?? 'continue';
            if (action === 'fail') {
              h.failNextCommit(dependencyUnavailable('The database', 1, new Error('transient')));
              await expect(evaluator.handleBatch(chunk, ctx)).rejects.toMatchObject({
                code: 'dependency_unavailable',
              });
            }
            await evaluator.handleBatch(chunk, ctx);
            if (action === 'replay') await evaluator.handleBatch(chunk, ctx);
            if (action === 'restart') evaluator = h.newEvaluator();
            offset += size;
          }
          const byKey = (
            a: { key: string; firedMs: number },
            b: { key: string; firedMs: number },
          ) => a.key.localeCompare(b.key) || a.firedMs - b.firedMs;
          expect(storedAlerts(h).sort(byKey)).toEqual(alertsOf(expected).sort(byKey));
        },
      ),
      { numRuns: 500 },
    );
  });
});
