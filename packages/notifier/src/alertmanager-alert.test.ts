import { describe, expect, it } from 'vitest';
import type { AlertNotification } from '@monitor/schemas';
import {
  alertmanagerLabels,
  consoleAlertsUrl,
  consoleRuleUrl,
  toAlertmanagerAlert,
  toLabelName,
} from './alertmanager-alert.js';
import { firedRuleFileAlert, firedWarning } from './testing/fired-warning.js';

const nowMs = Date.parse('2026-11-22T10:30:00.000Z');
const options = { nowMs, validForMs: 240_000, consoleUrl: 'https://monitor.example.com/' };

const resolved: AlertNotification = {
  transition: 'resolved',
  alert: { ...firedWarning.alert, status: 'resolved', resolved_at: '2026-11-22T10:40:00.000Z' },
};

describe('toAlertmanagerAlert', () => {
  it('maps a firing alert to startsAt = fired_at and endsAt = now + its validity', () => {
    const alert = toAlertmanagerAlert(firedWarning, {}, options);
    expect(alert).toEqual({
      labels: {
        alertname: 'cpu high',
        rule_id: firedWarning.alert.rule_id,
        host: 'web-1',
        metric: 'cpu_percent',
        severity: 'warning',
      },
      annotations: {
        summary: 'warning: cpu high on web-1',
        description: expect.stringContaining('cpu_percent is 95 (alert when > 90).') as string,
        alert_id: firedWarning.alert.id,
        value: '95',
      },
      startsAt: '2026-11-22T10:25:00.000Z',
      endsAt: '2026-11-22T10:34:00.000Z',
      generatorURL: `https://monitor.example.com/rules/${firedWarning.alert.rule_id}`,
    });
  });

  it("posts a rule file's alert with exactly its own labels and annotations, as Prometheus", () => {
    const alert = toAlertmanagerAlert(firedRuleFileAlert, {}, options);
    expect(alert).toEqual({
      labels: { alertname: 'HostDown', instance: 'node-1:9100', job: 'node', severity: 'critical' },
      annotations: { summary: 'node-1:9100 is down', runbook: 'https://runbooks.example/host' },
      startsAt: '2026-11-22T10:25:00.000Z',
      endsAt: '2026-11-22T10:34:00.000Z',
      generatorURL: `https://monitor.example.com/alerts?rule_id=${firedRuleFileAlert.alert.rule_id}&status=all`,
    });
    // Valid until the later of its evaluation's ValidUntil (4 group intervals) and 4 re-sends.
    const validUntilMs = Date.parse('2026-11-22T10:50:00.000Z');
    expect(toAlertmanagerAlert(firedRuleFileAlert, {}, { ...options, validUntilMs }).endsAt).toBe(
      '2026-11-22T10:50:00.000Z',
    );
    const resolvedRuleAlert: AlertNotification = {
      transition: 'resolved',
      alert: {
        ...firedRuleFileAlert.alert,
        status: 'resolved',
        resolved_at: '2026-11-22T10:41:00.000Z',
      },
    };
    expect(toAlertmanagerAlert(resolvedRuleAlert, {}, { ...options, validUntilMs })).toMatchObject({
      startsAt: '2026-11-22T10:25:00.000Z',
      endsAt: '2026-11-22T10:41:00.000Z',
    });
    expect(consoleAlertsUrl('https://m.example/', 'rul_1')).toBe(
      'https://m.example/alerts?rule_id=rul_1&status=all',
    );
  });

  it('ends a resolved alert at its resolution, with the same labels', () => {
    const alert = toAlertmanagerAlert(resolved, {}, options);
    expect(alert.startsAt).toBe('2026-11-22T10:25:00.000Z');
    expect(alert.endsAt).toBe('2026-11-22T10:40:00.000Z');
    expect(alert.labels).toEqual(toAlertmanagerAlert(firedWarning, {}, options).labels);
  });

  it('takes the description from the rule’s template, and omits the value of a no-data alert', () => {
    const noData: AlertNotification = {
      transition: 'fired',
      alert: { ...firedWarning.alert, value: null, reason: 'no_data' },
    };
    const alert = toAlertmanagerAlert(
      noData,
      { messageTemplate: '{{host}} silent ({{tags.team}})', tags: { team: 'db' } },
      options,
    );
    expect(alert.annotations['description']).toBe('web-1 silent (db)');
    expect(alert.annotations).not.toHaveProperty('value');
  });

  it('sends no generatorURL without a console URL', () => {
    const alert = toAlertmanagerAlert(firedWarning, {}, { nowMs, validForMs: 1 });
    expect(alert).not.toHaveProperty('generatorURL');
  });
});

describe('alertmanagerLabels', () => {
  it('adds the service’s tags under Prometheus label names, never over the alert’s own', () => {
    const labels = alertmanagerLabels(firedWarning, {
      'k8s.namespace': 'prod',
      '9zone': 'eu',
      host: 'spoofed',
      alertname: 'spoofed',
      empty: '',
    });
    expect(labels).toEqual({
      _9zone: 'eu',
      k8s_namespace: 'prod',
      alertname: 'cpu high',
      rule_id: firedWarning.alert.rule_id,
      host: 'web-1',
      metric: 'cpu_percent',
      severity: 'warning',
    });
  });

  it('keeps the first of two tags that map to one label name, in key order', () => {
    expect(alertmanagerLabels(firedWarning, { 'a-b': '2', 'a.b': '1' })['a_b']).toBe('2');
  });
});

describe('toLabelName', () => {
  it('makes any key a valid label name', () => {
    for (const key of ['', '1', 'a b', 'é', 'ok_1']) {
      expect(toLabelName(key)).toMatch(/^[a-zA-Z_][a-zA-Z0-9_]*$/);
    }
  });
});

describe('consoleRuleUrl', () => {
  it('joins the base URL and the rule’s path whatever the trailing slashes', () => {
    expect(consoleRuleUrl('https://m.example/console//', 'rul_1')).toBe(
      'https://m.example/console/rules/rul_1',
    );
  });
});
