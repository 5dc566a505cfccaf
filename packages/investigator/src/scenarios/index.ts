/**
 * The incident scenarios the investigator is measured against (docs/investigations.md): test
 * code, exported as `@monitor/investigator/scenarios` for the tests of other packages and left
 * out of the build.
 */
export { buildScenarios } from './incident-scenarios.js';
export type { ExpectedCause, Scenario, ScenarioOptions, ScenarioRule } from './scenario.js';
export { scenarioIncident } from './scenario-incident.js';
export type { ScenarioIncident } from './scenario-incident.js';
export { simulateRule } from './simulate-rule.js';
export type { SimulatedFiring } from './simulate-rule.js';
