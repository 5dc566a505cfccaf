import type { RuleGroupAlertChanges, RuleGroupAlertRow } from '@monitor/db';
import { createMemorySeriesSource } from '@monitor/promql';
import type { ActiveAlert, RuleGroup, RuleGroupState } from '@monitor/rules';
import { alertsToSend, evaluateRuleGroup, parseRuleGroup } from '@monitor/rules';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ruleAlertHost,
  ruleAlertSeverity,
  ruleGroupAlertChanges,
} from './rule-group-alert-changes.js';

const t0 = 1_764_000_000_000;
const minute = 60_000;

function groupOf(yaml: string): RuleGroup {
  const parsed = parseRuleGroup(yaml);
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  return parsed.groups[0]!;
}

const group = groupOf('name: g\nrules:\n- alert: Down\n  expr: up == 0\n- record: r\n  expr: up\n');

function alert(overrides: Partial<ActiveAlert> = {}): ActiveAlert {
  return {
    labels: { alertname: 'Down', instance: 'node-1:9100', severity: 'critical' },
    annotations: { summary: 'down' },
    state: 'firing',
    activeAtMs: t0 - minute,
    firedAtMs: t0,
    resolvedAtMs: null,
    keepFiringSinceMs: null,
    value: 0,
    ...overrides,
  };
}

function stateOf(...alerts: ActiveAlert[]): RuleGroupState {
  return { rules: { 'Down{}': { alerts, writtenSeries: [] } } };
}

function row(overrides: Partial<RuleGroupAlertRow> = {}): RuleGroupAlertRow {
  return {
    id: 'alr_1',
    ruleKey: 'Down{}',
    labels: alert().labels,
    annotations: { summary: 'down' },
    status: 'active',
    resolvedAtMs: null,
    ...overrides,
  };
}

const none: RuleGroupAlertChanges = { fire: [], resolve: [], annotate: [], resend: [] };

describe('ruleAlertHost and ruleAlertSeverity', () => {
  it('takes the service of its series, else the rules’ own service', () => {
    expect(ruleAlertHost({ instance: 'node-1:9100' })).toBe('node-1');
    expect(ruleAlertHost({ host: 'web-1', instance: 'node-1:9100' })).toBe('web-1');
    expect(ruleAlertHost({ job: 'api' })).toBe('api');
    expect(ruleAlertHost({ alertname: 'HighLoad' })).toBe('prometheus-rules');
    expect(ruleAlertHost({ host: 'x'.repeat(256) })).toBe('prometheus-rules');
  });

  it('takes a severity label of ours, else warning', () => {
    expect(ruleAlertSeverity({ severity: 'critical' })).toBe('critical');
    expect(ruleAlertSeverity({ severity: 'info' })).toBe('info');
    expect(ruleAlertSeverity({ severity: 'page' })).toBe('warning');
    expect(ruleAlertSeverity({})).toBe('warning');
  });
});

