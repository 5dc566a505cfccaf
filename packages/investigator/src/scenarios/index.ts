/**
 * The incident scenarios the investigator is measured against (docs/investigations.md): test
 * code, exported as `@monitor/investigator/scenarios` for the tests of other packages and left
 * out of the build.
 */
export { buildScenarios } from './incident-scenarios.js';
export type { Cause, Scenario } from './scenario.js';
export { scenarioHit } from './scenario-hit.js';
