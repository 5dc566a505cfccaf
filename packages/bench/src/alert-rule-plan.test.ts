import { describe, expect, it } from 'vitest';
import { conditionHolds } from '@monitor/schemas';
import {
  fleetValueRange,
  planFleetRules,
  planProbeRules,
  probeBreachValue,
  probeClearValue,
} from './alert-rule-plan.js';
import { createFleet, fleetMetricNames } from './fleet.js';

type FleetPayload = { metrics: Record<string, number>; tags: Record<string, string> };

/** Every host of a fleet, as it sends itself. */
function fleetPayloads(hostCount: number): FleetPayload[] {
  const fleet = createFleet({ hostCount, baseTimeMs: Date.UTC(2026, 0, 1) });
  const bodies = fleet.createBodySource({ payloadsPerRequest: 1, slots: 1 });
  return Array.from(
    { length: hostCount },
    () => JSON.parse(bodies.next(0).toString('utf8')) as FleetPayload,
  );
}

const scopeMatches = (scope: Record<string, string> | undefined, tags: Record<string, string>) =>
  Object.entries(scope ?? {}).every(([key, value]) => tags[key] === value);

describe('planFleetRules', () => {
  const rules = planFleetRules(996);

  it('plans rules no value of the fleet’s range breaches, on the fleet’s metrics only', () => {
    const { min, max } = fleetValueRange;
    const values = [min, 0.1, 33.3, 50, 99.9, max];
    for (const rule of rules) {
      expect(fleetMetricNames).toContain(rule.metric);
      for (const value of values) {
        expect(conditionHolds(rule.condition, value, rule.threshold)).toBe(false);
      }
    }
  });

  it('never breaches on what the fleet actually sends', () => {
    const breaches: string[] = [];
    const missing = new Set<string>();
    for (const payload of fleetPayloads(200)) {
      for (const rule of rules) {
        const value = payload.metrics[rule.metric];
        if (value === undefined) missing.add(rule.metric);
        else if (conditionHolds(rule.condition, value, rule.threshold))
          breaches.push(`${rule.name} on ${value}`);
      }
    }
    expect(missing).toEqual(new Set());
    expect(breaches).toEqual([]);
  });

  it('applies most rules to every host and scopes the rest to hosts that exist', () => {
    const scoped = rules.filter((rule) => rule.scope !== undefined);
    expect(scoped.length).toBeGreaterThan(0);
    expect(scoped.length).toBeLessThan(rules.length / 4);
    const payloads = fleetPayloads(60);
    for (const rule of scoped) {
      expect(payloads.some((payload) => scopeMatches(rule.scope, payload.tags))).toBe(true);
      expect(payloads.every((payload) => scopeMatches(rule.scope, payload.tags))).toBe(false);
    }
  });

  it('gives every rule its own name and a duration the API accepts', () => {
    expect(new Set(rules.map((rule) => rule.name)).size).toBe(rules.length);
    expect(
      rules.every((r) => Number.isInteger(r.duration_minutes) && r.duration_minutes >= 0),
    ).toBe(true);
  });
});

describe('planProbeRules', () => {
  it('scopes one rule to each probe host, breached by the breach value only', () => {
    const rules = planProbeRules(['probe-0', 'probe-1'], 1);
    expect(rules.map((rule) => rule.scope)).toEqual([
      { bench_probe: 'probe-0' },
      { bench_probe: 'probe-1' },
    ]);
    for (const rule of rules) {
      expect(rule.duration_minutes).toBe(1);
      expect(conditionHolds(rule.condition, probeBreachValue, rule.threshold)).toBe(true);
      expect(conditionHolds(rule.condition, probeClearValue, rule.threshold)).toBe(false);
      expect(fleetPayloads(20).some((p) => scopeMatches(rule.scope, p.tags))).toBe(false);
    }
  });
});
