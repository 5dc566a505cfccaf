import { ingestPayloadSchema } from '@monitor/schemas';
import { describe, expect, it } from 'vitest';
import { snapshotConfidenceCap } from '../current-hypotheses.js';
import { buildScenarios } from './incident-scenarios.js';
import type { Scenario, ScenarioTrait } from './scenario.js';
import { scenarioHit } from './scenario-hit.js';
import { scenarioIncident } from './scenario-incident.js';
import { defaultSeed, reportEndMs } from './scenario-report.js';
import { runScenarios } from './scenario-suite.js';
import { simulateRule } from './simulate-rule.js';

const endMs = Date.parse('2025-06-01T12:00:30Z');

describe('incident scenarios', () => {
  const scenarios = buildScenarios({ endMs });

  it('cover at least twenty incidents, among them every cause kind and the required situations', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(20);
    expect(new Set(scenarios.map((s) => s.name)).size).toBe(scenarios.length);
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
    const withTrait = (trait: ScenarioTrait) =>
      scenarios.filter((s) => s.traits?.includes(trait) === true);
    expect(withTrait('first_seen').length).toBeGreaterThanOrEqual(5);
    expect(withTrait('noisy_neighbour').length).toBeGreaterThanOrEqual(3);
    expect(withTrait('several_causes').length).toBeGreaterThanOrEqual(3);
    for (const scenario of withTrait('several_causes')) {
      expect(scenario.expected).toMatchObject({
        topK: expect.any(Number),
        also: expect.any(Array),
      });
    }
    const noSnapshot = withTrait('no_snapshot');
    expect(noSnapshot.length).toBeGreaterThanOrEqual(1);
    for (const scenario of noSnapshot) {
      expect(scenario.expected.kind).toBe('inconclusive');
      for (const payload of scenario.payloads.filter((p) => p.host === scenario.host)) {
        expect(payload.processes ?? []).toEqual([]);
        expect(payload.docker_containers ?? []).toEqual([]);
      }
    }
  });

  it('start first-seen hosts less than the baseline before their alert', () => {
    for (const scenario of scenarios.filter((s) => s.traits?.includes('first_seen'))) {
      const own = scenario.payloads.filter((p) => p.host === scenario.host);
      const firstMs = Date.parse(own[0]?.timestamp ?? '');
      const { windows } = scenarioIncident(scenario);
      // Fewer than five points before the incident window: no baseline.
      expect(windows.incident.fromMs - firstMs, scenario.name).toBeLessThan(5 * 60_000);
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

  const defaultRuns = runScenarios({ endMs: reportEndMs, seed: defaultSeed });
  it.each(defaultRuns.map((run) => [run.scenario.name, run] as const))(
    '%s: ranks the expected cause as the scenario says, or abstains where expected',
    (_name, run) => {
      const { scenario, verdict, ranked } = run;
      expect(run.hit, JSON.stringify({ verdict, ranked })).toBe(true);
      if (scenario.traits?.includes('no_snapshot')) {
        expect(run.basis).toBe('none');
        expect(verdict).toEqual({ kind: 'inconclusive', subject: null, confidence: 0 });
      }
      if (run.basis !== 'baseline') {
        expect(verdict.confidence).toBeLessThanOrEqual(snapshotConfidenceCap);
      }
    },
  );

  it.each([1, 2, 3])('hit at least nine in ten and abstain where expected with seed %i', (seed) => {
    const runs = runScenarios({ endMs: reportEndMs + seed * 60_000, seed });
    const hits = runs.filter((r) => r.hit).length;
    expect(
      hits / runs.length,
      JSON.stringify(runs.filter((r) => !r.hit).map((r) => [r.scenario.name, r.verdict])),
    ).toBeGreaterThanOrEqual(0.9);
    for (const run of runs) {
      if (run.scenario.expected.kind === 'inconclusive') {
        expect(run.verdict.kind, run.scenario.name).toBe('inconclusive');
      }
      if (run.verdict.kind !== 'inconclusive') {
        expect(run.verdict.confidence).toBeGreaterThanOrEqual(0.4);
      }
      if (run.basis !== 'baseline') {
        expect(run.verdict.confidence).toBeLessThanOrEqual(snapshotConfidenceCap);
      }
    }
  });
});

describe('scenarioHit', () => {
  const [scenario] = buildScenarios({ endMs });
  const base = scenario as Scenario;
  const process = (subject: string) => ({ kind: 'process' as const, subject });

  it('wants the named cause for a top-1 expectation', () => {
    const hog = { ...base, expected: process('a') };
    expect(scenarioHit(hog, { cause: process('a'), ranked: [process('a')] })).toBe(true);
    expect(scenarioHit(hog, { cause: null, ranked: [process('a')] })).toBe(false);
    expect(scenarioHit(hog, { cause: process('b'), ranked: [process('b'), process('a')] })).toBe(
      false,
    );
  });

  it('wants every expected cause among the first k for a top-k expectation', () => {
    const two = { ...base, expected: { ...process('a'), topK: 2, also: [process('b')] } };
    expect(scenarioHit(two, { cause: null, ranked: [process('b'), process('a')] })).toBe(true);
    expect(
      scenarioHit(two, { cause: process('a'), ranked: [process('a'), process('c'), process('b')] }),
    ).toBe(false);
  });

  it('wants nothing named for an inconclusive expectation', () => {
    const none = { ...base, expected: { kind: 'inconclusive' as const } };
    expect(scenarioHit(none, { cause: null, ranked: [process('a')] })).toBe(true);
    expect(scenarioHit(none, { cause: process('a'), ranked: [process('a')] })).toBe(false);
  });
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
