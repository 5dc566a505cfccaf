import type { MemorySeries } from '@monitor/promql';
import { createMemorySeriesSource } from '@monitor/promql';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  ActiveAlert,
  RuleGroup,
  RuleGroupEvaluation,
  RuleGroupEvaluationOptions,
  RuleGroupState,
} from './index.js';
import { evaluateRuleGroup, parseRuleFile } from './index.js';

const minute = 60_000;
const t0 = 1_700_000_000_000;

function groupOf(yaml: string): RuleGroup {
  const result = parseRuleFile(yaml);
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.groups[0]!;
}

/** Evaluates `group` once per minute from t0 over `series`, returning every evaluation. */
async function run(
  group: RuleGroup,
  series: MemorySeries[],
  steps: number,
): Promise<RuleGroupEvaluation[]> {
  const source = createMemorySeriesSource(series);
  let state: RuleGroupState = { rules: {} };
  const evaluations: RuleGroupEvaluation[] = [];
  for (let step = 0; step < steps; step++) {
    const options: RuleGroupEvaluationOptions = {
      source,
      engine: {
        lookbackDeltaMs: 5 * minute,
        maxSamples: 50_000_000,
        maxSeries: 100_000,
        timeoutMs: 10_000,
      },
      externalLabels: { dc: 'eu1' },
      externalUrl: 'https://monitor.example.com',
    };
    const evaluation = await evaluateRuleGroup(group, state, t0 + step * minute, options);
    evaluations.push(evaluation);
    state = evaluation.state;
  }
  return evaluations;
}

/** A series sampled each minute from t0 with the given values. */
const series = (labels: Record<string, string>, values: number[]): MemorySeries => ({
  labels,
  samples: values.map((v, i) => [t0 + i * minute, v]),
});

const alertStates = (evaluation: RuleGroupEvaluation): string[] =>
  evaluation.samples
    .filter((s) => s.labels['__name__'] === 'ALERTS')
    .map((s) => s.labels['alertstate']!);

