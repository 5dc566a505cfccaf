import { randomUUID } from 'node:crypto';
import { Kafka } from 'kafkajs';
import { createBatchingPublisher } from './batching-publisher.js';
import type { Bus, Publisher, PublisherOptions, SubscribeOptions, Subscription } from './bus.js';
import type { BusLogger } from './bus-logger.js';
import { createDeadLetterSink } from './dead-letter-sink.js';
import { createKafkaAdmin } from './kafka-admin.js';
import { createKafkaBatchSender } from './kafka-batch-sender.js';
import { createKafkaLogCreator, kafkaLogLevelFor } from './kafka-log-creator.js';
import { useSnappyCodec } from './kafka-snappy.js';
import { startKafkaSubscription } from './kafka-subscription.js';

export type KafkaBusDeps = {
  /** `host:port` of one or more brokers (bootstrap); use 127.0.0.1 rather than localhost. */
  brokers: string[];
  clientId: string;
  logger: BusLogger;
  /** How long kafkajs waits for any broker response. Default 10 s. */
  requestTimeoutMs?: number;
  /** How long kafkajs waits for a TCP connection. Default 3 s. */
  connectionTimeoutMs?: number;
  /** How long `admin.ping()` may take before it answers false. Default 2 s. */
  pingTimeoutMs?: number;
};

const kafkaBusDefaults = {
  requestTimeoutMs: 10_000,
  connectionTimeoutMs: 3_000,
  pingTimeoutMs: 2_000,
  publishTimeoutMs: 5_000,
  /** The dead-letter publisher: not on a request path, so it may wait a little longer. */
  deadLetterPublishTimeoutMs: 10_000,
} as const;

/**
 * The bus over Kafka (kafkajs). `publisher()` is a batching publisher (see
 * `createBatchingPublisher`) on its own idempotent producer; `subscribe()` runs the consumer
 * runner of kafka-subscription.ts; `deadLetters()` shares one publisher.
 */
export function createKafkaBus(deps: KafkaBusDeps): Bus {
  const { logger } = deps;
  const requestTimeoutMs = deps.requestTimeoutMs ?? kafkaBusDefaults.requestTimeoutMs;
  useSnappyCodec();
  // One per bus, so the group's leader sees which consumers share a process.
  const processKey = randomUUID();
  const kafka = new Kafka({
    clientId: deps.clientId,
    brokers: deps.brokers,
    connectionTimeout: deps.connectionTimeoutMs ?? kafkaBusDefaults.connectionTimeoutMs,
    requestTimeout: requestTimeoutMs,
    enforceRequestTimeout: true,
    // Explicit, so NODE_ENV=test (which switches kafkajs to tiny retry defaults) changes nothing.
    retry: { initialRetryTime: 100, maxRetryTime: 1_000, retries: 3, multiplier: 2, factor: 0.2 },
    logLevel: kafkaLogLevelFor(logger),
    logCreator: createKafkaLogCreator(logger),
  });
  const admin = createKafkaAdmin({
    kafka,
    logger,
    pingTimeoutMs: deps.pingTimeoutMs ?? kafkaBusDefaults.pingTimeoutMs,
    requestTimeoutMs,
  });
  const publishers = new Set<Publisher>();
  const subscriptions = new Set<Subscription>();
  let deadLetterPublisher: Publisher | undefined;
  let closed = false;

  function publisher(options: PublisherOptions = {}): Publisher {
    if (closed) throw new Error('the bus is closed');
    if (options.ackAfterConsumedBy !== undefined) {
      throw new Error(
        'ackAfterConsumedBy is an in-process bus option; with Kafka the broker acknowledgement is the durable point',
      );
    }
    const publishTimeoutMs = options.publishTimeoutMs ?? kafkaBusDefaults.publishTimeoutMs;
    const { packRecords } = options;
    const inner = createBatchingPublisher(
      {
        sender: createKafkaBatchSender({
          kafka,
          logger,
          sendTimeoutMs: publishTimeoutMs,
          ...(packRecords === undefined
            ? {}
            : {
                packing: {
                  pack: packRecords,
                  partitionsOf: (topic) => admin.partitionCount(topic),
                  // A produce request holds at most maxBatchBytes, so a record never exceeds it either.
                  maxRecordBytes: options.maxBatchBytes ?? 1_000_000,
                },
              }),
        }),
        logger: logger.child({ bus: 'publisher' }),
      },
      { ...options, publishTimeoutMs },
    );
    const tracked: Publisher = {
      publish: (topic, messages) => inner.publish(topic, messages),
      close: async () => {
        publishers.delete(tracked);
        await inner.close();
      },
    };
    publishers.add(tracked);
    return tracked;
  }

  async function subscribe(options: SubscribeOptions): Promise<Subscription> {
    if (closed) throw new Error('the bus is closed');
    const inner = await startKafkaSubscription({ kafka, logger, processKey }, options);
    const tracked: Subscription = {
      stop: async () => {
        subscriptions.delete(tracked);
        await inner.stop();
      },
    };
    subscriptions.add(tracked);
    return tracked;
  }

  function deadLetters(): ReturnType<Bus['deadLetters']> {
    deadLetterPublisher ??= publisher({
      publishTimeoutMs: kafkaBusDefaults.deadLetterPublishTimeoutMs,
    });
    return createDeadLetterSink({ publisher: deadLetterPublisher });
  }

  async function close(): Promise<void> {
    closed = true;
    // Consumers first: their handlers may still dead-letter through a publisher.
    await Promise.all([...subscriptions].map((subscription) => subscription.stop()));
    await Promise.all([...publishers].map((each) => each.close()));
    await admin.close();
  }

  return {
    publisher,
    subscribe,
    deadLetters,
    admin: {
      ensureTopic: (name, topicOptions) => admin.ensureTopic(name, topicOptions),
      ping: () => admin.ping(),
      awaitConsumed: (groupId, topic, timeoutMs) => admin.awaitConsumed(groupId, topic, timeoutMs),
    },
    close,
  };
}
