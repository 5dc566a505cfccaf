import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { RuleGroupSchedulerDeps } from './rule-group-scheduler.js';

export type RuleGroupMetrics = {
  onEvaluated: NonNullable<RuleGroupSchedulerDeps['onEvaluated']>;
  /** An evaluation read before the samples accepted ahead of it were all stored. */
  writeWaitExpired(): void;
};

/** Prometheus rule groups' figures in `registry`. */
export function createRuleGroupMetrics(registry: Registry): RuleGroupMetrics {
  const evaluations = new Counter({
    name: 'rule_group_evaluations_total',
    help: 'Prometheus rule group evaluations saved by this replica.',
    registers: [registry],
  });
  const ruleEvaluations = new Counter({
    name: 'rule_group_rule_evaluations_total',
    help: 'Rules evaluated, one per rule of each saved group evaluation.',
    registers: [registry],
  });
  const failedRules = new Counter({
    name: 'rule_group_rule_failures_total',
    help: 'Rules whose evaluation failed (their health is err until the next one).',
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'rule_group_evaluation_duration_seconds',
    help: 'How long a rule group evaluation took, its queries and writes included.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const lags = new Histogram({
    name: 'rule_group_evaluation_lag_seconds',
    help: "How long after its slot a rule group's evaluation started.",
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const expiredWriteWaits = new Counter({
    name: 'rule_group_write_waits_expired_total',
    help: 'Rule group evaluations that read before the samples accepted ahead of them were all stored (RULE_GROUP_WRITE_WAIT_MS passed: the writers lag).',
    registers: [registry],
  });
  return {
    onEvaluated: ({ durationMs, lagMs, rules, failedRules: failed }) => {
      evaluations.inc();
      ruleEvaluations.inc(rules);
      if (failed > 0) failedRules.inc(failed);
      durations.observe(durationMs / 1000);
      lags.observe(Math.max(0, lagMs) / 1000);
    },
    writeWaitExpired: () => expiredWriteWaits.inc(),
  };
}
