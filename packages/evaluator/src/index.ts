export { createAlertEvaluator } from './alert-evaluator.js';
export { createRulePoller } from './rule-poller.js';
export { createEvaluatorMetrics } from './evaluator-metrics.js';
export { createRuleGroupScheduler } from './rule-group-scheduler.js';
export { ruleGroupPartition } from './rule-group-schedule.js';
export { ruleGroupSampleMessages } from './rule-group-samples.js';
export { createRuleGroupMetrics } from './rule-group-metrics.js';
