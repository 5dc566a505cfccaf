import type { Bus, Subscription } from '@monitor/bus';
import type { Database } from '@monitor/db';
import { createEvaluatorStore, loadLiveRules, ruleSetFingerprint } from '@monitor/db';
import { createAlertEvaluator, createEvaluatorMetrics, createRulePoller } from '@monitor/evaluator';
import { createConsumerLagReporter } from '@monitor/platform';
import type { SampleRecordDecoder } from '@monitor/schemas';
import type { BusConfig, ConsumerConfig, EvaluatorConfig } from '../config.js';
import { evaluatorGroupId } from '../consumer-groups.js';
import { stoppingAtMoveMarkers } from '../partition-move-markers.js';
import type { RoleContext } from '../role-context.js';
import type { SampleShards } from '../sample-shards.js';
import { shardServiceIdentities } from '../sample-shards.js';
import { startRuleGroupEvaluation } from './rule-group-evaluation.js';

/**
 * Consumes the samples topic in group `evaluator` (its own offsets: it never waits for the
 * writer) and evaluates every live rule on each sample. Before each batch it makes sure it knows
 * every rule change committed before the batch arrived (one fingerprint query shared by the
 * batches waiting for it), so a change answered by any api replica applies to every sample
 * accepted after it; between batches the rules are polled every EVALUATOR_RULE_POLL_MS.
 */
const maxCachedHostsPerEvaluator = 300_000;

/**
 * How often each replica looks for silent hosts (no_data_minutes is whole minutes, so a few
 * seconds late is within its precision). Every replica sweeps every partition: the bus does not
 * tell which partitions are assigned, a partition that receives nothing gets no batch to learn
 * it from, and the store makes concurrent sweeps safe (offset-row lock, one action per silence).
 */
const noDataSweepIntervalMs = 10_000;

export async function startAlertEvaluator(
  ctx: RoleContext,
  config: EvaluatorConfig &
    ConsumerConfig &
    Pick<BusConfig, 'SAMPLES_TOPIC' | 'SAMPLES_TOPIC_PARTITIONS'>,
  deps: {
    db: Database;
    /** Where the rule files' queries read samples, and where alerted hosts' services are. */
    shards: SampleShards;
    /** The samples topic's partition count: which partition, so shard, holds a host. */
    samplesPartitions: number;
    bus: Bus;
    /** Role `all`: the decoder its writer shares (the in-process bus hands both the same values). */
    decodeRecord?: SampleRecordDecoder;
  },
): Promise<Subscription> {
  const logger = ctx.logger.child({ component: 'evaluator' });
  const identities = shardServiceIdentities(deps.db, deps.shards, deps.samplesPartitions);
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
      store: createEvaluatorStore(
        deps.db,
        { groupId: evaluatorGroupId, topic: config.SAMPLES_TOPIC },
        { identities },
      ),
      deadLetters: deps.bus.deadLetters(),
      metrics,
      logger,
      clock: { nowMs: Date.now },
      decodeRecord: deps.decodeRecord,
    },
    // A few hundred bytes per host (its metric watermarks and its few windows that are not ok):
    // 300,000 hosts in all, split over the topic's partitions (50,000 each of Kafka's default 6).
    {
      maxCachedHostsPerPartition: Math.ceil(
        maxCachedHostsPerEvaluator / config.SAMPLES_TOPIC_PARTITIONS,
      ),
    },
  );
  await poller.start();
  ctx.shutdown.onShutdown('rule poller', () => poller.stop());
  // One sweep at a time: a slow one makes the next tick skip rather than queue.
  let sweeping: Promise<unknown> | undefined;
  const sweepTimer = setInterval(() => {
    sweeping ??= evaluator
      .sweepNoData()
      .catch((err: unknown) => logger.warn({ err }, 'no-data sweep failed; retried next time'))
      .finally(() => (sweeping = undefined));
  }, noDataSweepIntervalMs);
  sweepTimer.unref();
  ctx.shutdown.onShutdown('no-data sweep', async () => {
    clearInterval(sweepTimer);
    await sweeping;
  });
  // Prometheus rule groups follow the partitions this consumer is assigned.
  const ruleGroups = startRuleGroupEvaluation(ctx, config, {
    db: deps.db,
    shards: deps.shards.all,
    identities,
    bus: deps.bus,
  });
  const lagReporter = createConsumerLagReporter(ctx.metrics.registry, evaluatorGroupId);
  // Where an alerted host's service is follows a partition that moved (`monitor shards move`).
  const handleAroundMarkers = stoppingAtMoveMarkers(
    'evaluator',
    { control: deps.db, shards: deps.shards, logger },
    (batch, batchCtx) => evaluator.handleBatch(batch, batchCtx),
  );
  let mapRead: Promise<void> = Promise.resolve();
  const subscription = await deps.bus.subscribe({
    groupId: evaluatorGroupId,
    topics: [config.SAMPLES_TOPIC],
    fromBeginning: true,
    handleBatch: async (batch, batchCtx) => {
      await mapRead;
      await handleAroundMarkers(batch, batchCtx);
    },
    // Partitions are independent (each its own cache and offset row), so every partition's batch
    // may be in flight at once: a sample then waits for its own partition's batch only, not for
    // the database round trips of all the others.
    partitionsConsumedConcurrently: config.SAMPLES_TOPIC_PARTITIONS,
    // With sample shards, a batch whose alert needs a shard that is away pauses its partition
    // only (all of a partition's hosts are on one shard): the others' are evaluated meanwhile.
    // So does a partition waiting at a move's marker, back within a second of the switch.
    ...(identities === undefined
      ? {}
      : { pauseFailingPartitions: true, retryInitialMs: 100, retryMaxMs: 1_000 }),
    sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
    heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
    onLag: (lag) => lagReporter.onLag(lag),
    onAssignment: (partitions) => {
      lagReporter.onAssignment(partitions);
      // A partition may have moved while another evaluator held it: the map as of now.
      if (identities !== undefined) {
        mapRead = deps.shards.reload().catch((err: unknown) => {
          logger.warn({ err }, 'the partition map could not be read again; keeping the last one');
        });
      }
      ruleGroups.onAssignment(partitions);
    },
  });
  ctx.shutdown.onShutdown('evaluator consumer', () => subscription.stop());
  return subscription;
}
