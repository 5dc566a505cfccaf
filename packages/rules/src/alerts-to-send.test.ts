import type { MemorySeries } from '@monitor/promql';
import { createMemorySeriesSource } from '@monitor/promql';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AlertSendOptions, AlertToSend, RuleGroup, RuleGroupState } from './index.js';
import { alertsToSend, evaluateRuleGroup, parseRuleFile } from './index.js';

const second = 1_000;
const minute = 60 * second;
const t0 = 1_700_000_000_000;

function groupOf(yaml: string): RuleGroup {
  const result = parseRuleFile(yaml);
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.groups[0]!;
}

/** A send as an Alertmanager would see it, relative to t0 in seconds. */
type Sent = {
  atS: number;
  state: string;
  summary: string | undefined;
  /** `startsAt`: when it fired. */
  firedAtS: number | null;
  resolvedAtS: number | null;
  validUntilS: number | null;
};

/**
 * Evaluates `group` over `series` at t0 + offset + k × interval until `untilMs`, sending after
 * each evaluation as the evaluator does; every send, in order.
 */
async function simulate(
  group: RuleGroup,
  series: MemorySeries[],
  options: { offsetMs: number; untilMs: number } & AlertSendOptions,
): Promise<Sent[]> {
  const source = createMemorySeriesSource(series);
  let state: RuleGroupState = { rules: {} };
  const sent: Sent[] = [];
  const relative = (ms: number | null | undefined) => (ms == null ? null : (ms - t0) / second);
  for (let time = t0 + options.offsetMs; time <= t0 + options.untilMs; time += options.intervalMs) {
    const evaluation = await evaluateRuleGroup(group, state, time, {
      source,
      engine: { lookbackDeltaMs: 5 * minute, maxSamples: 1e6, maxSeries: 1e4, timeoutMs: 10_000 },
      externalLabels: {},
      externalUrl: '',
    });
    const out = alertsToSend(group, evaluation, time, options);
    state = out.state;
    for (const { alert } of out.sends) {
      sent.push({
        atS: (time - t0) / second,
        state: alert.state,
        summary: alert.annotations['summary'],
        firedAtS: relative(alert.firedAtMs),
        resolvedAtS: relative(alert.resolvedAtMs),
        validUntilS: relative(alert.validUntilMs),
      });
    }
  }
  return sent;
}

/** The compliance suite's sample notation: `v` a value, `dxN` N more samples each d higher. */
function sampleSlice(intervalMs: number, ...values: string[]): [number, number][] {
  const samples: [number, number][] = [];
  let value = 0;
  for (const text of values) {
    const [step, count] = text.split('x');
    if (count === undefined) {
      value = Number(step);
      samples.push([t0 + samples.length * intervalMs, value]);
      continue;
    }
    for (let i = 0; i < Number(count); i++) {
      value += Number(step);
      samples.push([t0 + samples.length * intervalMs, value]);
    }
  }
  return samples;
}

