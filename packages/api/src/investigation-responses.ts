import type { InvestigationDetailRow, InvestigationRow } from '@monitor/db';
import type {
  AnalysisResponse,
  FindingResponse,
  InvestigationDetailResponse,
  InvestigationResponse,
  InvestigationStatus,
  RecommendationResponse,
  TimelineEventResponse,
} from '@monitor/schemas';

/**
 * Row → wire. The jsonb columns hold the contract's shapes already (the investigator writes
 * them so), and the status column is held to the enum by its check constraint.
 */
export function toInvestigationResponse(row: InvestigationRow): InvestigationResponse {
  return {
    id: row.id,
    alert_id: row.alertId,
    service_id: row.serviceId,
    title: row.title,
    status: row.status as InvestigationStatus,
    findings: row.findings as FindingResponse[],
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    completed_at: row.completedAt === null ? null : row.completedAt.toISOString(),
  };
}

export function toInvestigationDetailResponse(
  row: InvestigationDetailRow,
): InvestigationDetailResponse {
  return {
    ...toInvestigationResponse(row),
    analysis: (row.analysis ?? null) as AnalysisResponse | null,
    timeline: row.timeline as TimelineEventResponse[],
    recommendations: row.recommendations as RecommendationResponse[],
  };
}
