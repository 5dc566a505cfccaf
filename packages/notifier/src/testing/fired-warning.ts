import type { Alert, AlertNotification } from '@monitor/schemas';
import { toAlertResponse } from '@monitor/schemas';
import { buildAlert, buildAlertResponse } from '@monitor/testkit/builders';

/** A `fired` notification of a warning alert (cpu_percent 95 over 90 on web-1), for unit tests. */
export const firedWarning: AlertNotification = {
  transition: 'fired',
  alert: buildAlertResponse({ severity: 'warning', value: 95 }),
};

/** A rule file's alert (`HostDown` on node-1:9100) as storage reads it, for unit tests. */
export const ruleFileAlert: Alert = buildAlert({
  ruleName: 'HostDown',
  host: 'node-1',
  metric: 'HostDown',
  condition: null,
  threshold: null,
  value: 0,
  labels: { alertname: 'HostDown', instance: 'node-1:9100', job: 'node', severity: 'critical' },
  annotations: { summary: 'node-1:9100 is down', runbook: 'https://runbooks.example/host' },
});

/** A `fired` notification of `ruleFileAlert`, for unit tests. */
export const firedRuleFileAlert: AlertNotification = {
  transition: 'fired',
  alert: toAlertResponse(ruleFileAlert),
};
