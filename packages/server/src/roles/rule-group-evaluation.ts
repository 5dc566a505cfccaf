import type { Bus } from '@monitor/bus';
import type { Database } from '@monitor/db';
import type { ServiceIdentities } from '@monitor/db';
import { createRuleGroupStateStore } from '@monitor/db';
import {
  createRuleGroupMetrics,
  createRuleGroupScheduler,
  ruleGroupPartition,
  ruleGroupSampleMessages,
} from '@monitor/evaluator';
import { evaluateRuleGroup } from '@monitor/rules';
import { encodeBinarySampleMessage, encodeSampleRecord, sampleMessageKey } from '@monitor/schemas';
import type { BusConfig, EvaluatorConfig } from '../config.js';
import { writerGroupId } from '../consumer-groups.js';
import type { RoleContext } from '../role-context.js';
import type { SampleShard } from '../sample-shards.js';
import { shardedSeriesSource } from '../sample-shards.js';

/** How often the scheduler looks for groups whose slot came: the lateness of an evaluation. */
const tickMs = 250;
/** Series one rule's query may select (as the PromQL API's limit). */
const maxSeriesPerQuery = 100_000;

/** Partitions of the samples topic assigned to this replica, as the consumer reports them. */
type Assignment = { topic: string; partition: number }[];

/**
 * Prometheus rule groups, evaluated on schedule by the evaluator replica that holds the samples
 * topic's partition the group hashes to: the Kafka assignment of group `evaluator` (in-process:
 * every partition) decides ownership, so groups spread and move on scale-out and failover with
 * the partitions. Recorded series and ALERTS are published to the samples topic like a
 * remote-write. Feed it the consumer's assignment with `onAssignment`.
 */
export function startRuleGroupEvaluation(
  ctx: RoleContext,
  config: EvaluatorConfig & Pick<BusConfig, 'SAMPLES_TOPIC' | 'SAMPLES_TOPIC_PARTITIONS'>,
  deps: {
    db: Database;
    /** Where the rules' queries read samples: every shard, merged. */
    shards: readonly SampleShard[];
    /** Where firing hosts' services are, when not in `db` (see createEvaluatorStore). */
    identities: ServiceIdentities | undefined;
    bus: Bus;
  },
): { onAssignment(partitions: Assignment): void } {
  const logger = ctx.logger.child({ component: 'rule-groups' });
  let owned = new Set<number>();
  const publisher = deps.bus.publisher({ packRecords: encodeSampleRecord });
  const metrics = createRuleGroupMetrics(ctx.metrics.registry);
  const scheduler = createRuleGroupScheduler(
    {
      store: createRuleGroupStateStore(deps.db, { identities: deps.identities }),
      evaluate: (orgId, group, state, timeMs) =>
        evaluateRuleGroup(group, state, timeMs, {
          source: shardedSeriesSource(deps.shards, orgId),
          engine: {
            lookbackDeltaMs: config.PROMQL_LOOKBACK_DELTA_MS,
            maxSamples: config.PROMQL_MAX_SAMPLES,
            maxSeries: maxSeriesPerQuery,
            timeoutMs: config.RULE_QUERY_TIMEOUT_MS,
          },
          externalLabels: {},
          externalUrl: config.PUBLIC_URL ?? '',
        }),
      writeSamples: async (group, evaluation, timeMs) => {
        const messages = ruleGroupSampleMessages(group.orgId, evaluation, timeMs, Date.now());
        if (messages.length === 0) return;
        await publisher.publish(
          config.SAMPLES_TOPIC,
          messages.map((message) => ({
            key: sampleMessageKey(message),
            value: encodeBinarySampleMessage(message),
          })),
        );
      },
      owns: (group) => owned.has(ruleGroupPartition(group, config.SAMPLES_TOPIC_PARTITIONS)),
      awaitWrites: async () => {
        const stored = await deps.bus.admin.awaitConsumed(
          writerGroupId,
          config.SAMPLES_TOPIC,
          config.RULE_GROUP_WRITE_WAIT_MS,
        );
        if (!stored) metrics.writeWaitExpired();
      },
      clock: { nowMs: Date.now },
      logger,
      onEvaluated: metrics.onEvaluated,
    },
    {
      defaultIntervalMs: config.RULE_EVALUATION_INTERVAL_SECONDS * 1000,
      refreshIntervalMs: config.EVALUATOR_RULE_POLL_MS,
      maxConcurrentEvaluations: config.RULE_GROUP_MAX_CONCURRENT_EVALUATIONS,
      resendDelayMs: config.NOTIFIER_ALERTMANAGER_RESEND_MS,
    },
  );
  const ticks = new Set<Promise<void>>();
  const timer = setInterval(() => {
    const tick = scheduler
      .tick()
      .catch((err: unknown) =>
        logger.warn({ err }, 'rule groups could not be listed; retried at the next tick'),
      )
      .finally(() => ticks.delete(tick));
    ticks.add(tick);
  }, tickMs);
  timer.unref();
  ctx.shutdown.onShutdown('rule group evaluation', async () => {
    clearInterval(timer);
    await Promise.all(ticks);
    await publisher.close();
  });
  return {
    onAssignment(partitions) {
      owned = new Set(
        partitions.filter((p) => p.topic === config.SAMPLES_TOPIC).map((p) => p.partition),
      );
      logger.info({ partitions: [...owned].sort((a, b) => a - b) }, 'rule group partitions');
    },
  };
}
