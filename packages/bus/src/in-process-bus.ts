import type {
  Bus,
  DeadLetterSink,
  EnsureTopicOptions,
  EnsureTopicResult,
  Publisher,
  PublisherOptions,
  SubscribeOptions,
  Subscription,
} from './bus.js';
import type { BusLogger } from './bus-logger.js';
import { silentBusLogger } from './bus-logger.js';
import { BusUnavailableError } from './bus-unavailable-error.js';
import { createDeadLetterSink } from './dead-letter-sink.js';
import { createInProcessLog } from './in-process-log.js';
import { createInProcessPublisher } from './in-process-publisher.js';
import { startInProcessSubscription } from './in-process-subscription.js';

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

const defaultPartitions = 4;

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
  const logger = (options.logger ?? silentBusLogger).child({ bus: 'in-process' });
  const log = createInProcessLog({
    defaultPartitions: options.defaultPartitions ?? defaultPartitions,
    now: options.now ?? Date.now,
    resumeOffsets: options.resumeOffsets,
  });
  const subscriptions = new Set<Subscription>();
  const closeListeners = new Set<(err: Error) => void>();
  let closed = false;

  const publisher = (publisherOptions: PublisherOptions = {}): Publisher =>
    createInProcessPublisher({ log, isClosed: () => closed, closeListeners }, publisherOptions);

  function subscribe(subscribeOptions: SubscribeOptions): Promise<Subscription> {
    // A throw in the executor (a bad option, a busy group) becomes the rejection.
    return new Promise((resolve) => {
      if (closed) throw new BusUnavailableError('closed');
      const subscription = startInProcessSubscription(log, logger, subscribeOptions, (stopped) =>
        subscriptions.delete(stopped),
      );
      subscriptions.add(subscription);
      resolve(subscription);
    });
  }

  const admin = {
    ensureTopic(name: string, topicOptions: EnsureTopicOptions): Promise<EnsureTopicResult> {
      const existing = log.findTopic(name);
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
        partitions: log.createTopic(name, topicOptions.partitions).partitions.length,
      });
    },
    ping: (): Promise<boolean> => Promise.resolve(!closed),
    async awaitConsumed(groupId: string, topicName: string, timeoutMs: number): Promise<boolean> {
      const topic = log.findTopic(topicName);
      if (topic === undefined) return true;
      const group = log.getGroup(groupId);
      const waits = topic.partitions
        .map((partition, index) => ({ end: partition.end, index }))
        .filter(({ end }) => end > 0)
        .map(({ end, index }) => log.waitConsumed(group, topic, index, end - 1));
      let timer: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([
          Promise.all(waits.map((wait) => wait.done)).then(() => true),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), timeoutMs);
          }),
        ]);
      } finally {
        clearTimeout(timer);
        for (const wait of waits) wait.cancel();
      }
    },
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
