import { backoffMs } from './backoff.js';
import type {
  BatchContext,
  Bus,
  BusMessage,
  ConsumedRecord,
  DeadLetterSink,
  EnsureTopicOptions,
  EnsureTopicResult,
  Publisher,
  PublisherOptions,
  RecordBatch,
  SubscribeOptions,
  Subscription,
} from './bus.js';
import type { BusLogger } from './bus-logger.js';
import { silentBusLogger } from './bus-logger.js';
import { BusUnavailableError, defaultRetryAfterSeconds } from './bus-unavailable-error.js';
import { createDeadLetterSink } from './dead-letter-sink.js';
import { partitionForKey } from './murmur2.js';
import { packByPartition } from './record-packing.js';

export type InProcessBusOptions = {
  /** Partitions of a topic created by its first publish or subscribe. Default 4. */
  defaultPartitions?: number;
  logger?: BusLogger;
  /** The clock stamped on records. Default `Date.now`. */
  now?: () => number;
  /**
   * Per topic, per partition: the offset its log resumes at (the first offset it assigns).
   * Consumers that keep their offsets elsewhere (in the database) pass the highest ones they
   * stored, so the records of this process never reuse the offsets of an earlier one and are
   * not mistaken for replays. Default: every log starts at 0.
   */
  resumeOffsets?: ReadonlyMap<string, readonly number[]>;
  /**
   * Where `deadLetters()` sends records. Default: the `<topic>.dlq` topic of this bus, which lives
   * in memory like everything here; pass a durable sink (a database table) to keep them.
   */
  deadLetters?: DeadLetterSink;
};

const inProcessBusDefaults = {
  defaultPartitions: 4,
  publishTimeoutMs: 5_000,
  retryInitialMs: 50,
  retryMaxMs: 5_000,
  maxBatchRecords: 500,
  partitionsConsumedConcurrently: 1,
} as const;

type StoredRecord = {
  offset: number;
  key: string;
  value: Buffer;
  headers: Record<string, string>;
  timestampMs: number;
};

type PartitionLog = {
  /** `records[first]` is the earliest retained record; offsets are contiguous from there. */
  records: StoredRecord[];
  first: number;
  /** The offset the next record gets. */
  end: number;
  /** Called (and removed) on the next append. */
  appendWaiters: Set<() => void>;
};

type Topic = {
  name: string;
  partitions: PartitionLog[];
  /** Every group that ever subscribed: retention keeps what any of them has not consumed. */
  groups: Set<string>;
};

type AckWaiter = { offset: number; resolve: () => void; cancelled: boolean };

type Group = {
  id: string;
  /** Per topic, per partition: the next offset to consume. Kept across subscriptions. */
  committed: Map<string, number[]>;
  active: boolean;
  /** Per `topic\u0000partition`, in offset order: publishes waiting for this group. */
  ackWaiters: Map<string, AckWaiter[]>;
};

/**
 * The bus for the single-process embedded mode (role `all` without KAFKA_BROKERS): the same
 * `Publisher` / `subscribe` contract as the Kafka bus, in memory.
 *
 * What it does: topics of N partitions, a record's partition chosen by Kafka's murmur2 of its
 * key (same key, same partition, in order); every consumer group gets every record; per-group
 * committed offsets, advanced only after `handleBatch` resolved; a throwing handler gets the
 * same batch again after a backoff (50 ms doubling to 5 s), nothing skipped; `publish` resolves
 * once the messages are appended, or, with `ackAfterConsumedBy`, once each listed group's
 * handler succeeded for them.
 *
 * What it does NOT guarantee:
 * - Durability: everything lives in this process's memory. A crash or restart loses every
 *   record not yet handled, and committed offsets are forgotten (`resumeOffsets` starts the logs
 *   past the offsets the consumers stored durably themselves). A plain `publish` means "queued
 *   in memory", not "stored"; only `ackAfterConsumedBy: ['writer']` (the group that writes to
 *   the database) makes an acknowledgement mean "stored", which is what a 200 must mean.
 * - Scale: one consumer per group (a second `subscribe` with an active group id throws); no
 *   rebalances (`isStale()` is always false, `heartbeat()` does nothing).
 * - Bounded memory: records are dropped once every group that ever subscribed to the topic has
 *   consumed them; records of a topic no group subscribed to yet are all kept. Subscribe before
 *   publishing. A new group with `fromBeginning` starts at the earliest record still kept.
 * - Isolation: consumers get the publisher's `value` buffers, not copies; treat them as read-only.
 */
