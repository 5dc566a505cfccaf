import type { LiveRule } from '@monitor/db';

/**
 * A rule as the evaluator loads it: "rule <id>" on `cpu_percent > 90` at once, critical, of
 * org_1, generation 0, with none of the rule options, unless `fields` say otherwise.
 */
export function buildLiveRule(fields: Partial<LiveRule> & Pick<LiveRule, 'id'>): LiveRule {
  return {
    orgId: 'org_1',
    name: `rule ${fields.id}`,
    metric: 'cpu_percent',
    condition: 'greater_than',
    threshold: 90,
    durationMinutes: 0,
    severity: 'critical',
    channels: [],
    scope: {},
    generation: 0,
    recoveryThreshold: null,
    keepFiringForMinutes: 0,
    noDataMinutes: null,
    noDataState: 'alerting',
    renotifyMinutes: null,
    messageTemplate: null,
    flapping: null,
    ...fields,
  };
}
