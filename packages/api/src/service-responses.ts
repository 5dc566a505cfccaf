import type { AlertRow, MetricBucketRow, ServiceDetailRow, ServiceRow } from '@monitor/db';
import type {
  AlertCondition,
  AlertResponse,
  AlertSeverity,
  AlertStatus,
  ServiceDetailResponse,
  ServiceMetricsQuery,
  ServiceMetricsResponse,
  ServiceResponse,
} from '@monitor/schemas';

/** Rows → wire: snake_case fields, instants as ISO 8601 UTC with `Z`. */
export function toServiceResponse(row: ServiceRow): ServiceResponse {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    last_seen: row.lastSeen.toISOString(),
    metrics: row.metrics,
    tags: row.tags,
  };
}

export function toAlertResponse(row: AlertRow): AlertResponse {
  return {
    id: row.id,
    rule_id: row.ruleId,
    rule_name: row.ruleName,
    service_id: row.serviceId,
    host: row.host,
    metric: row.metric,
    // The table's check constraints hold these columns to the wire enums.
    condition: row.condition as AlertCondition,
    threshold: row.threshold,
    severity: row.severity as AlertSeverity,
    status: row.status as AlertStatus,
    value: row.value,
    started_at: row.startedAt.toISOString(),
    fired_at: row.firedAt.toISOString(),
    resolved_at: row.resolvedAt === null ? null : row.resolvedAt.toISOString(),
    investigation_id: row.investigationId,
  };
}

export function toServiceDetailResponse(row: ServiceDetailRow): ServiceDetailResponse {
  return {
    ...toServiceResponse(row),
    snapshot_at: row.snapshot === undefined ? null : row.snapshot.time.toISOString(),
    // Snapshots hold what the ingest schema accepted, so they have the wire shape already.
    docker_containers: (row.snapshot?.containers ??
      []) as ServiceDetailResponse['docker_containers'],
    processes: (row.snapshot?.processes ?? []) as ServiceDetailResponse['processes'],
    active_alerts: row.activeAlerts.map(toAlertResponse),
  };
}

export function toServiceMetricsResponse(
  query: ServiceMetricsQuery,
  rows: readonly MetricBucketRow[],
): ServiceMetricsResponse {
  return {
    metric: query.metric,
    step: query.step,
    from: query.from.toISOString(),
    to: query.to.toISOString(),
    points: rows.map((row) => ({
      time: row.time.toISOString(),
      avg: row.avg,
      min: row.min,
      max: row.max,
      count: row.count,
    })),
  };
}
