import type { BatchContext, RecordBatch } from '@monitor/bus';
import type { EvaluatorCommitResult, EvaluatorStore } from '@monitor/db';
import type { Logger } from '@monitor/platform';
import type { SampleRecordDecoder } from '@monitor/schemas';
import { PartitionMovedError, commitBatch, partitionAdvanced } from './commit-batch.js';
import type { DecodedHostSample } from './decode-samples.js';
import { decodeSamples } from './decode-samples.js';
import type { BatchWork } from './evaluate-samples.js';
import { evaluateSamples, newBatchWork } from './evaluate-samples.js';
import type { EvaluatorMetrics } from './evaluator-metrics.js';
import { loadHostWindows } from './load-host-windows.js';
import type { PartitionCache, PartitionCaches } from './partition-cache.js';
import { seenFreshness, seenToWrite } from './partition-cache.js';
import type { RuleSet, RuleSource } from './rule-set.js';

/** A checkpoint was written under rules this process has not loaded yet: retry once it has. */
export class RulesBehindError extends Error {
  override readonly name = 'RulesBehindError';
}

export type Clock = { nowMs(): number };

type BatchEvaluatorDeps = {
  rules: Pick<RuleSource, 'current' | 'poll'>;
  store: Pick<EvaluatorStore, 'appliedPosition' | 'loadHosts' | 'commit'>;
  caches: PartitionCaches;
  metrics: EvaluatorMetrics;
  logger: Logger;
  clock: Clock;
  decodeRecord: SampleRecordDecoder;
  /** See AlertEvaluatorOptions.noDataSeenRefreshMs. */
  seenRefreshMs: number;
};

/**
 * Evaluates a batch of one partition: decodes its fresh records, loads the hosts it does not
 * know, evaluates their samples and commits the outcome with the next offset in one transaction.
 */
export function createBatchEvaluator(deps: BatchEvaluatorDeps) {
  const { store, caches, clock } = deps;

  /**
   * Evaluates `batch` and commits it in one transaction; throws to have it redelivered.
   * `advance` false: the offset stays at the batch's last record (one host of a record
   * evaluated alone, the record's other hosts still to come).
   *
   * The partition's applied position is read first, unless this process committed the
   * partition's last batch under the current rules: the commit checks that position under its
   * lock anyway, and a batch that waits for its commit (monitor all's ingest does) saves a round
   * trip. When the position moved meanwhile (another replica, a no-data sweep), the commit
   * writes nothing and the batch is evaluated again from the position read.
   */
  async function evaluateBatch(
    batch: RecordBatch,
    ctx: BatchContext,
    advance = true,
  ): Promise<void> {
    const startedMs = clock.nowMs();
    const { partition } = batch;
    const known = caches.trustedPosition(partition, deps.rules.current());
    const position = known ?? (await store.appliedPosition(partition));
    const { nextOffset: storedOffset, revision } = position;
    // A stored offset past the log's end belongs to an earlier log of the topic (created
    // again): nothing of this log was applied, so nothing is skipped as a replay.
    const logRestarted = storedOffset > batch.logEndOffset;
    const appliedOffset = logRestarted ? 0 : storedOffset;
    const cached = caches.validAt(partition, position, deps.rules.current());
    const fresh = batch.records.filter((record) => Number(record.offset) >= appliedOffset);
    const replayed = batch.records.length - fresh.length;
    const last = fresh[fresh.length - 1];
    if (last === undefined) {
      if (replayed > 0) deps.metrics.recordsSkipped('replayed', replayed);
      return;
    }

    const { decoded, undecodable } = decodeSamples(fresh, deps.decodeRecord);
    const { rules, cache, work, loadedHosts } = await loadHosts(deps, partition, decoded, cached);
    evaluateSamples(work, decoded, rules, seenFreshness(cache, clock.nowMs(), deps.seenRefreshMs));

    if (ctx.isStale()) throw new PartitionMovedError(`partition ${partition} was reassigned`);
    const nextOffset = Number(last.offset) + (advance ? 1 : 0);
    const seenAtMs = clock.nowMs();
    const { result, written } = await commitBatch(store, {
      partition,
      fromOffset: storedOffset,
      fromRevision: revision,
      nextOffset,
      work,
      rules,
      seen: seenToWrite(work, cache, seenAtMs, deps.seenRefreshMs),
      seenAtMs,
    });
    if (result.outcome === 'offset-moved') {
      caches.drop(partition);
      // Evaluated from this process's own last position: again, from the one stored.
      if (known !== undefined) return await evaluateBatch(batch, ctx, advance);
      throw partitionAdvanced(partition, result.storedOffset);
    }

    if (deps.rules.current() === rules) {
      caches.keepCommitted(partition, cache, {
        nextOffset,
        revision,
        rules,
        work,
        reset: result.reset,
        seenAtMs,
      });
    } else {
      // The rules changed during the batch: its windows may belong to a removed rule.
      caches.drop(partition);
    }

    reportBatch(deps, {
      batch,
      storedOffset,
      logRestarted,
      replayed,
      undecodable,
      loadedHosts,
      work,
      written,
      result,
      durationMs: clock.nowMs() - startedMs,
    });
  }

  return evaluateBatch;
}

