import type { InvestigationDetailRow, InvestigationRow } from '@monitor/db';
import type {
  InvestigationAnalysis,
  InvestigationDetailResponse,
  InvestigationFinding,
  InvestigationRecommendation,
  InvestigationResponse,
  InvestigationStatus,
  InvestigationTimelineEvent,
} from '@monitor/schemas';

/**
 * Row → wire. The jsonb columns hold an `InvestigationReport` as the investigator completed it
 * (the detail's shapes already), and the status column is held to the enum by its check
 * constraint.
 */
export function toInvestigationResponse(row: InvestigationRow): InvestigationResponse {
  return {
    id: row.id,
    alert_id: row.alertId,
    service_id: row.serviceId,
    title: row.title,
    status: row.status as InvestigationStatus,
    findings: row.findings as InvestigationFinding[],
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
    analysis: (row.analysis ?? null) as InvestigationAnalysis | null,
    timeline: row.timeline as InvestigationTimelineEvent[],
    recommendations: row.recommendations as InvestigationRecommendation[],
  };
}
