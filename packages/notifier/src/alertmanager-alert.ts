import type { AlertNotification } from '@monitor/schemas';
import { isRuleFileAlert } from '@monitor/schemas';
import type { MessageContext } from './alert-message.js';
import { formatAlertMessage } from './alert-message.js';

/** One element of the body of Alertmanager's `POST /api/v2/alerts` (its `postableAlert`). */
export type AlertmanagerAlert = {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL?: string;
};

/** What the mapping needs besides the message. */
export type AlertmanagerAlertOptions = {
  /** The instant of the POST: a firing alert is valid for `validForMs` from here. */
  nowMs: number;
  /**
   * How long Alertmanager may take a firing alert as firing without hearing of it again.
   * Prometheus sends `4 × max(evaluation interval, resend delay)`, so two lost re-sends do not
   * resolve it; we re-send every `resendIntervalMs`, so 4 × that.
   */
  validForMs: number;
  /** The console's base URL (`https://monitor.example.com`); no `generatorURL` without one. */
  consoleUrl?: string | undefined;
  /**
   * A rule file's alert: Prometheus' ValidUntil as its latest evaluation set it (4 × the larger
   * of the resend delay and its group's interval): a firing alert is valid until the later of
   * that and `nowMs + validForMs`.
   */
  validUntilMs?: number | null | undefined;
};

/**
 * Alertmanager 0.25 validates label names as Prometheus' (`[a-zA-Z_][a-zA-Z0-9_]*`) and refuses
 * the whole POST for one bad name: a tag such as `k8s.namespace` becomes `k8s_namespace`.
 */
export function toLabelName(key: string): string {
  const name = key.replaceAll(/[^a-zA-Z0-9_]/g, '_');
  return /^[0-9]/.test(name) || name === '' ? `_${name}` : name;
}

/**
 * The alert's identity in Alertmanager: `alertname` (the rule's name), `rule_id` (two rules may
 * share a name), `host`, `metric`, `severity`, then the service's tags under Prometheus label
 * names. Alertmanager groups and deduplicates by these, so nothing that changes while the
 * alert is active (its value, acknowledgement) is a label. An empty tag value is left out, as
 * Prometheus drops empty labels; of two tags that map to one name, the first in key order wins.
 */
export function alertmanagerLabels(
  payload: AlertNotification,
  tags: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const { alert } = payload;
  const labels: Record<string, string> = {};
  for (const key of Object.keys(tags).sort()) {
    const value = tags[key];
    const name = toLabelName(key);
    if (value === undefined || value === '' || name in labels) continue;
    labels[name] = value;
  }
  // Labels of the alert itself: a service tag of the same name does not override them.
  const fixed = {
    alertname: alert.rule_name,
    rule_id: alert.rule_id,
    host: alert.host,
    metric: alert.metric,
    severity: alert.severity,
  };
  return { ...labels, ...fixed };
}

/**
 * One notification as Alertmanager takes it. Like Prometheus, `startsAt` is when the alert fired
 * and `endsAt` is when it resolved, or, while it is active, the end of its validity: a later
 * re-send moves it on, and an alert no one re-sends resolves itself in Alertmanager then.
 * A rule file's alert goes with exactly its own labels and annotations, as Prometheus sends it.
 * Another alert's `summary` is the message's subject without its state, `description` its text
 * (the rule's template when it has one), and the alert's id and value go along for the
 * receivers' use.
 */
export function toAlertmanagerAlert(
  payload: AlertNotification,
  context: MessageContext,
  options: AlertmanagerAlertOptions,
): AlertmanagerAlert {
  const { alert } = payload;
  const validUntilMs = Math.max(options.nowMs + options.validForMs, options.validUntilMs ?? 0);
  const endsAt =
    alert.status === 'resolved' && alert.resolved_at !== null
      ? alert.resolved_at
      : new Date(validUntilMs).toISOString();
  if (isRuleFileAlert(alert)) {
    const result: AlertmanagerAlert = {
      labels: { ...alert.labels },
      annotations: { ...alert.annotations },
      startsAt: alert.fired_at,
      endsAt,
    };
    if (options.consoleUrl !== undefined) {
      result.generatorURL = consoleAlertsUrl(options.consoleUrl, alert.rule_id);
    }
    return result;
  }
  const message = formatAlertMessage(payload, context);
  const annotations: Record<string, string> = {
    summary: `${alert.severity}: ${alert.rule_name} on ${alert.host}`,
    description: message.text,
    alert_id: alert.id,
  };
  if (alert.value !== null) annotations['value'] = String(alert.value);
  const result: AlertmanagerAlert = {
    labels: alertmanagerLabels(payload, context.tags),
    annotations,
    startsAt: alert.fired_at,
    endsAt,
  };
  if (options.consoleUrl !== undefined) {
    result.generatorURL = consoleRuleUrl(options.consoleUrl, alert.rule_id);
  }
  return result;
}

/**
 * The console's page of the rule that generated the alert, as Prometheus links the expression
 * that did: the console has no page per alert.
 */
export function consoleRuleUrl(consoleUrl: string, ruleId: string): string {
  return `${consoleUrl.replace(/\/+$/, '')}/rules/${encodeURIComponent(ruleId)}`;
}

/** The console's alerts of a rule file's rule (which has no page of its own there). */
export function consoleAlertsUrl(consoleUrl: string, ruleId: string): string {
  const query = new URLSearchParams({ rule_id: ruleId, status: 'all' });
  return `${consoleUrl.replace(/\/+$/, '')}/alerts?${query.toString()}`;
}
