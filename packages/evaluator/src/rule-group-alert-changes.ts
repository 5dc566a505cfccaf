import type { RuleGroupAlertChanges, RuleGroupAlertRow } from '@monitor/db';
import { hostOfLabels } from '@monitor/protocols';
import type { AlertToSend, RuleGroup, RuleGroupState } from '@monitor/rules';
import { ruleStateKeys } from '@monitor/rules';
import type { AlertSeverity } from '@monitor/schemas';
import { alertSeverities, ingestLimits } from '@monitor/schemas';
import { ruleSeriesHost } from './rule-group-samples.js';

/** The severity of a rule file's alert without a `severity` label we know. */
const defaultRuleAlertSeverity: AlertSeverity = 'warning';

export type RuleGroupAlertInput = {
  group: RuleGroup;
  /** The group's state after the evaluation, alerts marked sent (`alertsToSend`). */
  state: RuleGroupState;
  /** What `alertsToSend` sends at this evaluation. */
  sends: readonly AlertToSend[];
  /** The stored alerts of the group's rules (`listGroupAlerts`). */
  rows: readonly RuleGroupAlertRow[];
  /** The evaluation's time. */
  timeMs: number;
};

type Labels = Readonly<Record<string, string>>;

/** One string per label set, whatever the order of its entries. */
function labelsKey(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function sameRecord(a: Labels, b: Labels): boolean {
  return labelsKey(a) === labelsKey(b);
}

/**
 * The service a rule file's alert is about: the one its labels' series belongs to (`host`, else
 * `instance` without the port, else `job`), else the service the rules' own series are stored
 * under (an aggregate across jobs).
 */
export function ruleAlertHost(labels: Labels): string {
  const host = hostOfLabels(labels);
  return host === undefined || host.length > ingestLimits.maxHostLength ? ruleSeriesHost : host;
}

/** Its `severity` label when that is one of ours, else `defaultRuleAlertSeverity`. */
export function ruleAlertSeverity(labels: Labels): AlertSeverity {
  const severity = labels['severity'];
  return (alertSeverities as readonly string[]).includes(severity ?? '')
    ? (severity as AlertSeverity)
    : defaultRuleAlertSeverity;
}

/**
 * What an evaluation of a rule group changes in the alerts of its rules, found by comparing the
 * state it saves with the stored alerts (desired against actual, so that a group whose alerts
 * went out of step, an upgrade from before alerts were stored included, comes back in step):
 *
 * - a firing alert without an active row fires (its first send to Alertmanagers is the outbox's
 *   `fired` message); one with a row takes its latest annotations, and is re-sent when
 *   `alertsToSend` sends it;
 * - an active row whose alert is pending, inactive (resolved at its `resolvedAtMs`), or gone
 *   from the state (its rule removed, its state reset by a limit: resolved now) resolves;
 * - a resolved alert the state still holds is re-sent when `alertsToSend` sends it.
 *
 * Pure; the store applies the changes with the state, only if nobody saved meanwhile.
 */
export function ruleGroupAlertChanges(input: RuleGroupAlertInput): RuleGroupAlertChanges {
  const { group, state, timeMs } = input;
  const changes: RuleGroupAlertChanges = { fire: [], resolve: [], annotate: [], resend: [] };
  const active = new Map<string, RuleGroupAlertRow>();
  const resolved = new Map<string, RuleGroupAlertRow>();
  for (const row of input.rows) {
    const id = `${row.ruleKey}\n${labelsKey(row.labels)}`;
    if (row.status === 'active') active.set(id, row);
    else if (row.resolvedAtMs !== null) resolved.set(`${id}\n${row.resolvedAtMs}`, row);
  }
  const sent = new Set(input.sends.map((s) => `${s.ruleKey}\n${labelsKey(s.alert.labels)}`));
  const matched = new Set<string>();
  const keys = ruleStateKeys(group.rules);
  for (const [i, rule] of group.rules.entries()) {
    const ruleKey = keys[i]!;
    if (rule.kind !== 'alert') continue;
    for (const alert of state.rules[ruleKey]?.alerts ?? []) {
      const id = `${ruleKey}\n${labelsKey(alert.labels)}`;
      const row = active.get(id);
      if (row !== undefined) matched.add(row.id);
      if (alert.state === 'firing') {
        if (row === undefined) {
          changes.fire.push({
            ruleKey,
            ruleName: rule.alert,
            host: ruleAlertHost(alert.labels),
            severity: ruleAlertSeverity(alert.labels),
            labels: alert.labels,
            annotations: alert.annotations,
            value: Number.isFinite(alert.value) ? alert.value : null,
            activeAtMs: alert.activeAtMs,
            firedAtMs: alert.firedAtMs ?? timeMs,
            validUntilMs: alert.validUntilMs ?? timeMs,
          });
          continue;
        }
        if (!sameRecord(row.annotations, alert.annotations)) {
          changes.annotate.push({ id: row.id, annotations: alert.annotations });
        }
        if (sent.has(id))
          changes.resend.push({ id: row.id, validUntilMs: alert.validUntilMs ?? timeMs });
      } else if (row !== undefined) {
        changes.resolve.push({ id: row.id, resolvedAtMs: alert.resolvedAtMs ?? timeMs });
      } else if (alert.state === 'inactive' && alert.resolvedAtMs !== null && sent.has(id)) {
        const done = resolved.get(`${id}\n${alert.resolvedAtMs}`);
        if (done !== undefined) changes.resend.push({ id: done.id, validUntilMs: null });
      }
    }
  }
  for (const row of active.values()) {
    if (!matched.has(row.id)) changes.resolve.push({ id: row.id, resolvedAtMs: timeMs });
  }
  return changes;
}
