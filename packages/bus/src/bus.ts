/**
 * The message bus as the domain code sees it: no kafkajs types cross this line. Two
 * implementations: `createKafkaBus` (Kafka, scale-out) and `createInProcessBus` (role `all`
 * without KAFKA_BROKERS).
 */

/**
 * Packs the values of messages that share a partition into one record value, in publish order
 * (a topic's own record format: the bus never looks inside). Must return a single value as a
 * record of its own that every reader takes.
 */
export type RecordPacker = (values: readonly Buffer[]) => Buffer;

/** One message to publish. `key` picks the partition (same key, same partition, in order). */
export type BusMessage = {
  key: string;
  value: Buffer;
  headers?: Record<string, string>;
  /**
   * The partition, when the publisher chose it (a record packed from several keys that hash to
   * it, `packByPartition`); otherwise the key's.
   */
  partition?: number;
};

export interface Publisher {
  /**
   * Publishes `messages` to `topic`. Resolves only once the broker acknowledged every message
   * (Kafka: `acks=all` on an idempotent producer). Rejects with `BusUnavailableError` when the bus
   * is down or the publish deadline passed; a rejected publish may still have been stored
   * (at-least-once: the caller retries and storage deduplicates).
   */
  publish(topic: string, messages: BusMessage[]): Promise<void>;
  /** Flushes what is pending (waiting for its acknowledgement), then releases the connection. */
  close(): Promise<void>;
}

/** One record as a consumer receives it. Header values are decoded as UTF-8. */
export type ConsumedRecord = {
  topic: string;
  partition: number;
  /** The record's offset in its partition, as a decimal string (int64). */
  offset: string;
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string>;
  /** The record's timestamp (producer create time), in milliseconds since the epoch. */
  timestampMs: number;
};

/** Consecutive records of one partition, in offset order. */
export type RecordBatch = {
  topic: string;
  partition: number;
  records: ConsumedRecord[];
  /**
   * The partition's log end offset (high watermark) when the batch was fetched: every record of
   * the partition has a lower offset. A consumer whose stored offset is past it is looking at a
   * new log (a topic deleted and created again, a bus that restarted its offsets): its stored
   * offset belongs to the old one and must not make it skip these records as replays.
   */
  logEndOffset: number;
};

export type BatchContext = {
  /**
   * Throws when the group rebalances. Membership needs no call of it: the bus keeps it alive
   * while the handler runs, however long it waits.
   */
  heartbeat(): Promise<void>;
  /**
   * True when this partition was taken away meanwhile (or a rebalance began): stop early, the
   * batch will be redelivered.
   */
  isStale(): boolean;
};

/**
 * Handles one batch. Resolve once the batch is durably processed (its offsets are committed
 * after that); throw to have the same batch delivered again (nothing after it is committed
 * first). Must be idempotent: a batch can be delivered more than once (at-least-once).
 */
type BatchHandler = (batch: RecordBatch, ctx: BatchContext) => Promise<void>;

export type SubscribeOptions = {
  /** Every group receives every message; within a group each partition has one consumer. */
  groupId: string;
  topics: string[];
  handleBatch: BatchHandler;
  /** Where a group without committed offsets starts: the earliest retained record, or the end. */
  fromBeginning: boolean;
  /** Splits larger fetched batches into chunks of at most this many records. Default: no split. */
  maxBatchRecords?: number;
  /**
   * How many partitions' batches may be handled at the same time. Default 1 (one handler call
   * at a time). Raise it to let a handler coalesce concurrent calls into one transaction.
   */
  partitionsConsumedConcurrently?: number;
  /** Backoff before a thrown batch is delivered again: starts here, doubles. Default 200 ms. */
  retryInitialMs?: number;
  /** The backoff's ceiling. Default 10 s. */
  retryMaxMs?: number;
  /**
   * Kafka: a partition whose batch threw is paused for the backoff and its batch fetched again
   * after it, instead of waiting in place. kafkajs fetches a broker's partitions again only once
   * every batch of its last fetch was handled, so a batch waiting in place holds up every other
   * partition of the broker; a handler whose partitions fail apart (writes to several
   * databases) sets this. Default false. The in-process bus has no such fetches.
   */
  pauseFailingPartitions?: boolean;
  /** Kafka: how long `subscribe` waits for the first group join before rejecting. Default 60 s. */
  startTimeoutMs?: number;
  /**
   * Kafka: the group session timeout, how long a member that stopped heartbeating (a crash)
   * keeps its partitions. Default 6 s, the broker's default minimum.
   */
  sessionTimeoutMs?: number;
  /** Kafka: how often heartbeats are sent, below `sessionTimeoutMs`. Default 1 s. */
  heartbeatIntervalMs?: number;
  /** Kafka: the most a fetch returns per partition (bounds one batch). Default 1 MiB. */
  maxBytesPerPartition?: number;
  /** Kafka: how long the broker holds a fetch open waiting for data. Default 500 ms. */
  maxWaitTimeMs?: number;
  /**
   * Called after each handled batch with how many records of its partition remain behind it
   * (the consumer lag) and the timestamp of the last record handled, for metrics. Must not throw.
   */
  onLag?: (lag: {
    topic: string;
    partition: number;
    records: number;
    lastTimestampMs: number;
  }) => void;
  /**
   * Called with this consumer's partitions after every group join (in-process: every partition,
   * at once), and with none once it stopped, so metrics forget what a rebalance took away and
   * work owned by partition follows them. Must not throw.
   */
  onAssignment?: (partitions: { topic: string; partition: number }[]) => void;
};