export function createInProcessBus(options: InProcessBusOptions = {}): Bus {
  const defaultPartitions = options.defaultPartitions ?? inProcessBusDefaults.defaultPartitions;
  const logger = (options.logger ?? silentBusLogger).child({ bus: 'in-process' });
  const now = options.now ?? Date.now;
  const topics = new Map<string, Topic>();
  const groups = new Map<string, Group>();
  const subscriptions = new Set<Subscription>();
  let closed = false;

  function createTopic(name: string, partitions: number): Topic {
    if (!Number.isInteger(partitions) || partitions < 1) {
      throw new RangeError(`partitions must be a positive integer, got ${partitions}`);
    }
    const resumeAt = options.resumeOffsets?.get(name) ?? [];
    const topic: Topic = {
      name,
      partitions: Array.from({ length: partitions }, (_, partition) => ({
        records: [],
        first: 0,
        end: Math.max(0, resumeAt[partition] ?? 0),
        appendWaiters: new Set(),
      })),
      groups: new Set(),
    };
    topics.set(name, topic);
    return topic;
  }

  function getTopic(name: string): Topic {
    return topics.get(name) ?? createTopic(name, defaultPartitions);
  }

  function getGroup(id: string): Group {
    let group = groups.get(id);
    if (group === undefined) {
      group = { id, committed: new Map(), active: false, ackWaiters: new Map() };
      groups.set(id, group);
    }
    return group;
  }

  function earliest(log: PartitionLog): number {
    return log.records[log.first]?.offset ?? log.end;
  }

  /** Appends in order; returns, per partition, the highest offset written. */
  function append(topicName: string, messages: BusMessage[]): Map<number, number> {
    const topic = getTopic(topicName);
    const highest = new Map<number, number>();
    const timestampMs = now();
    const touched = new Set<PartitionLog>();
    for (const message of messages) {
      const partition = message.partition ?? partitionForKey(message.key, topic.partitions.length);
      const log = topic.partitions[partition];
      if (log === undefined) {
        throw new RangeError(`topic ${topicName} has no partition ${partition}`);
      }
      const offset = log.end;
      log.records.push({
        offset,
        key: message.key,
        value: message.value,
        headers: { ...message.headers },
        timestampMs,
      });
      log.end += 1;
      highest.set(partition, offset);
      touched.add(log);
    }
    for (const log of touched) {
      const waiters = [...log.appendWaiters];
      log.appendWaiters.clear();
      for (const wake of waiters) wake();
    }
    return highest;
  }

  function committedOffsets(group: Group, topic: Topic): number[] {
    let committed = group.committed.get(topic.name);
    if (committed === undefined) {
      committed = [];
      group.committed.set(topic.name, committed);
    }
    return committed;
  }

  function commit(group: Group, topic: Topic, partition: number, next: number): void {
    committedOffsets(group, topic)[partition] = next;
    const key = `${topic.name}\u0000${partition}`;
    const waiters = group.ackWaiters.get(key);
    if (waiters !== undefined) {
      while (waiters.length > 0 && (waiters[0]?.offset ?? Infinity) < next) {
        const waiter = waiters.shift();
        if (waiter !== undefined && !waiter.cancelled) waiter.resolve();
      }
      if (waiters.length === 0) group.ackWaiters.delete(key);
    }
    trim(topic, partition);
  }

  /** Drops records every group of the topic has consumed. */
  function trim(topic: Topic, partition: number): void {
    const log = topic.partitions[partition];
    if (log === undefined || topic.groups.size === 0) return;
    let keepFrom = log.end;
    for (const id of topic.groups) {
      const next = groups.get(id)?.committed.get(topic.name)?.[partition];
      keepFrom = Math.min(keepFrom, next ?? earliest(log));
    }
    const drop = keepFrom - earliest(log);
    if (drop <= 0) return;
    log.first += drop;
    // Compact once more than half is consumed, rather than shifting the array on every commit
    // (the copy is of fewer records than were dropped, so amortized constant). No floor on the
    // count: a record of many hosts is up to ~400 KB, and 1,024 consumed ones stayed reachable.
    if (log.first * 2 > log.records.length) {
      log.records = log.records.slice(log.first);
      log.first = 0;
    }
  }

  function waitConsumed(
    group: Group,
    topic: Topic,
    partition: number,
    offset: number,
  ): { done: Promise<void>; cancel: () => void } {
    if ((committedOffsets(group, topic)[partition] ?? 0) > offset) {
      return { done: Promise.resolve(), cancel: () => undefined };
    }
    const key = `${topic.name}\u0000${partition}`;
    let waiters = group.ackWaiters.get(key);
    if (waiters === undefined) {
      waiters = [];
      group.ackWaiters.set(key, waiters);
    }
    const list = waiters;
    let waiter: AckWaiter | undefined;
    const done = new Promise<void>((resolve) => {
      waiter = { offset, resolve, cancelled: false };
      list.push(waiter);
    });
    return {
      done,
      cancel: () => {
        if (waiter === undefined) return;
        waiter.cancelled = true;
        const index = list.indexOf(waiter);
        if (index >= 0) list.splice(index, 1);
      },
    };
  }

  const closeListeners = new Set<(err: Error) => void>();

  function publisher(publisherOptions: PublisherOptions = {}): Publisher {
    const ackGroups = publisherOptions.ackAfterConsumedBy ?? [];
    const publishTimeoutMs =
      publisherOptions.publishTimeoutMs ?? inProcessBusDefaults.publishTimeoutMs;
    const retryAfterSeconds = publisherOptions.retryAfterSeconds ?? defaultRetryAfterSeconds;
    let publisherClosed = false;
    const pending = new Set<Promise<unknown>>();

    async function publish(topicName: string, messages: BusMessage[]): Promise<void> {
      if (closed || publisherClosed) throw new BusUnavailableError('closed', { retryAfterSeconds });
      if (messages.length === 0) return;
      const { packRecords } = publisherOptions;
      const highest = append(
        topicName,
        packRecords === undefined
          ? messages
          : packByPartition(messages, getTopic(topicName).partitions.length, packRecords, Infinity),
      );
      if (ackGroups.length === 0) return;
      const topic = getTopic(topicName);
      const waits = ackGroups.flatMap((id) =>
        [...highest].map(([partition, offset]) =>
          waitConsumed(getGroup(id), topic, partition, offset),
        ),
      );
      let timer: NodeJS.Timeout | undefined;
      let onClose: ((err: Error) => void) | undefined;
      const all = Promise.race([
        Promise.all(waits.map((wait) => wait.done)).then(() => undefined),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new BusUnavailableError('timeout', { retryAfterSeconds })),
            publishTimeoutMs,
          );
          onClose = reject;
          closeListeners.add(reject);
        }),
      ]);
      pending.add(all);
      try {
        await all;
      } finally {
        pending.delete(all);
        clearTimeout(timer);
        if (onClose !== undefined) closeListeners.delete(onClose);
        for (const wait of waits) wait.cancel();
      }
    }

    async function close(): Promise<void> {
      publisherClosed = true;
      // "Flushes pending": waits for the publishes still waiting on their consumers.
      await Promise.allSettled([...pending]);
    }

    return { publish, close };
  }

  function startSubscription(subscribeOptions: SubscribeOptions): Subscription {
    if (closed) throw new BusUnavailableError('closed');
    const { groupId, handleBatch, fromBeginning } = subscribeOptions;
    const maxBatchRecords =
      subscribeOptions.maxBatchRecords ?? inProcessBusDefaults.maxBatchRecords;
    const retryInitialMs = subscribeOptions.retryInitialMs ?? inProcessBusDefaults.retryInitialMs;
    const retryMaxMs = subscribeOptions.retryMaxMs ?? inProcessBusDefaults.retryMaxMs;
    const concurrency =
      subscribeOptions.partitionsConsumedConcurrently ??
      inProcessBusDefaults.partitionsConsumedConcurrently;
    if (subscribeOptions.topics.length === 0)
      throw new RangeError('subscribe needs at least one topic');
    if (!(maxBatchRecords >= 1)) throw new RangeError('maxBatchRecords must be at least 1');
    const group = getGroup(groupId);
    if (group.active) {
      throw new Error(`consumer group ${groupId} already has a subscription in this process`);
    }
    group.active = true;
    const log = logger.child({ groupId });

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
          log.warn(
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
      const committed = committedOffsets(group, topic);
      while (running) {
        const next = Math.max(committed[partition] ?? 0, earliest(partitionLog));
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
          const from = partitionLog.first + (next - earliest(partitionLog));
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
        commit(group, topic, partition, last + 1);
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
      const topic = getTopic(name);
      topic.groups.add(groupId);
      const committed = committedOffsets(group, topic);
      topic.partitions.forEach((partitionLog, partition) => {
        committed[partition] ??= fromBeginning ? earliest(partitionLog) : partitionLog.end;
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
          subscriptions.delete(subscription);
        })()),
    };
    subscriptions.add(subscription);
    return subscription;
  }

  function subscribe(subscribeOptions: SubscribeOptions): Promise<Subscription> {
    // A throw in the executor (a bad option, a busy group) becomes the rejection.
    return new Promise((resolve) => resolve(startSubscription(subscribeOptions)));
  }

  const admin = {
    ensureTopic(name: string, topicOptions: EnsureTopicOptions): Promise<EnsureTopicResult> {
      const existing = topics.get(name);
      if (existing !== undefined) {
        if (existing.partitions.length !== topicOptions.partitions) {
          logger.warn(
            {
              topic: name,
              partitions: existing.partitions.length,
              wanted: topicOptions.partitions,
            },
            'topic exists with another partition count; left unchanged',
          );
        }
        return Promise.resolve({ created: false, partitions: existing.partitions.length });
      }
      return Promise.resolve({
        created: true,
        partitions: createTopic(name, topicOptions.partitions).partitions.length,
      });
    },
    ping: (): Promise<boolean> => Promise.resolve(!closed),
  };

  let deadLetterPublisher: Publisher | undefined;

  async function close(): Promise<void> {
    closed = true;
    await Promise.all([...subscriptions].map((subscription) => subscription.stop()));
    const error = new BusUnavailableError('closed');
    for (const reject of [...closeListeners]) reject(error);
  }

  return {
    publisher,
    subscribe,
    deadLetters: () =>
      options.deadLetters ??
      createDeadLetterSink({ publisher: (deadLetterPublisher ??= publisher()) }),
    admin,
    close,
  };
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
