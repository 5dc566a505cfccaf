import type { Bus, Subscription } from '@monitor/bus';
import type { Database } from '@monitor/db';
import {
  createEvaluatorStore,
  isTransientDbError,
  loadLiveRules,
  ruleSetFingerprint,
} from '@monitor/db';
import type { EvaluatorMetrics } from '@monitor/evaluator';
import { createAlertEvaluator, createRulePoller } from '@monitor/evaluator';
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { BusConfig, ConsumerConfig, EvaluatorConfig } from '../config.js';
import type { RoleContext } from '../role-context.js';
import { createLagGauge } from './lag-gauge.js';

export const evaluatorGroupId = 'evaluator';

/**
 * Consumes the samples topic in group `evaluator` (its own offsets: it never waits for the
 * writer) and evaluates every live rule on each sample. Before each batch it makes sure it knows
 * every rule change committed before the batch arrived (one fingerprint query shared by the
 * batches waiting for it), so a change answered by any api replica applies to every sample
 * accepted after it; between batches the rules are polled every EVALUATOR_RULE_POLL_MS.
 */
export async function startAlertEvaluator(
  ctx: RoleContext,
  config: EvaluatorConfig &
    ConsumerConfig &
    Pick<BusConfig, 'SAMPLES_TOPIC' | 'SAMPLES_TOPIC_PARTITIONS'>,
  deps: { db: Database; bus: Bus },
): Promise<Subscription> {
  const logger = ctx.logger.child({ component: 'evaluator' });
  const metrics = createEvaluatorMetrics(ctx.metrics.registry);
  const poller = createRulePoller({
    fingerprint: () => ruleSetFingerprint(deps.db),
    load: () => loadLiveRules(deps.db),
    intervalMs: config.EVALUATOR_RULE_POLL_MS,
    onError: (err) =>
      logger.warn({ err }, 'alert rules could not be reloaded; keeping the last set'),
    onChange: ({ rules, removedRuleIds }) => {
      metrics.rules.set(rules.ruleIds.size);
      if (removedRuleIds.length === 0) return;
      evaluator
        .rulesRemoved()
        .catch((err: unknown) => logger.warn({ err }, 'states of removed rules not dropped yet'));
    },
  });
  const evaluator = createAlertEvaluator(
    {
      rules: poller,
      store: createEvaluatorStore(deps.db, {
        groupId: evaluatorGroupId,
        topic: config.SAMPLES_TOPIC,
      }),
      deadLetters: deps.bus.deadLetters(),
      isTransient: isTransientDbError,
      metrics,
      logger,
      clock: { nowMs: Date.now },
    },
    // A few hundred bytes per host (its metric watermarks and its few windows that are not ok).
    { maxCachedHostsPerPartition: 50_000 },
  );
  await poller.start();
  ctx.shutdown.onShutdown('rule poller', () => poller.stop());
  const lag = createLagGauge(ctx.metrics.registry, evaluatorGroupId);
  const subscription = await deps.bus.subscribe({
    groupId: evaluatorGroupId,
    topics: [config.SAMPLES_TOPIC],
    fromBeginning: true,
    handleBatch: (batch, batchCtx) => evaluator.handleBatch(batch, batchCtx),
    // Partitions are independent (each its own cache and offset row), so every partition's batch
    // may be in flight at once: a sample then waits for its own partition's batch only, not for
    // the database round trips of all the others.
    partitionsConsumedConcurrently: config.SAMPLES_TOPIC_PARTITIONS,
    sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
    onLag: lag,
  });
  ctx.shutdown.onShutdown('evaluator consumer', () => subscription.stop());
  return subscription;
}

function createEvaluatorMetrics(registry: Registry): EvaluatorMetrics & { rules: Gauge } {
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
