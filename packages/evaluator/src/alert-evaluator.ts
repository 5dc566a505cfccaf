import type { BatchContext, ConsumedRecord, DeadLetterSink, RecordBatch } from '@monitor/bus';
import { createConsumerBatchPolicy } from '@monitor/bus';
import type { EvaluatorStore, NoDataSweepResult } from '@monitor/db';
import type { Logger } from '@monitor/platform';
import { isRetriable } from '@monitor/platform';
import type { SampleRecordDecoder } from '@monitor/schemas';
import { decodeSampleRecord } from '@monitor/schemas';
import type { Clock } from './batch-evaluator.js';
import { RulesBehindError, createBatchEvaluator } from './batch-evaluator.js';
import { PartitionMovedError, commitPast } from './commit-batch.js';
import { hostRecordsOf } from './decode-samples.js';
import type { EvaluatorMetrics } from './evaluator-metrics.js';
import { createPartitionCaches } from './partition-cache.js';
import type { RuleSource } from './rule-set.js';

export type AlertEvaluatorDeps = {
  rules: RuleSource;
  store: Pick<
    EvaluatorStore,
    | 'appliedOffset'
    | 'appliedPosition'
    | 'loadHosts'
    | 'commit'
    | 'dropOrphanStates'
    | 'sweepNoData'
  >;
  /** Where a record whose evaluation fails for good goes, with the reason. */
  deadLetters: DeadLetterSink;
  metrics: EvaluatorMetrics;
  logger: Logger;
  clock: Clock;
  /** Waits between attempts at one record before it is set aside. Default: setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Decodes a record's value. Default: `decodeSampleRecord`. */
  decodeRecord?: SampleRecordDecoder;
};

/**
 * A host's last-seen time of a watched metric is written at most this often per partition (on
 * the evaluator's clock), not on every batch; silences count from it plus this long, so a
 * no-data alert comes at most this late and never early.
 */
const defaultSeenRefreshMs = 15_000;

export type AlertEvaluatorOptions = {
  /** See defaultSeenRefreshMs (default 15 s). */
  noDataSeenRefreshMs?: number;
  /** Hosts remembered per partition; beyond it the least recently seen are forgotten (and reloaded when seen again). */
  maxCachedHostsPerPartition: number;
};

export type AlertEvaluator = {
  /**
   * Evaluates a batch of one partition and commits states, alerts and the next offset in one
   * transaction. Records below the stored offset are skipped (replays cost nothing). Throws to
   * have the batch redelivered: on a database error, or when another consumer advanced the
   * partition meanwhile (the redelivery then skips what it applied).
   */
  handleBatch(batch: RecordBatch, ctx: BatchContext): Promise<void>;
  /**
   * After rules were deleted, disabled or restarted: forgets what it cached under the old rules
   * and deletes the stored windows of rules that are no longer live. Returns how many.
   */
  rulesRemoved(): Promise<number>;
  /**
   * No data (wall clock, the evaluator's clock): acts once on each silence of a (rule, host)
   * whose host sent the rule's metric before and none for the rule's no_data_minutes, whether
   * or not its partition receives anything (see EvaluatorStore.sweepNoData). Call it
   * periodically; safe on every replica at once.
   */
  sweepNoData(): Promise<NoDataSweepResult>;
};

/** Attempts at a single record that fails for good before it is set aside. */
const attemptsPerRecord = 3;

export function createAlertEvaluator(
  deps: AlertEvaluatorDeps,
  options: AlertEvaluatorOptions,
): AlertEvaluator {
  const { store, metrics, logger: log, clock } = deps;
  const caches = createPartitionCaches(options);
  const seenRefreshMs = options.noDataSeenRefreshMs ?? defaultSeenRefreshMs;
  const evaluateBatch = createBatchEvaluator({
    rules: deps.rules,
    store,
    caches,
    metrics,
    logger: log,
    clock,
    decodeRecord: deps.decodeRecord ?? decodeSampleRecord,
    seenRefreshMs,
  });

  /**
   * A batch that fails for good is halved until the record that causes it is alone; after a
   * few attempts that record is dead-lettered and its offset committed, so one bad record never
   * holds back the partition (other hosts, other organizations) behind it. One of many hosts is
   * first evaluated host by host (the offset moving past the record only at its end, a host
   * evaluated again on a replay being a no-op by its watermark), so only the hosts that fail
   * are set aside.
   */
  function isolating(batch: RecordBatch, ctx: BatchContext) {
    return createConsumerBatchPolicy<ConsumedRecord>(
      {
        recordOf: (record) => record,
        process: (records) => evaluateBatch({ ...batch, records: [...records] }, ctx),
        splitRecord: ([record]) => hostRecordsOf(record as ConsumedRecord),
        processAlone: (host) => evaluateBatch({ ...batch, records: [host] }, ctx, false),
        setAside,
        commitPast: (record) => commitPast({ store, caches }, batch, record),
        // Errors that say nothing about the records: the whole batch is redelivered as it is.
        handlingOf: (err) =>
          err instanceof PartitionMovedError || err instanceof RulesBehindError || isRetriable(err)
            ? 'redeliver'
            : 'isolate',
        sleep: deps.sleep,
      },
      { attemptsBeforeSetAside: attemptsPerRecord, reattemptDelayMs: (attempt) => 100 * attempt },
    );
  }

  async function setAside(record: ConsumedRecord, err: Error): Promise<void> {
    log.error(
      { err, partition: record.partition, offset: record.offset, attempts: attemptsPerRecord },
      'record cannot be evaluated; dead-lettered, the partition moves on',
    );
    await deps.deadLetters.send(record, `evaluator: ${err.message}`);
    metrics.recordsSkipped('unprocessable', 1);
  }

  return {
    async handleBatch(batch, ctx) {
      // Every rule change answered before these records were accepted must apply to them: they
      // were accepted before they reached this process, so a check that starts now sees them.
      await deps.rules.refresh();
      await isolating(batch, ctx).handle(batch.records);
    },

    async sweepNoData() {
      const rules = deps.rules.current();
      const result = await store.sweepNoData({
        nowMs: clock.nowMs(),
        graceMs: seenRefreshMs,
        rules: rules.noDataRules.map((rule) => ({
          orgId: rule.orgId,
          ruleId: rule.id,
          metric: rule.metric,
          scope: rule.scope,
          noDataMinutes: rule.noDataMinutes ?? 0,
          noDataState: rule.noDataState,
          generation: rule.generation,
        })),
      });
      if (result.fired > 0) metrics.alertsFired(result.fired);
      if (result.resolved > 0) metrics.alertsResolved(result.resolved);
      if (result.fired + result.resolved > 0) log.info(result, 'no data swept');
      return result;
    },

    async rulesRemoved() {
      // The caches belong to the rules before the change (a batch would drop them anyway).
      caches.clear();
      return await store.dropOrphanStates();
    },
  };
}