export interface Subscription {
  /**
   * Stops consuming: waits for the handler call in progress (a batch that succeeded is still
   * committed), commits nothing else, leaves the group. Idempotent.
   */
  stop(): Promise<void>;
}

export interface DeadLetterSink {
  /**
   * Writes `record` (original key, value and headers) to `<record.topic>.dlq` with the headers
   * `x-dlq-reason`, `x-dlq-source-topic`, `x-dlq-source-partition`, `x-dlq-source-offset`.
   * Resolves once acknowledged; throws `BusUnavailableError` like `Publisher.publish` (so a
   * handler that throws it gets its batch redelivered and nothing is lost).
   */
  send(record: ConsumedRecord, reason: string): Promise<void>;
}

export type PublisherOptions = {
  /** A publish rejects with `BusUnavailableError` after this long without acknowledgement. Default 5 s. */
  publishTimeoutMs?: number;
  /** The `Retry-After` hint carried by `BusUnavailableError`. Default 2 s. */
  retryAfterSeconds?: number;
  /**
   * Kafka: how long a batch waits for more publishes before it is sent. Default 1 ms: while a
   * batch is in flight the next one fills anyway, so a longer linger mostly adds latency.
   */
  lingerMs?: number;
  /** Kafka: the most messages in one produce request. Default 10 000. */
  maxBatchMessages?: number;
  /**
   * Kafka: the most bytes (keys, values, headers, plus 32 per message for framing) in one
   * produce request. Keep it below the topic's `max.message.bytes` (1 MiB by default), since
   * one partition's share of a request is one record batch. Default 1 000 000.
   */
  maxBatchBytes?: number;
  /**
   * In-process bus only: `publish` resolves only once every listed consumer group's handler
   * succeeded for the published messages ("acknowledged means processed"). Not supported by
   * the Kafka bus, where the broker's acknowledgement is the durable point.
   */
  ackAfterConsumedBy?: string[];
  /**
   * Packs the messages of a publish (Kafka: of a produce request, so concurrent publishes share
   * records) that hash to the same partition into one record, sent to that partition
   * explicitly. Consumers of the topic must read the packed format. Default: a record per message.
   */
  packRecords?: RecordPacker;
};

export type EnsureTopicOptions = {
  partitions: number;
  /** Kafka: defaults to min(3, number of brokers). */
  replicationFactor?: number;
  /** Kafka topic configs, e.g. `{ 'retention.ms': '604800000' }`, applied on creation only. */
  configEntries?: Record<string, string>;
};

export type EnsureTopicResult = {
  /** False when the topic existed already (its settings are left as they are). */
  created: boolean;
  /** The topic's partition count now. */
  partitions: number;
};

export interface BusAdmin {
  /** Creates the topic unless it exists. Never changes an existing topic (a warning says so). */
  ensureTopic(name: string, options: EnsureTopicOptions): Promise<EnsureTopicResult>;
  /** Whether the bus answers right now, within a bounded time; for `/readyz`. Never throws. */
  ping(): Promise<boolean>;
  /**
   * Resolves true once consumer group `groupId` has handled (committed past) every record
   * `topic` held when this was called, false when `timeoutMs` passed first or the bus did not
   * answer: a reader that must see what was accepted before now waits for its writer. Never
   * throws.
   */
  awaitConsumed(groupId: string, topic: string, timeoutMs: number): Promise<boolean>;
}

/** What both buses offer; role code depends on this (or on its parts), never on kafkajs. */
export interface Bus {
  /** A new publisher with its own connection; close it (or the bus) when done. */
  publisher(options?: PublisherOptions): Publisher;
  /**
   * Starts a consumer of `topics` in `groupId`. Resolves once it joined its group (in-process:
   * at once); rejects with `BusUnavailableError` when it cannot join within `startTimeoutMs`.
   */
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /** The dead-letter sink (one shared publisher behind it). */
  deadLetters(): DeadLetterSink;
  admin: BusAdmin;
  /** Stops every subscription, flushes and closes every publisher. */
  close(): Promise<void>;
}
