export { PartitionMovedError, createAlertEvaluator } from './alert-evaluator.js';
export type {
  AlertEvaluator,
  AlertEvaluatorDeps,
  AlertEvaluatorOptions,
  Clock,
  EvaluatorMetrics,
  RuleSource,
} from './alert-evaluator.js';
export { createRulePoller } from './rule-poller.js';
export type { RulePoller, RulePollerOptions, RuleSetChange } from './rule-poller.js';
export { createRuleSet } from './rule-set.js';
export type { RuleGroup, RuleSet } from './rule-set.js';
export { evaluateSample, parseWindowState, ruleApplies, scopeMatches } from './rule-window.js';
export type { MetricSample, WindowEvent, WindowRule, WindowState } from './rule-window.js';
export { createEvaluatorMetrics } from './evaluator-metrics.js';
