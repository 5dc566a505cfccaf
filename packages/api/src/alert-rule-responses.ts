import type { AlertRuleFields, AlertRuleRow } from '@monitor/db';
import type {
  AlertChannel,
  AlertCondition,
  AlertRuleCreateRequest,
  AlertRuleResponse,
  AlertRuleUpdateRequest,
  AlertSeverity,
} from '@monitor/schemas';

/** Row → wire. The table's check constraints hold condition, severity and channels to the enums. */
export function toAlertRuleResponse(row: AlertRuleRow): AlertRuleResponse {
  return {
    id: row.id,
    name: row.name,
    metric: row.metric,
    condition: row.condition as AlertCondition,
    threshold: row.threshold,
    duration_minutes: row.durationMinutes,
    severity: row.severity as AlertSeverity,
    channels: row.channels as AlertChannel[],
    scope: row.scope,
    enabled: row.enabled,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

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
