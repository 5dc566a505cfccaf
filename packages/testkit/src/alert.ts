import type { Alert, AlertResponse } from '@monitor/schemas';

/**
 * An alert as storage reads it: `buildAlertRuleDraft`'s rule ("cpu high", `cpu_percent > 90`,
 * critical) fired at 97 on web-1 at 10:25 after breaching since 10:20, active, not
 * acknowledged, silenced or flapping, no investigation, unless `fields` say otherwise.
 */
export function buildAlert(fields: Partial<Alert> = {}): Alert {
  return {
    id: 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0C',
    ruleId: 'rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0D',
    ruleName: 'cpu high',
    serviceId: 'svc_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A',
    host: 'web-1',
    metric: 'cpu_percent',
    condition: 'greater_than',
    threshold: 90,
    severity: 'critical',
    status: 'active',
    value: 97,
    startedAt: new Date('2026-11-22T10:20:00.000Z'),
    firedAt: new Date('2026-11-22T10:25:00.000Z'),
    resolvedAt: null,
    investigationId: null,
    reason: 'threshold',
    acknowledgedAt: null,
    acknowledgedBy: null,
    acknowledgementComment: null,
    silenced: false,
    flapping: false,
    labels: {},
    annotations: {},
    ...fields,
  };
}

/**
 * `buildAlert`'s alert as the API answers it, written out on its own rather than mapped, so a
 * test of the mapping has something to compare with; `fields` may hold matchers
 * (`expect.stringMatching(…)`) for what a test cannot know, such as ids and times.
 */
export function buildAlertResponse(fields: Partial<AlertResponse> = {}): AlertResponse {
  return {
    id: 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0C',
    rule_id: 'rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0D',
    rule_name: 'cpu high',
    service_id: 'svc_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A',
    host: 'web-1',
    metric: 'cpu_percent',
    condition: 'greater_than',
    threshold: 90,
    severity: 'critical',
    status: 'active',
    value: 97,
    started_at: '2026-11-22T10:20:00.000Z',
    fired_at: '2026-11-22T10:25:00.000Z',
    resolved_at: null,
    investigation_id: null,
    reason: 'threshold',
    acknowledged_at: null,
    acknowledged_by: null,
    acknowledgement_comment: null,
    silenced: false,
    flapping: false,
    labels: {},
    annotations: {},
    ...fields,
  };
}
