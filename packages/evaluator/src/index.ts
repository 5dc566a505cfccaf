export { createAlertEvaluator } from './alert-evaluator.js';
export { createRulePoller } from './rule-poller.js';
export { createEvaluatorMetrics } from './evaluator-metrics.js';
