import type { ConsumedRecord, RecordBatch } from '@monitor/bus';
import type {
  EvaluatorCommitResult,
  EvaluatorStateKey,
  EvaluatorStateRecord,
  EvaluatorStore,
  HostWatermarkRecord,
  SeenMetric,
} from '@monitor/db';
import type { BatchWork } from './evaluate-samples.js';
import { marksToJson } from './host-windows.js';
import type { PartitionCaches } from './partition-cache.js';
import type { RuleSet } from './rule-set.js';

/** The batch was not committed because its partition moved to another consumer. */
export class PartitionMovedError extends Error {
  override readonly name = 'PartitionMovedError';
}

export function partitionAdvanced(partition: number, storedOffset: number): PartitionMovedError {
  return new PartitionMovedError(
    `partition ${partition} advanced to ${storedOffset} by another consumer`,
  );
}

/** A batch's evaluation, to commit with the partition's next offset. */
type EvaluatedBatch = {
  partition: number;
  /** The position it was evaluated from: the commit writes nothing when it moved meanwhile. */
  fromOffset: number;
  fromRevision: number;
  nextOffset: number;
  work: BatchWork;
  rules: RuleSet;
  /** Last-seen times due a write, and when. */
  seen: readonly SeenMetric[];
  seenAtMs: number;
};

/**
 * Commits a batch's changed windows and marks, its alerts and the partition's next offset in
 * one transaction (see EvaluatorStore.commit). Returns the store's answer and how many states,
 * cleared states and watermarks it wrote.
 */
export async function commitBatch(
  store: Pick<EvaluatorStore, 'commit'>,
  batch: EvaluatedBatch,
): Promise<{
  result: EvaluatorCommitResult;
  written: { states: number; cleared: number; watermarks: number };
}> {
  const { work, rules, seen, seenAtMs } = batch;
  const { states, cleared, watermarks } = changesOf(work, rules);
  const ruleGenerations: Record<string, number> = {};
  for (const { ruleId } of [...states, ...cleared, ...work.events]) {
    const generation = rules.generationOf(ruleId);
    if (generation !== undefined) ruleGenerations[ruleId] = generation;
  }
  const result = await store.commit({
    partition: batch.partition,
    fromOffset: batch.fromOffset,
    fromRevision: batch.fromRevision,
    ...(seen.length > 0 ? { seen, seenAtMs } : {}),
    nextOffset: batch.nextOffset,
    states,
    cleared,
    watermarks,
    events: work.events,
    ruleGenerations,
  });
  const written = {
    states: states.length,
    cleared: cleared.length,
    watermarks: watermarks.length,
  };
  return { result, written };
}

/** The changed windows and marks as the store takes them: states and marks to upsert, keys to delete. */
function changesOf(work: BatchWork, rules: RuleSet) {
  const states: EvaluatorStateRecord[] = [];
  const cleared: EvaluatorStateKey[] = [];
  for (const [host, ruleIds] of work.changed) {
    for (const ruleId of ruleIds) {
      const key = { orgId: host.orgId, host: host.host, ruleId };
      const state = host.windows.get(ruleId);
      if (state === undefined) cleared.push(key);
      else states.push({ ...key, state });
    }
  }
  const watermarks: HostWatermarkRecord[] = [];
  for (const host of work.marked) {
    watermarks.push({ orgId: host.orgId, host: host.host, marks: marksToJson(host, rules) });
  }
  return { states, cleared, watermarks };
}

/** Commits past `record` with nothing else, unless a replay already did. */
export async function commitPast(
  deps: { store: Pick<EvaluatorStore, 'appliedOffset' | 'commit'>; caches: PartitionCaches },
  batch: RecordBatch,
  record: ConsumedRecord,
): Promise<void> {
  const storedOffset = await deps.store.appliedOffset(batch.partition);
  const nextOffset = Number(record.offset) + 1;
  if (storedOffset <= batch.logEndOffset && storedOffset >= nextOffset) return;
  const result = await deps.store.commit({
    partition: batch.partition,
    fromOffset: storedOffset,
    nextOffset,
    states: [],
    cleared: [],
    watermarks: [],
    events: [],
    ruleGenerations: {},
  });
  deps.caches.drop(batch.partition);
  if (result.outcome === 'offset-moved')
    throw partitionAdvanced(batch.partition, result.storedOffset);
}
