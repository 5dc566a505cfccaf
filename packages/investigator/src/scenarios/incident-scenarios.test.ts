import { ingestPayloadSchema } from '@monitor/schemas';
import { describe, expect, it } from 'vitest';
import { analyzeIncident } from '../analyze-incident.js';
import { buildScenarios } from './incident-scenarios.js';
import type { Scenario } from './scenario.js';
import { scenarioIncident } from './scenario-incident.js';
import { simulateRule } from './simulate-rule.js';

const endMs = Date.parse('2025-06-01T12:00:30Z');

function isRight(scenario: Scenario, verdict: { kind: string; subject: string | null }): boolean {
  const { expected } = scenario;
  return expected.kind === 'inconclusive'
    ? verdict.kind === 'inconclusive'
    : verdict.kind === expected.kind && verdict.subject === expected.subject;
}

describe('incident scenarios', () => {
  const scenarios = buildScenarios({ endMs });

  it('cover at least ten incidents, among them the required kinds', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(10);
    const expected = scenarios.map((s) => s.expected.kind);
    for (const kind of [
      'process',
      'container',
      'deploy',
      'container_restart',
      'fleet_wide',
      'flapping_rule',
      'resource_trend',
      'inconclusive',
    ]) {
      expect(expected).toContain(kind);
    }
  });

  it('are valid ingest payloads ending at endMs', () => {
    for (const scenario of scenarios) {
      for (const payload of scenario.payloads) {
        expect(ingestPayloadSchema.safeParse(payload).success).toBe(true);
      }
      const last = scenario.payloads[scenario.payloads.length - 1];
      expect(Date.parse(last?.timestamp ?? '')).toBe(Math.floor(endMs / 60_000) * 60_000);
    }
  });

  it('are deterministic for a seed and differ between seeds', () => {
    expect(buildScenarios({ endMs })).toEqual(scenarios);
    expect(buildScenarios({ endMs, seed: 7 })[0]?.payloads).not.toEqual(scenarios[0]?.payloads);
  });

  it('fire their rule once on the investigated host, except the flapping one', () => {
    for (const scenario of scenarios) {
      const points = scenario.payloads
        .filter((p) => p.host === scenario.host)
        .map((p) => ({
          timeMs: Date.parse(p.timestamp ?? ''),
          value: p.metrics[scenario.rule.metric] ?? 0,
        }));
      const firings = simulateRule(scenario.rule, points).length;
      if (scenario.expected.kind === 'flapping_rule') expect(firings).toBeGreaterThanOrEqual(5);
      else expect(firings, scenario.name).toBe(1);
    }
  });

  it.each([20_240_601, 1, 2, 3])(
    'names the expected cause in at least nine of ten and the unexplained spike inconclusive (seed %i)',
    (seed) => {
      const results = buildScenarios({ endMs: endMs + seed * 60_000, seed }).map((scenario) => {
        const { verdict } = analyzeIncident(scenarioIncident(scenario).input);
        return { scenario, verdict, right: isRight(scenario, verdict) };
      });
      const right = results.filter((r) => r.right).length;
      expect(
        right / results.length,
        JSON.stringify(results.filter((r) => !r.right).map((r) => [r.scenario.name, r.verdict])),
      ).toBeGreaterThanOrEqual(0.9);
      const unexplained = results.find((r) => r.scenario.name === 'unexplained-spike');
      expect(unexplained?.verdict.kind).toBe('inconclusive');
      for (const { verdict } of results) {
        if (verdict.kind !== 'inconclusive') expect(verdict.confidence).toBeGreaterThanOrEqual(0.4);
      }
    },
  );
});

describe('simulateRule', () => {
  const rule = { condition: 'greater_than' as const, threshold: 10, duration_minutes: 2 };
  const at = (minute: number, value: number) => ({ timeMs: minute * 60_000, value });

  it('fires once the condition held for the duration and resolves on the first good sample', () => {
    expect(
      simulateRule(rule, [at(0, 5), at(1, 11), at(2, 12), at(3, 13), at(4, 14), at(5, 9)]),
    ).toEqual([{ startedAtMs: 60_000, firedAtMs: 180_000, resolvedAtMs: 300_000, value: 13 }]);
  });

  it('clears a pending window on one good sample', () => {
    expect(simulateRule(rule, [at(0, 11), at(1, 12), at(2, 9), at(3, 11), at(4, 12)])).toEqual([]);
  });
});
