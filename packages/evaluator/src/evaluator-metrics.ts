import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

/** What the evaluator counts. */
export type EvaluatorMetrics = {
  /** (rule, host) evaluations of one batch: one per sample per rule that applies to it. */
  evaluated(evaluations: number): void;
  alertsFired(count: number): void;
  alertsResolved(count: number): void;
  /**
   * Records passed over: already applied (a replay), not a sample message (dead-lettered by the
   * writer), or one whose evaluation fails for good (set aside to the dead letters).
   */
  recordsSkipped(reason: 'replayed' | 'undecodable' | 'unprocessable', count: number): void;
  /** A partition whose stored offset was past the end of its log started afresh. */
  logRestarted(): void;
};

/** The evaluator's figures in `registry`, and the gauge of the live rule set the poller sets. */
export function createEvaluatorMetrics(registry: Registry): EvaluatorMetrics & { rules: Gauge } {
  const evaluations = new Counter({
    name: 'evaluator_evaluations_total',
    help: 'Rule evaluations: one per sample per rule that applies to it.',
    registers: [registry],
  });
  const transitions = new Counter({
    name: 'evaluator_alert_transitions_total',
    help: 'Alerts fired and resolved by this evaluator.',
    labelNames: ['transition'],
    registers: [registry],
  });
  const skipped = new Counter({
    name: 'evaluator_records_skipped_total',
    help: 'Records passed over: already applied (replayed), undecodable (the writer dead-letters them), or unprocessable (evaluation failed for good; dead-lettered).',
    labelNames: ['reason'],
    registers: [registry],
  });
  const logRestarts = new Counter({
    name: 'evaluator_log_restarts_total',
    help: 'Partitions whose stored offset was past the end of the log (an earlier log of the topic): offsets started afresh.',
    registers: [registry],
  });
  const rules = new Gauge({
    name: 'evaluator_rules',
    help: 'Live alert rules in this evaluator’s current rule set.',
    registers: [registry],
  });
  return {
    rules,
    evaluated: (count) => evaluations.inc(count),
    alertsFired: (count) => transitions.inc({ transition: 'fired' }, count),
    alertsResolved: (count) => transitions.inc({ transition: 'resolved' }, count),
    recordsSkipped: (reason, count) => skipped.inc({ reason }, count),
    logRestarted: () => logRestarts.inc(),
  };
}
