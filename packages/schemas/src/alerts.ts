import { z } from 'zod';
import type { QueryInput, QueryParseResult } from './api.js';
import type { AlertCondition, AlertResponse, AlertSeverity, AlertStatus } from './api.js';
import {
  alertSchema,
  alertSeverities,
  paginationQuerySchema,
  paginationSchema,
  parseQuery,
  queryEnum,
  queryId,
} from './api.js';

/** Wire formats of `GET /api/v1/alerts` and `GET /api/v1/alerts/:id` (the item is `alertSchema`). */

/** `all` means both statuses. */
const alertStatusFilters = ['active', 'resolved', 'all'] as const;

export const alertListQuerySchema = paginationQuerySchema.extend({
  status: queryEnum(alertStatusFilters)
    .default('active')
    .meta({ description: 'Active alerts (the default), resolved ones, or all.' }),
  severity: queryEnum(alertSeverities).optional().meta({ description: 'Only this severity.' }),
  service_id: queryId('svc').optional().meta({ description: 'Only alerts of this service.' }),
  rule_id: queryId('rul')
    .optional()
    .meta({ description: 'Only alerts of this rule (a deleted rule’s alerts included).' }),
});
export type AlertListQuery = z.output<typeof alertListQuerySchema>;

/** Query parameters of `GET /api/v1/alerts`; unknown parameters are ignored. */
export function parseAlertListQuery(query: QueryInput): QueryParseResult<AlertListQuery> {
  return parseQuery(alertListQuerySchema, query);
}

export const alertListResponseSchema = z
  .object({ alerts: z.array(alertSchema), pagination: paginationSchema })
  .meta({ id: 'AlertList' });
export type AlertListResponse = z.infer<typeof alertListResponseSchema>;

/**
 * An alert as every package passes it around: the fields of the API's alert item, with
 * instants as `Date`. Storage reads it, the api and the notifier map it to their wire formats
 * with `toAlertResponse`, the investigator reads its times.
 */
export type Alert = {
  id: string;
  ruleId: string;
  ruleName: string;
  serviceId: string;
  host: string;
  metric: string;
  condition: AlertCondition;
  threshold: number;
  severity: AlertSeverity;
  status: AlertStatus;
  /** The sample value that fired the alert. */
  value: number;
  /** Time of the first breaching sample. */
  startedAt: Date;
  firedAt: Date;
  resolvedAt: Date | null;
  investigationId: string | null;
};

/** Alert → wire: snake_case fields, instants as ISO 8601 UTC with `Z`. */
export function toAlertResponse(alert: Alert): AlertResponse {
  return {
    id: alert.id,
    rule_id: alert.ruleId,
    rule_name: alert.ruleName,
    service_id: alert.serviceId,
    host: alert.host,
    metric: alert.metric,
    condition: alert.condition,
    threshold: alert.threshold,
    severity: alert.severity,
    status: alert.status,
    value: alert.value,
    started_at: alert.startedAt.toISOString(),
    fired_at: alert.firedAt.toISOString(),
    resolved_at: alert.resolvedAt === null ? null : alert.resolvedAt.toISOString(),
    investigation_id: alert.investigationId,
  };
}

/** Severities whose alerts open an investigation when they fire (CONTRACT "Investigations"). */
export function opensInvestigation(severity: AlertSeverity): boolean {
  return severity === 'critical' || severity === 'warning';
}

/** The two moments of an alert's life that are notified. */
export type AlertTransition = 'fired' | 'resolved';

/**
 * The message of every notification channel: the API's alert item plus the transition (the
 * webhook body as is; Slack and email format their text from it).
 */
export type AlertNotification = { transition: AlertTransition; alert: AlertResponse };
