import type { ActiveAlert, RuleGroupEvaluation, RuleGroupState } from './evaluate-rule-group.js';
import { ruleStateKeys } from './evaluate-rule-group.js';
import type { RuleGroup } from './rule-group.js';

/** When alerts go to Alertmanagers. */
export type AlertSendOptions = {
  /** Prometheus' `--rules.alert.resend-delay`: the least time between two sends of an alert. */
  resendDelayMs: number;
  /** The group's evaluation interval. */
  intervalMs: number;
};

/** An alert to send now, with its rule's state key. */
export type AlertToSend = { ruleKey: string; alert: ActiveAlert };

/**
 * Prometheus 2.42's `sendAlerts`, run after a group's evaluation at `timeMs`: the alerts to send
 * to Alertmanagers now, and the state with them marked sent. Pending alerts are never sent; an
 * alert is sent when it resolved since its last send (so, when it first fires, and when it
 * resolves), and otherwise once `resendDelayMs` has passed since its last send, as evaluations
 * fall (every 90 s for a delay of 1 min and an interval of 30 s). Resolved alerts stay in the
 * state 15 minutes, so they are re-sent for that long, unless the same labels become active
 * again. A send makes the alert valid until 4 × max(resend delay, interval) from now, so that
 * two lost sends do not resolve it. Only rules that evaluated without error send.
 */
export function alertsToSend(
  group: RuleGroup,
  evaluation: Pick<RuleGroupEvaluation, 'state' | 'health'>,
  timeMs: number,
  options: AlertSendOptions,
): { state: RuleGroupState; sends: AlertToSend[] } {
  const validForMs = 4 * Math.max(options.resendDelayMs, options.intervalMs);
  const keys = ruleStateKeys(group.rules);
  const rules: RuleGroupState['rules'] = { ...evaluation.state.rules };
  const sends: AlertToSend[] = [];
  for (const [i, rule] of group.rules.entries()) {
    const key = keys[i]!;
    const ruleState = rules[key];
    if (rule.kind !== 'alert' || evaluation.health[i]?.health !== 'ok' || ruleState === undefined) {
      continue;
    }
    const alerts = ruleState.alerts.map((alert) => {
      if (!needsSending(alert, timeMs, options.resendDelayMs)) return alert;
      const sent = { ...alert, lastSentAtMs: timeMs, validUntilMs: timeMs + validForMs };
      sends.push({ ruleKey: key, alert: sent });
      return sent;
    });
    rules[key] = { ...ruleState, alerts };
  }
  return { state: { rules }, sends };
}

/** Prometheus' `Alert.needsSending`; never sent is sent at the zero time. */
function needsSending(alert: ActiveAlert, timeMs: number, resendDelayMs: number): boolean {
  if (alert.state === 'pending') return false;
  const lastSentAtMs = alert.lastSentAtMs ?? Number.NEGATIVE_INFINITY;
  if (alert.resolvedAtMs !== null && alert.resolvedAtMs > lastSentAtMs) return true;
  return lastSentAtMs + resendDelayMs < timeMs;
}
