import type { Alert } from './api-types.js';

/**
 * What an alert is about, in a few words: the rule's condition, the metric that went silent, or,
 * for an alert of a Prometheus rule file (no condition), its `summary` annotation, else its
 * labels.
 */
export function describeAlertCondition(
  alert: Pick<Alert, 'reason' | 'metric' | 'condition' | 'threshold' | 'labels' | 'annotations'>,
): string {
  if (alert.reason === 'no_data') return `no data for ${alert.metric}`;
  if (alert.condition !== null) return `${alert.metric} ${alert.condition} ${alert.threshold}`;
  const summary = alert.annotations['summary'];
  if (summary !== undefined && summary !== '') return summary;
  const labels = Object.entries(alert.labels)
    .filter(([name]) => name !== 'alertname')
    .map(([name, value]) => `${name}="${value}"`);
  return `${alert.metric}{${labels.join(', ')}}`;
}
