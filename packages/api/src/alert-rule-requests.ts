import type {
  AlertRuleCreateRequest,
  AlertRuleFields,
  AlertRuleUpdateRequest,
} from '@monitor/schemas';

/** Wire → store: a POST body with its defaults applied. */
export function toAlertRuleFields(body: AlertRuleCreateRequest): AlertRuleFields {
  return {
    name: body.name,
    metric: body.metric,
    condition: body.condition,
    threshold: body.threshold,
    durationMinutes: body.duration_minutes,
    severity: body.severity,
    channels: body.channels,
    scope: body.scope,
    enabled: body.enabled,
  };
}

/** Wire → store: only the fields a PATCH body sets. */
export function toAlertRuleChanges(body: AlertRuleUpdateRequest): Partial<AlertRuleFields> {
  const changes: Partial<AlertRuleFields> = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.metric !== undefined) changes.metric = body.metric;
  if (body.condition !== undefined) changes.condition = body.condition;
  if (body.threshold !== undefined) changes.threshold = body.threshold;
  if (body.duration_minutes !== undefined) changes.durationMinutes = body.duration_minutes;
  if (body.severity !== undefined) changes.severity = body.severity;
  if (body.channels !== undefined) changes.channels = body.channels;
  if (body.scope !== undefined) changes.scope = body.scope;
  if (body.enabled !== undefined) changes.enabled = body.enabled;
  return changes;
}
