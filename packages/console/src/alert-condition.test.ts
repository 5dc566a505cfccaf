import { describe, expect, it } from 'vitest';
import { describeAlertCondition } from './alert-condition.js';

const threshold = {
  reason: 'threshold' as const,
  metric: 'cpu_percent',
  condition: 'greater_than' as const,
  threshold: 90,
  labels: {},
  annotations: {},
};
const ruleFile = {
  ...threshold,
  metric: 'HostDown',
  condition: null,
  threshold: null,
  labels: { alertname: 'HostDown', instance: 'node-1:9100' },
};

describe('describeAlertCondition', () => {
  it("says a rule's condition, or the metric that went silent", () => {
    expect(describeAlertCondition(threshold)).toBe('cpu_percent greater_than 90');
    expect(describeAlertCondition({ ...threshold, reason: 'no_data' })).toBe(
      'no data for cpu_percent',
    );
  });

  it("says a rule file's alert by its summary, else by its labels", () => {
    expect(
      describeAlertCondition({ ...ruleFile, annotations: { summary: 'node-1 is down' } }),
    ).toBe('node-1 is down');
    expect(describeAlertCondition(ruleFile)).toBe('HostDown{instance="node-1:9100"}');
  });
});
