import type { Kafka, Producer } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import type { BatchSender, TopicMessages } from './batching-publisher.js';
import type { BusMessage, RecordPacker } from './bus.js';
import type { BusLogger } from './bus-logger.js';
import { BusUnavailableError } from './bus-unavailable-error.js';
import { toBusError } from './kafka-errors.js';
import { packByPartition } from './record-packing.js';
import { compressionFor } from './kafka-snappy.js';

export type KafkaBatchSenderDeps = {
  kafka: Kafka;
  logger: BusLogger;
  /** A send settles (rejects with `BusUnavailableError` `timeout`) within this long. */
  sendTimeoutMs: number;
  /**
   * Packs each topic's messages per partition into one record (see `packByPartition`). Needs
   * `partitionsOf`; the count is asked once per topic and kept until a send fails (a topic's
   * partitions change only by an operator's hand or a topic created again).
   */
  packing?: {
    pack: RecordPacker;
    partitionsOf: (topic: string) => Promise<number>;
    /** Below the topic's `max.message.bytes`. */
    maxRecordBytes: number;
  };
};

type ProducerHandle = {
  id: number;
  producer: Producer;
  connected: Promise<void>;
  retired: boolean;
};

/** kafkajs's own retry loop inside one send: short waits, so it gives up near the deadline. */
const retryInitialMs = 100;
const retryMaxMs = 1_000;

/**
 * A `BatchSender` over a kafkajs producer: idempotent, `acks=all`, one request in flight, the
 * Java client's murmur2 partitioner, snappy for large requests (`compressionFor`).
 *
 * A producer is never reused after a failed or timed-out send; the next send gets a new one.
 * kafkajs numbers each partition's batches for idempotence, and when a request fails it rolls
 * the sequence back, even when the broker did write the batch (the response was lost): the
 * next, different batch would then carry sequence numbers the broker already saw, and be
 * acknowledged as a duplicate without being written (same size) or refused as out of order on
 * every try. A new producer has a new producer id and numbers afresh, which also clears
 * whatever state a broker outage left behind (stale metadata, dead connections, a lock held by
 * a hung request), so publishing resumes by itself once the broker is back. The retired
 * producer is disconnected, and disconnected again when its abandoned send settles (kafkajs
 * reconnects inside its retry loop); its retries are bounded so it gives up soon after the
 * deadline. What it still manages to write is a duplicate of a publish its caller saw fail,
 * which at-least-once delivery allows.
 */
export function createKafkaBatchSender(deps: KafkaBatchSenderDeps): BatchSender {
  const { kafka, sendTimeoutMs } = deps;
  const logger = deps.logger.child({ bus: 'kafka-producer' });
  // Bounded retries: about the deadline's worth of kafkajs retries, then the send fails.
  const retries = Math.max(3, Math.ceil(sendTimeoutMs / retryMaxMs) + 3);
  let current: ProducerHandle | undefined;
  let producers = 0;
  let closed = false;
  const pending = new Set<Promise<unknown>>();
  const partitionCounts = new Map<string, Promise<number>>();

  function partitionsOf(topic: string, ask: (topic: string) => Promise<number>): Promise<number> {
    let count = partitionCounts.get(topic);
    if (count === undefined) {
      count = ask(topic);
      partitionCounts.set(topic, count);
      // Asked again on the next send when this failed (the broker was down…).
      count.catch(() => partitionCounts.delete(topic));
    }
    return count;
  }

  async function recordsOf(topic: string, messages: BusMessage[]): Promise<BusMessage[]> {
    const { packing } = deps;
    if (packing === undefined) return messages;
    const partitions = await partitionsOf(topic, packing.partitionsOf);
    return packByPartition(messages, partitions, packing.pack, packing.maxRecordBytes);
  }

  function track(promise: Promise<unknown>): void {
    const settled = promise.then(
      () => undefined,
      () => undefined,
    );
    pending.add(settled);
    void settled.then(() => pending.delete(settled));
  }

  function acquire(): ProducerHandle {
    if (current !== undefined) return current;
    producers += 1;
    const producer = kafka.producer({
      idempotent: true,
      // kafkajs guarantees ordering with idempotence only with one request in flight.
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: {
        initialRetryTime: retryInitialMs,
        maxRetryTime: retryMaxMs,
        multiplier: 2,
        factor: 0.2,
        retries,
      },
    });
    const handle: ProducerHandle = {
      id: producers,
      producer,
      connected: producer.connect(),
      retired: false,
    };
    handle.connected.catch((err: unknown) => retire(handle, err));
    current = handle;
    logger.debug({ producer: handle.id }, 'kafka producer created');
    return handle;
  }

  function disconnect(handle: ProducerHandle): Promise<void> {
    return handle.producer.disconnect().catch((err: unknown) => {
      logger.debug({ err, producer: handle.id }, 'kafka producer did not disconnect cleanly');
    });
  }

  function retire(handle: ProducerHandle, err: unknown, abandoned?: Promise<unknown>): void {
    if (handle.retired) return;
    handle.retired = true;
    if (current === handle) current = undefined;
    logger.debug({ err, producer: handle.id }, 'kafka producer retired after a failure');
    track(disconnect(handle));
    if (abandoned !== undefined) {
      track(abandoned.then(undefined, () => undefined).then(() => disconnect(handle)));
    }
  }

  async function send(batch: TopicMessages[]): Promise<void> {
    if (closed) throw new BusUnavailableError('closed');
    const handle = acquire();
    const attempt = (async () => {
      const records = await Promise.all(
        batch.map(async ({ topic, messages }) => ({
          topic,
          records: await recordsOf(topic, messages),
        })),
      );
      await handle.connected;
      let valueBytes = 0;
      for (const { records: messages } of records) {
        for (const message of messages) valueBytes += message.value.length;
      }
      await handle.producer.sendBatch({
        topicMessages: records.map(({ topic, records: messages }) => ({
          topic,
          messages: messages.map((message) => ({
            key: message.key,
            value: message.value,
            headers: message.headers,
            ...(message.partition === undefined ? {} : { partition: message.partition }),
          })),
        })),
        acks: -1,
        // How long the broker may wait for the in-sync replicas before it answers.
        timeout: sendTimeoutMs,
        compression: compressionFor(valueBytes),
      });
    })();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new BusUnavailableError('timeout')), sendTimeoutMs);
    });
    try {
      await Promise.race([attempt, deadline]);
    } catch (err) {
      retire(handle, err, attempt);
      // Asked again with the next send: the topic may have been created again meanwhile.
      partitionCounts.clear();
      throw toBusError(err);
    } finally {
      clearTimeout(timer);
    }
  }

  async function close(): Promise<void> {
    closed = true;
    const handle = current;
    current = undefined;
    if (handle !== undefined) {
      handle.retired = true;
      await handle.connected.catch(() => undefined);
      await disconnect(handle);
    }
    // Abandoned sends of retired producers end by themselves; do not let them hold up shutdown.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(pending),
      new Promise((resolve) => (timer = setTimeout(resolve, sendTimeoutMs))),
    ]);
    clearTimeout(timer);
  }

  // Connect ahead of the first publish so it does not pay for the connection.
  acquire();

  return { send, close };
}
