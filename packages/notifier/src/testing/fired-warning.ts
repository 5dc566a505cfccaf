import type { AlertNotification } from '@monitor/schemas';

/** A `fired` notification of a warning alert (cpu_percent 95 over 90 on web-1), for unit tests. */
export const firedWarning: AlertNotification = {
  transition: 'fired',
  alert: {
    id: 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A',
    rule_id: 'rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0B',
    rule_name: 'cpu high',
    service_id: 'svc_01JDQ4ZK8X3N7Q9V5R2T6W8Y0C',
    host: 'web-1',
    metric: 'cpu_percent',
    condition: 'greater_than',
    threshold: 90,
    severity: 'warning',
    status: 'active',
    value: 95,
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
  },
};

/**
 * A `fired` notification of a rule file's alert (`HostDown` on node-1:9100), for unit tests.
 */
export const firedRuleFileAlert: AlertNotification = {
  transition: 'fired',
  alert: {
    ...firedWarning.alert,
    rule_name: 'HostDown',
    host: 'node-1',
    metric: 'HostDown',
    condition: null,
    threshold: null,
    severity: 'critical',
    value: 0,
    labels: { alertname: 'HostDown', instance: 'node-1:9100', job: 'node', severity: 'critical' },
    annotations: { summary: 'node-1:9100 is down', runbook: 'https://runbooks.example/host' },
  },
};