describe('ruleGroupAlertChanges', () => {
  const input = { group, sends: [], rows: [], timeMs: t0 };

  it('fires a firing alert that has no active row, with its labels, annotations and times', () => {
    const firing = alert({ value: Number.NaN, validUntilMs: t0 + 4 * minute });
    expect(ruleGroupAlertChanges({ ...input, state: stateOf(firing) })).toEqual({
      ...none,
      fire: [
        {
          ruleKey: 'Down{}',
          ruleName: 'Down',
          host: 'node-1',
          severity: 'critical',
          labels: firing.labels,
          annotations: firing.annotations,
          value: null,
          activeAtMs: t0 - minute,
          firedAtMs: t0,
          validUntilMs: t0 + 4 * minute,
        },
      ],
    });
    // Pending: nothing yet.
    expect(
      ruleGroupAlertChanges({
        ...input,
        state: stateOf(alert({ state: 'pending', firedAtMs: null })),
      }),
    ).toEqual(none);
  });

  it('keeps a firing alert with a row: new annotations, and a re-send when it is sent', () => {
    const firing = alert({ annotations: { summary: 'still down' }, validUntilMs: t0 + 9 });
    const sends = [{ ruleKey: 'Down{}', alert: firing }];
    expect(
      ruleGroupAlertChanges({ ...input, state: stateOf(firing), rows: [row()], sends }),
    ).toEqual({
      ...none,
      annotate: [{ id: 'alr_1', annotations: { summary: 'still down' } }],
      resend: [{ id: 'alr_1', validUntilMs: t0 + 9 }],
    });
    expect(ruleGroupAlertChanges({ ...input, state: stateOf(alert()), rows: [row()] })).toEqual(
      none,
    );
  });

  it('resolves an active row at its resolution, or now when its alert is pending or gone', () => {
    const resolved = alert({ state: 'inactive', resolvedAtMs: t0 - 5 });
    expect(
      ruleGroupAlertChanges({ ...input, state: stateOf(resolved), rows: [row()] }).resolve,
    ).toEqual([{ id: 'alr_1', resolvedAtMs: t0 - 5 }]);
    const pending = alert({ state: 'pending', firedAtMs: null });
    expect(
      ruleGroupAlertChanges({ ...input, state: stateOf(pending), rows: [row()] }).resolve,
    ).toEqual([{ id: 'alr_1', resolvedAtMs: t0 }]);
    // The rule left the group (or is a recording rule now): its alerts resolve.
    const other = groupOf('name: g\nrules:\n- record: Down\n  expr: up\n');
    expect(
      ruleGroupAlertChanges({ ...input, group: other, state: stateOf(alert()), rows: [row()] })
        .resolve,
    ).toEqual([{ id: 'alr_1', resolvedAtMs: t0 }]);
    expect(
      ruleGroupAlertChanges({ ...input, state: { rules: {} }, rows: [row()] }).resolve,
    ).toEqual([{ id: 'alr_1', resolvedAtMs: t0 }]);
  });

  it('re-sends a resolved alert the state still holds, found by its resolution time', () => {
    const resolved = alert({ state: 'inactive', resolvedAtMs: t0 - minute });
    const rows = [
      row({ id: 'alr_old', status: 'resolved', resolvedAtMs: t0 - 10 * minute }),
      row({ id: 'alr_1', status: 'resolved', resolvedAtMs: t0 - minute }),
    ];
    const sends = [{ ruleKey: 'Down{}', alert: resolved }];
    expect(ruleGroupAlertChanges({ ...input, state: stateOf(resolved), rows, sends })).toEqual({
      ...none,
      resend: [{ id: 'alr_1', validUntilMs: null }],
    });
  });

  it('keeps one active row per firing alert through evaluations, lost saves and replays', async () => {
    // Two series; each evaluation, either, both or none satisfies the rule; some saves are lost
    // (another owner, a change): the next evaluation repeats from the saved state.
    const rules = groupOf('name: g\nrules:\n- alert: Down\n  expr: up == 0\n  for: 1m\n');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ a: fc.boolean(), b: fc.boolean(), saved: fc.boolean() }), {
          minLength: 1,
          maxLength: 30,
        }),
        async (steps) => {
          const series = ['a', 'b'].map((instance) => ({
            labels: { __name__: 'up', instance },
            samples: steps.map(
              (step, i) =>
                [t0 + i * minute, step[instance as 'a' | 'b'] ? 0 : 1] as [number, number],
            ),
          }));
          const source = createMemorySeriesSource(series);
          const table: (RuleGroupAlertRow & { fired: number })[] = [];
          let state: RuleGroupState = { rules: {} };
          let fires = 0;
          let expectedFires = 0;
          let lastFiring = new Set<string>();
          for (const [i, step] of steps.entries()) {
            const timeMs = t0 + i * minute;
            const evaluation = await evaluateRuleGroup(rules, state, timeMs, {
              source,
              engine: { lookbackDeltaMs: 1, maxSamples: 1e6, maxSeries: 10, timeoutMs: 10_000 },
              externalLabels: {},
              externalUrl: '',
            });
            const sent = alertsToSend(rules, evaluation, timeMs, {
              resendDelayMs: minute,
              intervalMs: minute,
            });
            const changes = ruleGroupAlertChanges({
              group: rules,
              ...sent,
              rows: table,
              timeMs,
            });
            if (!step.saved) continue;
            state = sent.state;
            for (const r of changes.resolve) {
              const target = table.find((x) => x.id === r.id && x.status === 'active')!;
              target.status = 'resolved';
              target.resolvedAtMs = r.resolvedAtMs;
            }
            for (const f of changes.fire) {
              fires++;
              table.push({
                id: `alr_${table.length}`,
                ruleKey: f.ruleKey,
                labels: f.labels,
                annotations: f.annotations,
                status: 'active',
                resolvedAtMs: null,
                fired: f.firedAtMs,
              });
            }
            // The rows agree with the saved state: one active row per firing alert.
            const firing = new Set(
              (state.rules['Down{}']?.alerts ?? [])
                .filter((a) => a.state === 'firing')
                .map((a) => a.labels['instance']!),
            );
            const active = table.filter((x) => x.status === 'active');
            expect(active.map((x) => x.labels['instance']).sort()).toEqual([...firing].sort());
            expectedFires += [...firing].filter((instance) => !lastFiring.has(instance)).length;
            lastFiring = firing;
          }
          // One fire per episode of firing, never two.
          expect(fires).toBe(expectedFires);
        },
      ),
      { numRuns: 150 },
    );
  });
});
