import { z } from 'zod';
import { storableText } from './input-policy.js';
import type { QueryInput, QueryParseResult } from './api.js';
import type {
  AlertCondition,
  AlertReason,
  AlertResponse,
  AlertSeverity,
  AlertStatus,
} from './api.js';
import {
  alertReasons,
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
  acknowledged: queryBoolean()
    .optional()
    .meta({ description: '`true`: only acknowledged alerts; `false`: only unacknowledged ones.' }),
  silenced: queryBoolean()
    .optional()
    .meta({ description: '`true`: only alerts a silence matches now; `false`: only the others.' }),
  reason: queryEnum(alertReasons).optional().meta({ description: 'Only alerts of this reason.' }),
});
export type AlertListQuery = z.output<typeof alertListQuerySchema>;

/** `true` or `false`, nothing else (`1`, `yes`, an empty value are 422). */
function queryBoolean() {
  return z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .transform((value) => value === 'true');
}

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
  /** The rule's metric; for an alert of a rule file, the rule's name. */
  metric: string;
  /** Null for an alert of a rule file (its rule is a PromQL expression). */
  condition: AlertCondition | null;
  threshold: number | null;
  severity: AlertSeverity;
  status: AlertStatus;
  /** The sample value that fired the alert; null for a `no_data` alert. */
  value: number | null;
  /** Time of the first breaching sample. */
  startedAt: Date;
  firedAt: Date;
  resolvedAt: Date | null;
  investigationId: string | null;
  reason: AlertReason;
  /** When it was first acknowledged (acknowledging again keeps it); null until then. */
  acknowledgedAt: Date | null;
  /** The API key id that acknowledged it. */
  acknowledgedBy: string | null;
  acknowledgementComment: string | null;
  /** Whether a silence matched it at the time it was read (storage computes it then). */
  silenced: boolean;
  flapping: boolean;
  /** An alert of a rule file: its Prometheus labels, `alertname` included; `{}` otherwise. */
  labels: Record<string, string>;
  /** An alert of a rule file: its annotations as last evaluated; `{}` otherwise. */
  annotations: Record<string, string>;
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
    reason: alert.reason,
    acknowledged_at: alert.acknowledgedAt === null ? null : alert.acknowledgedAt.toISOString(),
    acknowledged_by: alert.acknowledgedBy,
    acknowledgement_comment: alert.acknowledgementComment,
    silenced: alert.silenced,
    flapping: alert.flapping,
    labels: alert.labels,
    annotations: alert.annotations,
  };
}

/** Whether the alert comes from a Prometheus rule file (its rule has no condition). */
export function isRuleFileAlert(alert: Pick<AlertResponse, 'condition'>): boolean {
  return alert.condition === null;
}

/** Severities whose alerts open an investigation when they fire (docs/api.md#investigations). */
export function opensInvestigation(severity: AlertSeverity): boolean {
  return severity === 'critical' || severity === 'warning';
}

/**
 * The moments of an alert's life that are notified: it fired, it resolved, it is still active
 * (`renotified`, the rule's `renotify_minutes`), a silence over it ended while it is still
 * active (`unsilenced`), it stopped flapping (`settled`). All but fired and resolved can
 * happen more than once per alert.
 */
export type AlertTransition = 'fired' | 'resolved' | 'renotified' | 'unsilenced' | 'settled';

/** POST /api/v1/alerts/:id/acknowledge. */
export const alertAcknowledgeSchema = z
  .strictObject(
    {
      comment: storableText(
        z
          .string({ error: 'must be a string' })
          .max(2000, { error: 'must be at most 2000 characters' }),
      )
        .optional()
        .meta({ description: 'Why, or who is on it; kept with the first acknowledgement.' }),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? 'is not a field of an acknowledgement'
          : issue.code === 'invalid_type'
            ? 'must be a JSON object'
            : undefined,
    },
  )
  .meta({ id: 'AlertAcknowledge' });

/**
 * The message of every notification channel: the API's alert item plus the transition (the
 * webhook body as is; Slack and email format their text from it).
 */
export type AlertNotification = { transition: AlertTransition; alert: AlertResponse };
