import type { Verdict } from '../incident-evidence.js';
import { analyzeIncident } from '../analyze-incident.js';
import { buildScenarios } from './incident-scenarios.js';
import type { Cause, Scenario, ScenarioOptions } from './scenario.js';
import { scenarioHit } from './scenario-hit.js';
import { scenarioIncident } from './scenario-incident.js';

/** One scenario's analysis, in memory, with what the report and the tests judge. */
export type ScenarioRun = {
  scenario: Scenario;
  verdict: Verdict;
  /**
   * What the analysis stood on: `baseline`, `current_snapshots` or `none`, and
   * `baseline, no snapshot in it` when only the metric had a baseline.
   */
  basis: string;
  /** The first five hypotheses with their scores, as the first finding stores them. */
  ranked: (Cause & { score: number })[];
  hit: boolean;
};

/** Builds every scenario for `options` and runs the engine on it. */
export function runScenarios(options: ScenarioOptions): ScenarioRun[] {
  return buildScenarios(options).map((scenario) => {
    const { verdict, report } = analyzeIncident(scenarioIncident(scenario).input);
    const evidence = report.findings[0]?.evidence ?? {};
    const ranked = (evidence.ranked ?? []) as ScenarioRun['ranked'];
    const cause = (evidence.cause ?? null) as Cause | null;
    return {
      scenario,
      verdict,
      basis:
        evidence.consumer_basis === 'current_snapshots'
          ? `${String(evidence.basis)}, no snapshot in it`
          : String(evidence.basis),
      ranked,
      hit: scenarioHit(scenario, { cause, ranked }),
    };
  });
}
