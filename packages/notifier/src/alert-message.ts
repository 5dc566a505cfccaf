import type { AlertNotification, AlertResponse, AlertTransition } from '@monitor/schemas';
import { parseMessageTemplate, renderMessageTemplate } from '@monitor/schemas';

/** A human-readable rendering of a notification, shared by Slack and email. */
export type AlertMessage = {
  /** One line: `[FIRING] critical: cpu high on web-1`. */
  subject: string;
  /** Plain text, a few lines: what crossed which threshold, when, and the ids to look up. */
  text: string;
};

const conditionSymbols: Readonly<Record<string, string>> = {
  greater_than: '>',
  greater_than_or_equal: '>=',
  less_than: '<',
  less_than_or_equal: '<=',
  equal: '==',
  not_equal: '!=',
};

/** The subject's label of each transition; a settled alert says where it settled. */
function stateOf(transition: AlertTransition, alert: AlertResponse): string {
  switch (transition) {
    case 'fired':
      return 'FIRING';
    case 'resolved':
      return 'RESOLVED';
    case 'renotified':
      return 'STILL FIRING';
    case 'unsilenced':
      return 'FIRING, SILENCE ENDED';
    case 'settled':
      return alert.status === 'active' ? 'SETTLED FIRING' : 'SETTLED RESOLVED';
  }
}

/** A value as a message shows it: a no-data alert has none. */
function valueText(value: number | null): string {
  return value === null ? 'no data' : String(value);
}

/** What a rule's template renders with, besides the message's own alert. */
export type MessageContext = {
  /** The rule's `message_template`; null or absent: the default text. */
  messageTemplate?: string | null | undefined;
  /** The service's tags, for `{{tags.<key>}}`. */
  tags?: Readonly<Record<string, string>> | undefined;
};

/**
 * The rule's template rendered for this alert, or undefined without one. A stored template that
 * no longer parses (it was validated at save) falls back to the default text rather than
 * losing the message.
 */
export function renderAlertTemplate(
  payload: AlertNotification,
  context: MessageContext,
): string | undefined {
  if (context.messageTemplate === null || context.messageTemplate === undefined) return undefined;
  const parsed = parseMessageTemplate(context.messageTemplate);
  if (!parsed.success) return undefined;
  const { alert } = payload;
  return renderMessageTemplate(parsed.parts, {
    rule_name: alert.rule_name,
    host: alert.host,
    metric: alert.metric,
    value: valueText(alert.value),
    threshold: alert.threshold === null ? '' : String(alert.threshold),
    severity: alert.severity,
    status: alert.status,
    started_at: alert.started_at,
    tags: context.tags ?? {},
  });
}

export function formatAlertMessage(
  payload: AlertNotification,
  context: MessageContext = {},
): AlertMessage {
  const { alert, transition } = payload;
  const subject = `[${stateOf(transition, alert)}] ${alert.severity}: ${alert.rule_name} on ${alert.host}`;
  const rendered = renderAlertTemplate(payload, context);
  if (rendered !== undefined) return { subject, text: rendered };
  // A rule file's alert has no condition: its annotations say what it is about.
  const condition =
    alert.condition === null
      ? undefined
      : `${conditionSymbols[alert.condition] ?? alert.condition} ${alert.threshold}`;
  const firing =
    alert.reason === 'no_data'
      ? `No ${alert.metric} samples arrived: no data since ${alert.started_at}.`
      : condition === undefined
        ? (alert.annotations['summary'] ??
          alert.annotations['description'] ??
          `${alert.rule_name} is firing with ${valueText(alert.value)}.`)
        : `${alert.metric} is ${valueText(alert.value)} (alert when ${condition}).`;
  const lines: string[] = [];
  switch (transition) {
    case 'fired':
      lines.push(firing, `Breaching since ${alert.started_at}, fired at ${alert.fired_at}.`);
      break;
    case 'renotified':
    case 'unsilenced':
      lines.push(
        firing,
        `Still active: breaching since ${alert.started_at}, fired at ${alert.fired_at}.`,
      );
      if (transition === 'unsilenced') lines.push('The silence over it has ended.');
      break;
    case 'settled':
      lines.push(
        `It stopped flapping and settled ${alert.status === 'active' ? 'firing' : 'resolved'}.`,
      );
      break;
    case 'resolved':
      lines.push(
        condition === undefined
          ? `${alert.rule_name} is no longer firing.`
          : `${alert.metric} is no longer ${condition}.`,
        `Fired at ${alert.fired_at} with ${valueText(alert.value)}, resolved at ${alert.resolved_at ?? 'now'}.`,
      );
      break;
  }
  lines.push(`Alert ${alert.id}, rule ${alert.rule_id}, service ${alert.service_id}.`);
  if (alert.investigation_id !== null) lines.push(`Investigation ${alert.investigation_id}.`);
  return { subject, text: lines.join('\n') };
}

/** Slack reads `&`, `<` and `>` as markup (`<!channel>` pings everyone); the text must not. */
export function escapeSlackText(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** The `text` of a Slack message: the subject in bold, then the details (or the template). */
export function formatSlackText(payload: AlertNotification, context: MessageContext = {}): string {
  const message = formatAlertMessage(payload, context);
  return `*${escapeSlackText(message.subject)}*\n${escapeSlackText(message.text)}`;
}
