import { backoffMs } from './backoff.js';
import type {
  BatchContext,
  ConsumedRecord,
  RecordBatch,
  SubscribeOptions,
  Subscription,
} from './bus.js';
import type { BusLogger } from './bus-logger.js';
import { createConcurrencySlots } from './concurrency-slots.js';
import type { Group, InProcessLog, StoredRecord, Topic } from './in-process-log.js';
import { earliestOffset } from './in-process-log.js';
import { createWakeableWaits } from './wakeable-waits.js';

const subscriptionDefaults = {
  retryInitialMs: 50,
  retryMaxMs: 5_000,
  maxBatchRecords: 500,
  partitionsConsumedConcurrently: 1,
} as const;

/** What every partition loop of one subscription shares. */
type Consumer = {
  log: InProcessLog;
  group: Group;
  logger: BusLogger;
  options: SubscribeOptions;
  maxBatchRecords: number;
  retryInitialMs: number;
  retryMaxMs: number;
  slots: ReturnType<typeof createConcurrencySlots>;
  waits: ReturnType<typeof createWakeableWaits>;
  isRunning: () => boolean;
};

const ctx: BatchContext = { heartbeat: () => Promise.resolve(), isStale: () => false };

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
  const { groupId, fromBeginning } = subscribeOptions;
  const maxBatchRecords = subscribeOptions.maxBatchRecords ?? subscriptionDefaults.maxBatchRecords;
  if (subscribeOptions.topics.length === 0)
    throw new RangeError('subscribe needs at least one topic');
  if (!(maxBatchRecords >= 1)) throw new RangeError('maxBatchRecords must be at least 1');
  const group = log.getGroup(groupId);
  if (group.active) {
    throw new Error(`consumer group ${groupId} already has a subscription in this process`);
  }
  group.active = true;

  let running = true;
  const consumer: Consumer = {
    log,
    group,
    logger: logger.child({ groupId }),
    options: subscribeOptions,
    maxBatchRecords,
    retryInitialMs: subscribeOptions.retryInitialMs ?? subscriptionDefaults.retryInitialMs,
    retryMaxMs: subscribeOptions.retryMaxMs ?? subscriptionDefaults.retryMaxMs,
    slots: createConcurrencySlots(
      subscribeOptions.partitionsConsumedConcurrently ??
        subscriptionDefaults.partitionsConsumedConcurrently,
    ),
    waits: createWakeableWaits(),
    isRunning: () => running,
  };

  const consumers: Promise<void>[] = [];
  const assignment: { topic: string; partition: number }[] = [];
  for (const name of new Set(subscribeOptions.topics)) {
    const topic = log.getTopic(name);
    topic.groups.add(groupId);
    const committed = log.committedOffsets(group, topic);
    topic.partitions.forEach((partitionLog, partition) => {
      committed[partition] ??= fromBeginning ? earliestOffset(partitionLog) : partitionLog.end;
      consumers.push(consumePartition(consumer, topic, partition));
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
        consumer.waits.wakeAll();
        await Promise.all(consumers);
        subscribeOptions.onAssignment?.([]);
        group.active = false;
        onStopped(subscription);
      })()),
  };
  return subscription;
}

/** Hands the partition's records to the handler batch by batch, committing after each, until stopped. */
async function consumePartition(consumer: Consumer, topic: Topic, partition: number) {
  const { log, group, slots } = consumer;
  const partitionLog = topic.partitions[partition];
  if (partitionLog === undefined) return;
  const committed = log.committedOffsets(group, topic);
  while (consumer.isRunning()) {
    const next = Math.max(committed[partition] ?? 0, earliestOffset(partitionLog));
    if (next >= partitionLog.end) {
      await consumer.waits.waitForAppend(partitionLog);
      continue;
    }
    await slots.acquire();
    let handled = false;
    let last = next;
    let lastTimestampMs = 0;
    try {
      if (!consumer.isRunning()) break;
      const from = partitionLog.first + (next - earliestOffset(partitionLog));
      const stored = partitionLog.records.slice(from, from + consumer.maxBatchRecords);
      last = stored[stored.length - 1]?.offset ?? next;
      lastTimestampMs = stored[stored.length - 1]?.timestampMs ?? 0;
      handled = await handleUntilDone(consumer, {
        topic: topic.name,
        partition,
        records: stored.map((record) => toConsumedRecord(topic.name, partition, record)),
        logEndOffset: partitionLog.end,
      });
    } finally {
      slots.release();
    }
    if (!handled) break;
    log.commit(group, topic, partition, last + 1);
    consumer.options.onLag?.({
      topic: topic.name,
      partition,
      records: Math.max(0, partitionLog.end - last - 1),
      lastTimestampMs,
    });
  }
}

/**
 * Hands `batch` to the handler until it resolves (true), again after a backoff each time it
 * throws; false once the subscription stopped meanwhile.
 */
async function handleUntilDone(consumer: Consumer, batch: RecordBatch): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      await consumer.options.handleBatch(batch, ctx);
      return true;
    } catch (err) {
      const waitMs = backoffMs(attempt, consumer.retryInitialMs, consumer.retryMaxMs);
      consumer.logger.warn(
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
      await consumer.waits.sleep(waitMs);
      if (!consumer.isRunning()) return false;
    }
  }
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
