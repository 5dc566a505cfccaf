import type { AlertRuleCreateRequest, AlertRuleDraft } from '@monitor/schemas';

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

/** A create request's body: the fields without a default, and any of the others. */
type AlertRuleCreateBody = Pick<
  AlertRuleCreateRequest,
  'name' | 'metric' | 'condition' | 'threshold' | 'severity'
> &
  Partial<AlertRuleCreateRequest>;

/**
 * The body of `POST /api/v1/alerts/rules` for `buildAlertRuleDraft`'s rule: its required fields
 * and `fields`, so the API's defaults apply to the rest.
 */
export function buildAlertRuleCreateRequest(
  fields: Partial<AlertRuleCreateRequest> = {},
): AlertRuleCreateBody {
  const { name, metric, condition, threshold, severity } = buildAlertRuleDraft();
  return { name, metric, condition, threshold, severity, ...fields };
}