describe('evaluateRuleGroup', () => {
  it('stores what a template writes that storage could not hold as U+FFFD', async () => {
    const group = groupOf(`groups:
- name: node
  rules:
  - alert: Odd
    expr: up == 0
    labels: {tag: '{{ "a\\x00b" }}'}
    annotations: {summary: '{{ "\\ud800" }}x'}
`);
    const [evaluation] = await run(group, [series({ __name__: 'up', instance: 'h1' }, [0])], 1);
    const [alert] = Object.values(evaluation!.state.rules)[0]!.alerts;
    expect(alert?.labels['tag']).toBe('a\ufffdb');
    expect(alert?.annotations).toEqual({ summary: '\ufffdx' });
  });

  it('holds an alert pending for `for`, then fires it, with expanded labels and annotations', async () => {
    const group = groupOf(`groups:
- name: node
  rules:
  - alert: HostDown
    expr: up == 0
    for: 2m
    labels: {severity: "{{ if eq $labels.job \\"node\\" }}page{{ end }}"}
    annotations: {summary: "{{ $labels.instance }} down ({{ $value }}) in {{ $externalLabels.dc }}"}
`);
    const evaluations = await run(
      group,
      [series({ __name__: 'up', instance: 'h1', job: 'node' }, [0, 0, 0, 0])],
      4,
    );
    expect(evaluations.map(alertStates)).toEqual([
      ['pending'],
      ['pending'],
      ['firing'],
      ['firing'],
    ]);
    const alert =
      evaluations[2]!.state.rules[Object.keys(evaluations[2]!.state.rules)[0]!]!.alerts[0]!;
    const expected: ActiveAlert = {
      labels: { alertname: 'HostDown', instance: 'h1', job: 'node', severity: 'page' },
      annotations: { summary: 'h1 down (0) in eu1' },
      state: 'firing',
      activeAtMs: t0,
      firedAtMs: t0 + 2 * minute,
      resolvedAtMs: null,
      keepFiringSinceMs: null,
      value: 0,
    };
    expect(alert).toEqual(expected);
    // ALERTS_FOR_STATE carries activeAt in seconds, for restoring `for` after a restart.
    expect(evaluations[3]!.samples).toContainEqual({
      labels: {
        __name__: 'ALERTS_FOR_STATE',
        alertname: 'HostDown',
        instance: 'h1',
        job: 'node',
        severity: 'page',
      },
      value: t0 / 1000,
    });
  });

  it('drops a pending alert whose condition stops, and resolves a firing one, kept 15 min', async () => {
    const group = groupOf(`groups:
- name: g
  rules:
  - alert: Slow
    expr: latency > 1
    for: 1m
`);
    // pending at 0, gone at 1; pending 2, firing 3, resolved 4 and kept until 4 + 15 min.
    const values = [2, 0, 2, 2, ...Array<number>(20).fill(0)];
    const evaluations = await run(group, [series({ __name__: 'latency' }, values)], 22);
    const alerts = evaluations.map((e) => Object.values(e.state.rules)[0]!.alerts);
    expect(alertStates(evaluations[0]!)).toEqual(['pending']);
    expect(alerts[1]).toEqual([]);
    expect(alertStates(evaluations[3]!)).toEqual(['firing']);
    expect(alerts[4]!.map((a) => [a.state, a.resolvedAtMs])).toEqual([
      ['inactive', t0 + 4 * minute],
    ]);
    expect(alerts[19]).toHaveLength(1);
    expect(alerts[20]).toEqual([]);
    // The ALERTS series of the resolved alert goes stale when it resolves.
    expect(evaluations[4]!.staleSeries).toContainEqual({
      __name__: 'ALERTS',
      alertname: 'Slow',
      alertstate: 'firing',
    });
  });

  it('lets a later rule see at once what an earlier one stopped writing, as a staleness marker', async () => {
    // The alert generator suite's NewAlerts_OrderCheck: a rule over the ALERTS of the one before.
    const group = groupOf(`groups:
- name: g
  rules:
  - alert: Hot
    expr: temp > 50
  - record: hot:firing
    expr: count(ALERTS{alertname="Hot", alertstate="firing"})
`);
    const temp = series({ __name__: 'temp' }, [99, 99, 20]);
    // What the evaluations wrote, stored as the write path stores it, markers included.
    const stored = new Map<string, MemorySeries & { stale: number[] }>();
    let state: RuleGroupState = { rules: {} };
    const recorded: boolean[] = [];
    for (let step = 0; step < 3; step++) {
      const timeMs = t0 + step * minute;
      const evaluation = await evaluateRuleGroup(group, state, timeMs, {
        source: createMemorySeriesSource([temp, ...stored.values()]),
        engine: { lookbackDeltaMs: 5 * minute, maxSamples: 1e6, maxSeries: 100, timeoutMs: 1e4 },
        externalLabels: {},
        externalUrl: '',
      });
      state = evaluation.state;
      recorded.push(evaluation.samples.some((s) => s.labels['__name__'] === 'hot:firing'));
      const store = (labels: Record<string, string>, value: number, stale: number) => {
        const key = JSON.stringify(Object.entries(labels).sort());
        const entry = stored.get(key) ?? { labels, samples: [], stale: [] };
        entry.samples.push([timeMs, value]);
        entry.stale.push(stale);
        stored.set(key, entry);
      };
      for (const sample of evaluation.samples) store(sample.labels, sample.value, 0);
      for (const labels of evaluation.staleSeries) store(labels, Number.NaN, 1);
    }
    // Resolved at the third evaluation: its firing ALERTS series, written a minute before, is
    // stale for the rule after it in that same evaluation.
    expect(recorded).toEqual([true, true, false]);
  });

  it('records a native histogram as one, which a later rule reads at once', async () => {
    const group = groupOf(`groups:
- name: g
  rules:
  - record: job:latency:sum
    expr: sum by (job) (latency)
  - record: job:latency:count
    expr: histogram_count(job:latency:sum)
`);
    const latency = (instance: string, count: number): MemorySeries => ({
      labels: { __name__: 'latency', job: 'api', instance },
      samples: [],
      histograms: [
        [
          t0,
          {
            schema: 0,
            zeroThreshold: 0,
            zeroCount: 0,
            count,
            sum: count / 10,
            positiveSpans: [{ offset: -3, length: 1 }],
            positiveBuckets: [count],
            negativeSpans: [],
            negativeBuckets: [],
          },
        ],
      ],
    });
    const [evaluation] = await run(group, [latency('a', 3), latency('b', 4)], 1);
    expect(evaluation!.samples).toEqual([
      {
        labels: { __name__: 'job:latency:sum', job: 'api' },
        value: 0,
        histogram: expect.objectContaining({ count: 7, positiveBuckets: [7] }),
      },
      { labels: { __name__: 'job:latency:count', job: 'api' }, value: 7 },
    ]);
  });

  it('keeps a firing alert firing for keep_firing_for after its condition stops', async () => {
    const group = groupOf(`groups:
- name: g
  rules:
  - alert: Flapping
    expr: errors > 0
    keep_firing_for: 2m
`);
    const evaluations = await run(group, [series({ __name__: 'errors' }, [1, 0, 0, 0, 1])], 5);
    expect(evaluations.map(alertStates)).toEqual([
      ['firing'],
      ['firing'],
      ['firing'],
      [],
      ['firing'],
    ]);
    const kept = Object.values(evaluations[2]!.state.rules)[0]!.alerts[0]!;
    expect(kept.keepFiringSinceMs).toBe(t0 + minute);
    // A new episode starts a new alert.
    expect(Object.values(evaluations[4]!.state.rules)[0]!.alerts[0]!.activeAtMs).toBe(
      t0 + 4 * minute,
    );
  });

  it('records series that later rules of the group read at the same time', async () => {
    const group = groupOf(`groups:
- name: g
  rules:
  - record: job:up:sum
    expr: sum by (job) (up)
    labels: {team: core}
  - alert: FewUp
    expr: job:up:sum < 3
`);
    const [evaluation] = await run(
      group,
      [
        series({ __name__: 'up', job: 'a', instance: '1' }, [1]),
        series({ __name__: 'up', job: 'a', instance: '2' }, [1]),
      ],
      1,
    );
    expect(evaluation!.samples).toContainEqual({
      labels: { __name__: 'job:up:sum', job: 'a', team: 'core' },
      value: 2,
    });
    expect(alertStates(evaluation!)).toEqual(['firing']);
    expect(evaluation!.health).toEqual([
      { health: 'ok', lastError: null },
      { health: 'ok', lastError: null },
    ]);
  });

  it("reports Prometheus' errors and keeps the rule's state", async () => {
    const group = groupOf(`groups:
- name: g
  limit: 1
  rules:
  - record: r
    expr: up
  - record: dup
    expr: up
    labels: {instance: same}
  - alert: Many
    expr: up
`);
    const [evaluation] = await run(
      group,
      [
        series({ __name__: 'up', instance: '1' }, [1]),
        series({ __name__: 'up', instance: '2' }, [1]),
      ],
      1,
    );
    expect(evaluation!.health.map((h) => h.lastError)).toEqual([
      'exceeded limit of 1 with 2 series',
      'vector contains metrics with the same labelset after applying rule labels',
      'exceeded limit of 1 with 2 alerts',
    ]);
    expect(evaluation!.samples).toEqual([]);
  });
});

