import type { AlertRuleDraft } from '@monitor/schemas';

/**
 * A rule as the rule store creates it: "cpu high", `cpu_percent > 90` at once, critical,
 * enabled, no channels and no scope, unless `fields` say otherwise.
 */
export function buildAlertRuleDraft(fields: Partial<AlertRuleDraft> = {}): AlertRuleDraft {
  return {
    name: 'cpu high',
    metric: 'cpu_percent',
    condition: 'greater_than',
    threshold: 90,
    durationMinutes: 0,
    severity: 'critical',
    channels: [],
    scope: {},
    enabled: true,
    ...fields,
  };
}
