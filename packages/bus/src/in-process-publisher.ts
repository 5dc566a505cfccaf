import type { BusMessage, Publisher, PublisherOptions } from './bus.js';
import { BusUnavailableError, defaultRetryAfterSeconds } from './bus-unavailable-error.js';
import type { InProcessLog } from './in-process-log.js';
import { packByPartition } from './record-packing.js';

const defaultPublishTimeoutMs = 5_000;

/** What a publisher shares with the bus it belongs to. */
export type InProcessPublisherContext = {
  log: InProcessLog;
  isClosed: () => boolean;
  /** Rejected with the bus's error when it closes: publishes still waiting fail at once. */
  closeListeners: Set<(err: Error) => void>;
};

/**
 * A publisher of the in-process bus: `publish` resolves once the messages are appended, or, with
 * `ackAfterConsumedBy`, once each listed group's handler succeeded for them (else a
 * BusUnavailableError after `publishTimeoutMs`).
 */
export function createInProcessPublisher(
  context: InProcessPublisherContext,
  publisherOptions: PublisherOptions = {},
): Publisher {
  const { log, closeListeners } = context;
  const ackGroups = publisherOptions.ackAfterConsumedBy ?? [];
  const publishTimeoutMs = publisherOptions.publishTimeoutMs ?? defaultPublishTimeoutMs;
  const retryAfterSeconds = publisherOptions.retryAfterSeconds ?? defaultRetryAfterSeconds;
  let publisherClosed = false;
  const pending = new Set<Promise<unknown>>();

  async function publish(topicName: string, messages: BusMessage[]): Promise<void> {
    if (context.isClosed() || publisherClosed) {
      throw new BusUnavailableError('closed', { retryAfterSeconds });
    }
    if (messages.length === 0) return;
    const { packRecords } = publisherOptions;
    const highest = log.append(
      topicName,
      packRecords === undefined
        ? messages
        : packByPartition(
            messages,
            log.getTopic(topicName).partitions.length,
            packRecords,
            Infinity,
          ),
    );
    if (ackGroups.length === 0) return;
    const topic = log.getTopic(topicName);
    const waits = ackGroups.flatMap((id) =>
      [...highest].map(([partition, offset]) =>
        log.waitConsumed(log.getGroup(id), topic, partition, offset),
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
