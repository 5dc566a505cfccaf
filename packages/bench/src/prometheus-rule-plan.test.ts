import { describe, expect, it } from 'vitest';
import { planPrometheusRuleGroups } from './prometheus-rule-plan.js';

describe('planPrometheusRuleGroups', () => {
  const groups = planPrometheusRuleGroups({
    rules: 1000,
    fleetWideRules: 10,
    services: 100,
    rulesPerFleetWideGroup: 10,
    intervalSeconds: 15,
  });

  it('plans the rules asked for: fleet-wide, per service, and the probe', () => {
    expect(groups.reduce((n, g) => n + g.rules, 0)).toBe(1000);
    expect(groups.map((g) => g.name)).toEqual([
      'fleet-0',
      ...Array.from({ length: 100 }, (_, i) => `svc-${i}`),
      'probes',
    ]);
    expect(groups.find((g) => g.name === 'svc-0')?.rules).toBe(10);
    expect(groups.find((g) => g.name === 'svc-99')?.rules).toBe(9);
    for (const group of groups) {
      expect(group.yaml.match(/^ {2}- alert: /gm)).toHaveLength(group.rules);
      expect(group.yaml).toContain('interval: 15s');
    }
  });

  it('scopes each service group to its service, and the fleet-wide group to none', () => {
    const svc = groups.find((g) => g.name === 'svc-42')!.yaml;
    const exprs = svc.match(/expr: '.*'/g) ?? [];
    expect(exprs.length).toBe(10);
    for (const expr of exprs) expect(expr).toContain('{service="svc-42"}');
    expect(groups[0]!.yaml).not.toContain('service="');
  });

  it('sets thresholds the fleet’s values (load 0–4, percentages 0–100) never cross', () => {
    const exprs = groups
      .filter((g) => g.name !== 'probes')
      .flatMap((g) => g.yaml.match(/expr: '.*'/g) ?? []);
    for (const expr of exprs) {
      const [, comparison, threshold] = /([<>]) (-?[\d.]+)'$/.exec(expr) ?? [];
      if (comparison === '>') expect(Number(threshold), expr).toBeGreaterThanOrEqual(0);
      else expect(Number(threshold), expr).toBeLessThan(0);
    }
  });
});
