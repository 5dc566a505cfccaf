import type { MetricBucketRow, ServiceDetailRow, ServiceRow } from '@monitor/db';
import { isoTime } from './iso-time.js';
import { toAlertResponse } from '@monitor/schemas';
import type {
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
      time: isoTime(row.timeMs),
      avg: row.avg,
      min: row.min,
      max: row.max,
      count: row.count,
    })),
  };
}