/**
 * A new batch work under the current rules, with the batch's hosts loaded into it. Marks
 * written under newer rules (by a replica with newer rules: rules it knew and this process does
 * not yet would count as new here) make it catch up with the rules first and load again,
 * without the partition's cache.
 */
async function loadHosts(
  deps: Pick<BatchEvaluatorDeps, 'rules' | 'store' | 'caches' | 'logger'>,
  partition: number,
  decoded: readonly DecodedHostSample[],
  cached: PartitionCache | undefined,
): Promise<{
  rules: RuleSet;
  cache: PartitionCache | undefined;
  work: BatchWork;
  loadedHosts: number;
}> {
  const rules = deps.rules.current();
  const work = newBatchWork(rules);
  const { loaded, newestEpoch } = await loadHostWindows(deps, decoded, rules, cached, work);
  if (newestEpoch <= rules.epoch) return { rules, cache: cached, work, loadedHosts: loaded };
  await deps.rules.poll();
  const latest = deps.rules.current();
  if (newestEpoch > latest.epoch) {
    throw new RulesBehindError(`rules at epoch ${latest.epoch}, a checkpoint at ${newestEpoch}`);
  }
  deps.caches.drop(partition);
  const again = newBatchWork(latest);
  const reloaded = await loadHostWindows(deps, decoded, latest, undefined, again);
  return { rules: latest, cache: undefined, work: again, loadedHosts: reloaded.loaded };
}

/** Counts a committed batch and logs its summary line. */
function reportBatch(
  deps: { metrics: EvaluatorMetrics; logger: Logger },
  report: {
    batch: RecordBatch;
    storedOffset: number;
    logRestarted: boolean;
    replayed: number;
    undecodable: number;
    loadedHosts: number;
    work: BatchWork;
    written: { states: number; cleared: number; watermarks: number };
    result: Extract<EvaluatorCommitResult, { outcome: 'committed' }>;
    durationMs: number;
  },
): void {
  const { metrics, logger: log } = deps;
  const { batch, replayed, undecodable, work, result } = report;
  // Counted once committed: an attempt evaluated again (or redelivered) is not counted twice.
  if (replayed > 0) metrics.recordsSkipped('replayed', replayed);
  if (undecodable > 0) metrics.recordsSkipped('undecodable', undecodable);
  metrics.evaluated(work.evaluations);
  if (result.fired > 0) metrics.alertsFired(result.fired);
  if (result.resolved > 0) metrics.alertsResolved(result.resolved);
  const summary = {
    partition: batch.partition,
    records: batch.records.length,
    replayed,
    undecodable,
    evaluations: work.evaluations,
    loadedHosts: report.loadedHosts,
    statesWritten: report.written.states,
    statesCleared: report.written.cleared,
    watermarksWritten: report.written.watermarks,
    fired: result.fired,
    alreadyActive: result.alreadyActive,
    resolved: result.resolved,
    reset: result.reset.length,
    durationMs: report.durationMs,
  };
  if (report.logRestarted) {
    metrics.logRestarted();
    log.warn(
      {
        partition: batch.partition,
        storedOffset: report.storedOffset,
        logEndOffset: batch.logEndOffset,
      },
      'stored offset was past the end of the log (topic created again?); the partition starts afresh',
    );
  }
  if (work.events.length > 0) log.info(summary, 'batch evaluated');
  else log.debug(summary, 'batch evaluated');
}
