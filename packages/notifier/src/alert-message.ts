import type { AlertNotification } from '@monitor/schemas';

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

export function formatAlertMessage(payload: AlertNotification): AlertMessage {
  const { alert, transition } = payload;
  const state = transition === 'fired' ? 'FIRING' : 'RESOLVED';
  const subject = `[${state}] ${alert.severity}: ${alert.rule_name} on ${alert.host}`;
  const condition = `${conditionSymbols[alert.condition] ?? alert.condition} ${alert.threshold}`;
  const lines =
    transition === 'fired'
      ? [
          `${alert.metric} is ${alert.value} (alert when ${condition}).`,
          `Breaching since ${alert.started_at}, fired at ${alert.fired_at}.`,
        ]
      : [
          `${alert.metric} is no longer ${condition}.`,
          `Fired at ${alert.fired_at} with ${alert.value}, resolved at ${alert.resolved_at ?? 'now'}.`,
        ];
  lines.push(`Alert ${alert.id}, rule ${alert.rule_id}, service ${alert.service_id}.`);
  if (alert.investigation_id !== null) lines.push(`Investigation ${alert.investigation_id}.`);
  return { subject, text: lines.join('\n') };
}

/** Slack reads `&`, `<` and `>` as markup (`<!channel>` pings everyone); the text must not. */
export function escapeSlackText(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** The `text` of a Slack message: the subject in bold, then the details. */
export function formatSlackText(payload: AlertNotification): string {
  const message = formatAlertMessage(payload);
  return `*${escapeSlackText(message.subject)}*\n${escapeSlackText(message.text)}`;
}
