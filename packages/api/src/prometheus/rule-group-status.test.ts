import { describe, expect, it } from 'vitest';
import type { EvaluatedRuleGroup } from '@monitor/db';
import type { RuleGroupState } from '@monitor/rules';
import { ruleStateKeys, parseRuleGroup } from '@monitor/rules';
import { prometheusAlertSchema, prometheusRuleGroupSchema } from '@monitor/schemas';
import {
  goExponentFloat,
  prometheusActiveAlerts,
  prometheusRuleGroups,
} from './rule-group-status.js';

const definition = `name: node
rules:
  - alert: HostDown
    expr: up == 0
    for: 5m
    keep_firing_for: 1m
    labels:
      severity: page
    annotations:
      summary: "{{ $labels.instance }} down"
  - record: job:up:sum
    expr: sum by (job) (up)
`;

const t = Date.UTC(2026, 10, 25, 12, 0, 0);
const parsed = parseRuleGroup(definition);
const keys = parsed.ok ? ruleStateKeys(parsed.groups[0]!.rules) : [];
const down = {
  labels: { alertname: 'HostDown', instance: 'a:9100', severity: 'page' },
  annotations: { summary: 'a:9100 down' },
  activeAtMs: t - 600_000,
  firedAtMs: t - 300_000,
  resolvedAtMs: null,
  keepFiringSinceMs: null,
  value: 0,
};
const state: RuleGroupState = {
  rules: {
    [keys[0]!]: {
      alerts: [
        { ...down, state: 'firing' },
        {
          ...down,
          labels: { ...down.labels, instance: 'b:9100' },
          state: 'inactive',
          resolvedAtMs: t - 60_000,
        },
        {
          ...down,
          labels: { ...down.labels, instance: 'c:9100' },
          state: 'pending',
          activeAtMs: t - 1_500,
          firedAtMs: null,
        },
      ],
      writtenSeries: [],
    },
  },
};
const group: EvaluatedRuleGroup = {
  namespace: 'infra',
  name: 'node',
  definition,
  evaluation: {
    state,
    lastEvaluationMs: t,
    durationMs: 12.5,
    health: [
      { health: 'ok', lastError: null },
      { health: 'err', lastError: 'query timed out' },
    ],
  },
};

describe('prometheusRuleGroups', () => {
  it("writes a group and its rules as Prometheus 2.42's /api/v1/rules does", () => {
    const [written] = prometheusRuleGroups([group], 60_000, '');
    expect(prometheusRuleGroupSchema.parse(written)).toEqual(written);
    expect(written).toEqual({
      name: 'node',
      file: 'infra',
      interval: 60,
      limit: 0,
      evaluationTime: 0.0125,
      lastEvaluation: '2026-11-25T12:00:00Z',
      rules: [
        {
          state: 'firing',
          name: 'HostDown',
          query: 'up == 0',
          duration: 300,
          keepFiringFor: 60,
          labels: { severity: 'page' },
          annotations: { summary: '{{ $labels.instance }} down' },
          alerts: [
            {
              labels: down.labels,
              annotations: down.annotations,
              state: 'firing',
              activeAt: '2026-11-25T11:50:00Z',
              value: '0e+00',
            },
            {
              labels: { ...down.labels, instance: 'c:9100' },
              annotations: down.annotations,
              state: 'pending',
              activeAt: '2026-11-25T11:59:58.5Z',
              value: '0e+00',
            },
          ],
          health: 'ok',
          evaluationTime: 0,
          lastEvaluation: '2026-11-25T12:00:00Z',
          type: 'alerting',
        },
        {
          name: 'job:up:sum',
          query: 'sum by (job) (up)',
          health: 'err',
          lastError: 'query timed out',
          evaluationTime: 0,
          lastEvaluation: '2026-11-25T12:00:00Z',
          type: 'recording',
        },
      ],
    });
    expect(prometheusRuleGroups([group], 60_000, 'record')[0]?.rules.map((r) => r.type)).toEqual([
      'recording',
    ]);
    expect(prometheusRuleGroups([group], 60_000, 'alert')[0]?.rules.map((r) => r.type)).toEqual([
      'alerting',
    ]);
  });

  it('reports a group never evaluated as unknown, at Go’s zero time', () => {
    const [written] = prometheusRuleGroups([{ ...group, evaluation: undefined }], 15_000, '');
    expect(written).toMatchObject({
      interval: 15,
      evaluationTime: 0,
      lastEvaluation: '0001-01-01T00:00:00Z',
      rules: [
        { state: 'inactive', alerts: [], health: 'unknown' },
        { health: 'unknown', lastEvaluation: '0001-01-01T00:00:00Z' },
      ],
    });
  });
});

describe('prometheusActiveAlerts', () => {
  it('lists the pending and firing alerts, not the resolved ones', () => {
    const alerts = prometheusActiveAlerts([group]);
    for (const alert of alerts) expect(prometheusAlertSchema.parse(alert)).toEqual(alert);
    expect(alerts.map((a) => [a.labels['instance'], a.state])).toEqual([
      ['a:9100', 'firing'],
      ['c:9100', 'pending'],
    ]);
  });
});

describe('goExponentFloat', () => {
  it("formats as Go's strconv.FormatFloat(v, 'e', -1, 64)", () => {
    expect(goExponentFloat(1)).toBe('1e+00');
    expect(goExponentFloat(99)).toBe('9.9e+01');
    expect(goExponentFloat(0.125)).toBe('1.25e-01');
    expect(goExponentFloat(1.5e300)).toBe('1.5e+300');
    expect(goExponentFloat(-0)).toBe('-0e+00');
    expect(goExponentFloat(Number.NaN)).toBe('NaN');
    expect(goExponentFloat(Number.POSITIVE_INFINITY)).toBe('+Inf');
    expect(goExponentFloat(Number.NEGATIVE_INFINITY)).toBe('-Inf');
  });
});