describe('alertsToSend', () => {
  it("sends as Prometheus' notifier in the alert generator suite's PendingAndFiringAndResolved", async () => {
    // alert_generator/cases/case_pending_firing_resolved.go: samples every 15 s, the group every
    // 30 s (here 7 s past the samples), `for` 24 samples, resend delay 1 min.
    const group = groupOf(`groups:
- name: PendingAndFiringAndResolved
  interval: 30s
  rules:
  - alert: PendingAndFiringAndResolved_SimpleAlert
    expr: test_metric{rulegroup="PendingAndFiringAndResolved"} > 10
    for: 6m
    labels: { foo: bar, rulegroup: PendingAndFiringAndResolved }
    annotations:
      description: SimpleAlert is firing
      summary: "The value is {{$value}} {{.Value}}"
`);
    const series: MemorySeries = {
      labels: {
        __name__: 'test_metric',
        rulegroup: 'PendingAndFiringAndResolved',
        alertname: 'PendingAndFiringAndResolved_SimpleAlert',
      },
      samples: sampleSlice(
        15 * second,
        ...['3', '5', '0x2', '9', '0x3', '11', '0x12', '15', '0x11', '0x20', '19', '0x15'],
        ...['9', '0x19', '15', '0x24', '0x20', '8', '0x15'],
      ),
    };
    expect(series.samples).toHaveLength(150);
    const sent = await simulate(group, [series], {
      offsetMs: 7 * second,
      untilMs: 60 * minute,
      resendDelayMs: minute,
      intervalMs: 30 * second,
    });
    const at = (state: string) => sent.filter((s) => s.state === state).map((s) => s.atS);
    // Fires at the first evaluation 6 min after the one that saw 11 (127 s): 487 s, within a
    // group interval of sample 32 (480 s); then every 90 s (the first 30 s multiple past 60 s).
    // Resolves at the first evaluation after sample 69 (1035 s) and is re-sent so until a new
    // alert of the same labels is pending (1357 s). Fires again at 1717 s (sample 113: 1695 s),
    // resolves at 2017 s (sample 134: 2010 s), and is re-sent resolved for 15 minutes.
    expect(at('firing')).toEqual([487, 577, 667, 757, 847, 937, 1027, 1717, 1807, 1897, 1987]);
    expect(at('inactive')).toEqual([
      1057, 1147, 1237, 1327, 2017, 2107, 2197, 2287, 2377, 2467, 2557, 2647, 2737, 2827, 2917,
    ]);
    expect(sent.find((s) => s.atS === 757)).toEqual({
      atS: 757,
      state: 'firing',
      summary: 'The value is 15 15',
      firedAtS: 487,
      resolvedAtS: null,
      validUntilS: 757 + 240,
    });
    // Annotations follow the value while firing, and stay as last seen once resolved.
    expect(sent.find((s) => s.atS === 847)?.summary).toBe('The value is 19 19');
    expect(sent.find((s) => s.atS === 1147)).toMatchObject({
      summary: 'The value is 19 19',
      firedAtS: 487,
      resolvedAtS: 1057,
    });
    expect(sent.find((s) => s.atS === 2917)).toMatchObject({
      firedAtS: 1717,
      resolvedAtS: 2017,
    });
  });

  it('makes an alert valid for 4 group intervals when they are longer than the resend delay', async () => {
    const group = groupOf(`groups:
- name: slow
  interval: 5m
  rules:
  - alert: Down
    expr: up == 0
`);
    const series = {
      labels: { __name__: 'up', instance: 'h1' },
      samples: [[t0, 0]] as [number, number][],
    };
    const sent = await simulate(group, [series], {
      offsetMs: 0,
      untilMs: 11 * minute,
      resendDelayMs: minute,
      intervalMs: 5 * minute,
    });
    // Every evaluation re-sends (5 min past a 1 min delay); the lookback ends the alert at 10 min.
    expect(sent.map((s) => [s.atS, s.state, s.validUntilS])).toEqual([
      [0, 'firing', 20 * 60],
      [300, 'firing', 300 + 20 * 60],
      [600, 'inactive', 600 + 20 * 60],
    ]);
  });

  it('sends nothing of a pending alert, nor of a rule that failed', () => {
    const group = groupOf(`groups:
- name: g
  rules:
  - alert: A
    expr: up == 0
    for: 5m
`);
    const pending = {
      labels: { alertname: 'A' },
      annotations: {},
      state: 'pending' as const,
      activeAtMs: t0,
      firedAtMs: null,
      resolvedAtMs: null,
      keepFiringSinceMs: null,
      value: 0,
    };
    const firing = { ...pending, state: 'firing' as const, firedAtMs: t0 };
    const options = { resendDelayMs: minute, intervalMs: minute };
    const state = (alert: typeof pending | typeof firing) => ({
      rules: { 'A{}': { alerts: [alert], writtenSeries: [] } },
    });
    const ok = [{ health: 'ok' as const, lastError: null }];
    const err = [{ health: 'err' as const, lastError: 'boom' }];
    expect(alertsToSend(group, { state: state(pending), health: ok }, t0, options).sends).toEqual(
      [],
    );
    expect(alertsToSend(group, { state: state(firing), health: err }, t0, options).sends).toEqual(
      [],
    );
    expect(alertsToSend(group, { state: state(firing), health: ok }, t0, options).sends).toEqual([
      { ruleKey: 'A{}', alert: { ...firing, lastSentAtMs: t0, validUntilMs: t0 + 4 * minute } },
    ]);
  });

  it('sends each firing alert when it fires and then each first evaluation past the delay; each resolution at once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 3 }),
        fc.constantFrom(15, 30, 60, 90),
        async (present, forIntervals, intervalS) => {
          const intervalMs = intervalS * second;
          const group = groupOf(`groups:
- name: g
  rules:
  - alert: A
    expr: x == 1
    for: ${forIntervals * intervalS}s
`);
          const series = {
            labels: { __name__: 'x' },
            samples: present.map((p, i) => [t0 + i * intervalMs, p ? 1 : 0] as [number, number]),
          };
          const sends: AlertToSend[][] = [];
          let state: RuleGroupState = { rules: {} };
          for (let i = 0; i < present.length; i++) {
            const time = t0 + i * intervalMs;
            const evaluation = await evaluateRuleGroup(group, state, time, {
              source: createMemorySeriesSource([series]),
              engine: { lookbackDeltaMs: 1, maxSamples: 1e6, maxSeries: 10, timeoutMs: 10_000 },
              externalLabels: {},
              externalUrl: '',
            });
            const out = alertsToSend(group, evaluation, time, {
              resendDelayMs: minute,
              intervalMs,
            });
            sends.push(out.sends);
            state = out.state;
          }
          // The reference: the alert's state at each evaluation, from `present` alone.
          let run = 0;
          let firedAt: number | undefined;
          let lastSent: number | undefined;
          let resolvedAt: number | undefined;
          for (let i = 0; i < present.length; i++) {
            const time = t0 + i * intervalMs;
            run = present[i] ? run + 1 : 0;
            const firing = run > forIntervals;
            const states = sends[i]!.map((s) => s.alert.state);
            if (firing && run === forIntervals + 1) {
              // It fires now: sent, as a new alert.
              expect(states).toEqual(['firing']);
              firedAt = time;
              resolvedAt = undefined;
              lastSent = time;
            } else if (firing) {
              const due = lastSent! + minute < time;
              expect(states).toEqual(due ? ['firing'] : []);
              if (due) lastSent = time;
            } else if (firedAt !== undefined && resolvedAt === undefined) {
              // It resolves now.
              expect(states).toEqual(['inactive']);
              resolvedAt = time;
              lastSent = time;
            } else if (resolvedAt !== undefined && !present[i]) {
              // Resolved and no new alert: re-sent for 15 minutes.
              const due = lastSent! + minute < time && time - resolvedAt <= 15 * minute;
              expect(states).toEqual(due ? ['inactive'] : []);
              if (due) lastSent = time;
            } else {
              // Pending (a new alert of the same labels replaces the resolved one), or nothing.
              expect(states).toEqual([]);
              if (present[i]) resolvedAt = undefined;
              if (present[i]) firedAt = undefined;
            }
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
