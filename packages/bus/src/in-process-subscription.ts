import { backoffMs } from './backoff.js';
import type {
  BatchContext,
  ConsumedRecord,
  RecordBatch,
  SubscribeOptions,
  Subscription,
} from './bus.js';
import type { BusLogger } from './bus-logger.js';
import type { InProcessLog, PartitionLog, StoredRecord, Topic } from './in-process-log.js';
import { earliestOffset } from './in-process-log.js';

const subscriptionDefaults = {
  retryInitialMs: 50,
  retryMaxMs: 5_000,
  maxBatchRecords: 500,
  partitionsConsumedConcurrently: 1,
} as const;

/**
 * One consumer group's subscription on the in-process bus: a loop per partition hands batches of
 * up to `maxBatchRecords` to `handleBatch`, at most `partitionsConsumedConcurrently` at once;
 * commits only after the handler resolved; a throwing handler gets the same batch again after a
 * backoff (50 ms doubling to 5 s), nothing skipped. `onStopped` runs once every loop ended.
 */
export function startInProcessSubscription(
  log: InProcessLog,
  logger: BusLogger,
  subscribeOptions: SubscribeOptions,
  onStopped: (subscription: Subscription) => void,
): Subscription {
  const { groupId, handleBatch, fromBeginning } = subscribeOptions;
  const maxBatchRecords = subscribeOptions.maxBatchRecords ?? subscriptionDefaults.maxBatchRecords;
  const retryInitialMs = subscribeOptions.retryInitialMs ?? subscriptionDefaults.retryInitialMs;
  const retryMaxMs = subscribeOptions.retryMaxMs ?? subscriptionDefaults.retryMaxMs;
  const concurrency =
    subscribeOptions.partitionsConsumedConcurrently ??
    subscriptionDefaults.partitionsConsumedConcurrently;
  if (subscribeOptions.topics.length === 0)
    throw new RangeError('subscribe needs at least one topic');
  if (!(maxBatchRecords >= 1)) throw new RangeError('maxBatchRecords must be at least 1');
  const group = log.getGroup(groupId);
  if (group.active) {
    throw new Error(`consumer group ${groupId} already has a subscription in this process`);
  }
  group.active = true;
  const groupLog = logger.child({ groupId });

  let running = true;
  /** Woken (and removed) on stop: sleeping retries and idle partitions. */
  const wakers = new Set<() => void>();
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      wakers.add(done);
    });
  const waitForAppend = (partitionLog: PartitionLog): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        partitionLog.appendWaiters.delete(done);
        wakers.delete(done);
        resolve();
      };
      partitionLog.appendWaiters.add(done);
      wakers.add(done);
    });

  let slots = concurrency;
  const slotWaiters: (() => void)[] = [];
  const acquire = async (): Promise<void> => {
    if (slots > 0) {
      slots -= 1;
      return;
    }
    await new Promise<void>((resolve) => slotWaiters.push(resolve));
  };
  const release = (): void => {
    const next = slotWaiters.shift();
    if (next !== undefined) next();
    else slots += 1;
  };

  const ctx: BatchContext = { heartbeat: () => Promise.resolve(), isStale: () => false };

  async function handleWithRetry(batch: RecordBatch): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        await handleBatch(batch, ctx);
        return true;
      } catch (err) {
        const waitMs = backoffMs(attempt, retryInitialMs, retryMaxMs);
        groupLog.warn(
          {
            err,
            topic: batch.topic,
            partition: batch.partition,
            firstOffset: batch.records[0]?.offset,
            records: batch.records.length,
            attempt,
            retryInMs: waitMs,
          },
          'batch handler failed; redelivering the batch after a backoff',
        );
        await sleep(waitMs);
        if (!running) return false;
      }
    }
  }

  async function consume(topic: Topic, partition: number): Promise<void> {
    const partitionLog = topic.partitions[partition];
    if (partitionLog === undefined) return;
    const committed = log.committedOffsets(group, topic);
    while (running) {
      const next = Math.max(committed[partition] ?? 0, earliestOffset(partitionLog));
      if (next >= partitionLog.end) {
        await waitForAppend(partitionLog);
        continue;
      }
      await acquire();
      let handled = false;
      let last = next;
      let lastTimestampMs = 0;
      try {
        if (!running) break;
        const from = partitionLog.first + (next - earliestOffset(partitionLog));
        const stored = partitionLog.records.slice(from, from + maxBatchRecords);
        last = stored[stored.length - 1]?.offset ?? next;
        lastTimestampMs = stored[stored.length - 1]?.timestampMs ?? 0;
        handled = await handleWithRetry({
          topic: topic.name,
          partition,
          records: stored.map((record) => toConsumedRecord(topic.name, partition, record)),
          logEndOffset: partitionLog.end,
        });
      } finally {
        release();
      }
      if (!handled) break;
      log.commit(group, topic, partition, last + 1);
      subscribeOptions.onLag?.({
        topic: topic.name,
        partition,
        records: Math.max(0, partitionLog.end - last - 1),
        lastTimestampMs,
      });
    }
  }

  const consumers: Promise<void>[] = [];
  const assignment: { topic: string; partition: number }[] = [];
  for (const name of new Set(subscribeOptions.topics)) {
    const topic = log.getTopic(name);
    topic.groups.add(groupId);
    const committed = log.committedOffsets(group, topic);
    topic.partitions.forEach((partitionLog, partition) => {
      committed[partition] ??= fromBeginning ? earliestOffset(partitionLog) : partitionLog.end;
      consumers.push(consume(topic, partition));
      assignment.push({ topic: name, partition });
    });
  }
  // The only member of its group: every partition is its own until it stops.
  subscribeOptions.onAssignment?.(assignment);

  let stopping: Promise<void> | undefined;
  const subscription: Subscription = {
    stop: () =>
      (stopping ??= (async () => {
        running = false;
        for (const wake of [...wakers]) wake();
        await Promise.all(consumers);
        subscribeOptions.onAssignment?.([]);
        group.active = false;
        onStopped(subscription);
      })()),
  };
  return subscription;
}

function toConsumedRecord(topic: string, partition: number, record: StoredRecord): ConsumedRecord {
  return {
    topic,
    partition,
    offset: String(record.offset),
    key: record.key,
    value: record.value,
    headers: { ...record.headers },
    timestampMs: record.timestampMs,
  };
}