describe('evaluateRuleGroup state machine', () => {
  /** The alert's state after each step, for a condition that holds at the steps given. */
  async function states(
    conditions: boolean[],
    forSteps: number,
    keepSteps: number,
  ): Promise<string[]> {
    const group: RuleGroup = {
      name: 'g',
      intervalMs: minute,
      limit: 0,
      rules: [
        {
          kind: 'alert',
          alert: 'A',
          expr: 'c > 0',
          forMs: forSteps * minute,
          keepFiringForMs: keepSteps * minute,
          labels: {},
          annotations: {},
        },
      ],
    };
    const evaluations = await run(
      group,
      [series({ __name__: 'c' }, conditions.map(Number))],
      conditions.length,
    );
    return evaluations.map((e) => alertStates(e)[0] ?? 'none');
  }

  it('fires exactly when the condition held at this and the `for` steps before (no keep_firing_for)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 4 }),
        async (conditions, forSteps) => {
          const got = await states(conditions, forSteps, 0);
          const expected = conditions.map((held, k) => {
            if (!held) return 'none';
            // How many steps in a row, up to this one, the condition held.
            const sinceLastFalse = conditions
              .slice(0, k + 1)
              .reverse()
              .indexOf(false);
            const length = sinceLastFalse === -1 ? k + 1 : sinceLastFalse;
            return length - 1 >= forSteps ? 'firing' : 'pending';
          });
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('keeps firing for keep_firing_for after the last step the condition held (for: 0)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 4 }),
        async (conditions, keepSteps) => {
          const got = await states(conditions, 0, keepSteps);
          const expected = conditions.map((held, k) => {
            if (held) return 'firing';
            const last = conditions.slice(0, k + 1).lastIndexOf(true);
            // Kept since the first step without the condition, for less than keep_firing_for.
            return last !== -1 && k - (last + 1) < keepSteps ? 'firing' : 'none';
          });
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('never fires before `for` has passed since activeAt, and keeps activeAt while active', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        async (conditions, forSteps, keepSteps) => {
          const group: RuleGroup = {
            name: 'g',
            intervalMs: minute,
            limit: 0,
            rules: [
              {
                kind: 'alert',
                alert: 'A',
                expr: 'c > 0',
                forMs: forSteps * minute,
                keepFiringForMs: keepSteps * minute,
                labels: {},
                annotations: {},
              },
            ],
          };
          const evaluations = await run(
            group,
            [series({ __name__: 'c' }, conditions.map(Number))],
            conditions.length,
          );
          let previousActiveAt: number | null = null;
          evaluations.forEach((e, k) => {
            const alert = Object.values(e.state.rules)[0]!.alerts.find(
              (a) => a.state !== 'inactive',
            );
            if (alert?.state === 'firing')
              expect(t0 + k * minute - alert.activeAtMs).toBeGreaterThanOrEqual(forSteps * minute);
            if (conditions[k]) expect(alert).toBeDefined();
            if (alert !== undefined && previousActiveAt !== null)
              expect(alert.activeAtMs).toBe(previousActiveAt);
            previousActiveAt = alert?.activeAtMs ?? null;
          });
        },
      ),
      { numRuns: 60 },
    );
  });
});
