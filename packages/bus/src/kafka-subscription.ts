import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import kafkajs from 'kafkajs';
import { backoffMs, delay } from './backoff.js';
import type { ConsumedRecord, RecordBatch, SubscribeOptions, Subscription } from './bus.js';
import type { BusLogger } from './bus-logger.js';
import { BusUnavailableError } from './bus-unavailable-error.js';
import { processBalancedAssigner } from './process-balanced-assigner.js';

export type KafkaSubscriptionDeps = {
  kafka: Kafka;
  logger: BusLogger;
  /** The same for every consumer of this process: see `processBalancedAssigner`. */
  processKey: string;
};

const kafkaSubscriptionDefaults = {
  retryInitialMs: 200,
  retryMaxMs: 10_000,
  startTimeoutMs: 60_000,
  // Failover in seconds: a crashed member's partitions move once its session expires, and
  // 6 s is the least a broker accepts by default (group.min.session.timeout.ms). A 1 s
  // heartbeat lets a survivor hear of a rebalance within a second of it starting.
  sessionTimeoutMs: 6_000,
  heartbeatIntervalMs: 1_000,
  maxBytesPerPartition: 1_048_576,
  maxWaitTimeMs: 500,
  partitionsConsumedConcurrently: 1,
} as const;

/** After this many failed attempts in a row a batch's failure is logged at ERROR (a human must look). */
const attemptsBeforeError = 10;

/**
 * The one runner that owns kafkajs's `eachBatch` (layer 3 of "Kafka consumers: three layers").
 *
 * - Offsets are resolved, then committed, only after `handleBatch` resolved for that batch (or
 *   chunk of `maxBatchRecords`): auto-resolve is off, and each success commits at once.
 * - While `handleBatch` runs, the runner heartbeats for it (see `heartbeatingWhile`): a handler
 *   that waits and retries in place (the writer through a database failover) keeps its group
 *   membership however long it waits, without heartbeating itself.
 * - When `handleBatch` throws, the runner calls it again with the same records after a backoff
 *   (200 ms doubling to 10 s by default), heartbeating meanwhile, until it succeeds, the
 *   subscription stops, or the partition is taken away (a rebalance): then nothing past the
 *   last success was committed and whoever owns the partition next gets the records again.
 *   Nothing is skipped; a partition waits behind its failing batch (in order, per key).
 *   Why not throw into kafkajs and let it redeliver: kafkajs logs every such throw at ERROR,
 *   counts them towards restarting the whole consumer (leave and re-join: a rebalance of every
 *   member of the group), and treats a `TypeError` or an error with `retriable: false` (our
 *   own `AppError`s!) as fatal: the consumer crashes and is not restarted.
 * - Between chunks and between retries it checks `!isRunning() || isStale()` and stops early.
 * - kafkajs errors (a rebalance noticed by a heartbeat, a failed commit) go back to kafkajs,
 *   which re-joins or retries; a crash kafkajs does not restart from is restarted here with a
 *   backoff, on a new consumer. Nothing in this path ends consumption silently.
 */
export async function startKafkaSubscription(
  deps: KafkaSubscriptionDeps,
  options: SubscribeOptions,
): Promise<Subscription> {
  const { kafka } = deps;
  const { groupId, topics, handleBatch, fromBeginning } = options;
  const maxBatchRecords = options.maxBatchRecords ?? Number.POSITIVE_INFINITY;
  const retryInitialMs = options.retryInitialMs ?? kafkaSubscriptionDefaults.retryInitialMs;
  const retryMaxMs = options.retryMaxMs ?? kafkaSubscriptionDefaults.retryMaxMs;
  const startTimeoutMs = options.startTimeoutMs ?? kafkaSubscriptionDefaults.startTimeoutMs;
  const heartbeatIntervalMs =
    options.heartbeatIntervalMs ?? kafkaSubscriptionDefaults.heartbeatIntervalMs;
  if (topics.length === 0) throw new RangeError('subscribe needs at least one topic');
  if (!(maxBatchRecords >= 1)) throw new RangeError('maxBatchRecords must be at least 1');
  const logger = deps.logger.child({ bus: 'kafka-consumer', groupId });

  let stopped = false;
  let consumer: Consumer | undefined;
  let restartTimer: NodeJS.Timeout | undefined;
  let restarts = 0;
  let joined: (() => void) | undefined;
  const firstJoin = new Promise<void>((resolve) => (joined = resolve));
  /** With `pauseFailingPartitions`: each paused partition's failed attempts so far and its resume. */
  const pausedPartitions = new Map<string, { attempts: number; resume?: NodeJS.Timeout }>();

  async function runBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const records = batch.messages.map((message) =>
      toConsumedRecord(batch.topic, batch.partition, message),
    );
    for (let start = 0; start < records.length; start += maxBatchRecords) {
      if (!payload.isRunning() || payload.isStale()) return;
      const chunk: RecordBatch = {
        topic: batch.topic,
        partition: batch.partition,
        records: records.slice(start, start + maxBatchRecords),
        logEndOffset: Number(batch.highWatermark),
      };
      if (!(await handleWithRetry(chunk, payload))) return;
      const last = chunk.records[chunk.records.length - 1];
      if (last === undefined) continue;
      payload.resolveOffset(last.offset);
      await payload.commitOffsetsIfNecessary(payload.uncommittedOffsets());
      options.onLag?.({
        topic: batch.topic,
        partition: batch.partition,
        records: Math.max(0, Number(batch.highWatermark) - Number(last.offset) - 1),
        lastTimestampMs: last.timestampMs,
      });
      await payload.heartbeat();
    }
  }

  /** True once `handleBatch` succeeded; false when it should give up (stopped or stale). */
  async function handleWithRetry(chunk: RecordBatch, payload: EachBatchPayload): Promise<boolean> {
    let kafkaError: Error | undefined;
    const heartbeat = async (): Promise<void> => {
      try {
        await payload.heartbeat();
      } catch (err) {
        // Remember it: whatever the handler makes of it, kafkajs must see it (to re-join).
        kafkaError ??= err instanceof Error ? err : new Error(String(err));
        throw kafkaError;
      }
    };
    const ctx = {
      heartbeat,
      isStale: () => kafkaError !== undefined || !payload.isRunning() || payload.isStale(),
    };
    const partitionKey = `${chunk.topic}\u0000${chunk.partition}`;
    const failedBefore = pausedPartitions.get(partitionKey)?.attempts ?? 0;
    for (let attempt = failedBefore + 1; ; attempt++) {
      try {
        await heartbeatingWhile(
          () => handleBatch(chunk, ctx),
          heartbeat,
          () => kafkaError !== undefined,
          Math.min(heartbeatIntervalMs, 500),
        );
        pausedPartitions.delete(partitionKey);
        if (attempt > 1) {
          logger.info(
            { topic: chunk.topic, partition: chunk.partition, attempt },
            'batch handled after retries',
          );
        }
        return true;
      } catch (err) {
        if (kafkaError !== undefined) throw kafkaError;
        const waitMs = backoffMs(attempt, retryInitialMs, retryMaxMs);
        const fields = {
          err,
          topic: chunk.topic,
          partition: chunk.partition,
          firstOffset: chunk.records[0]?.offset,
          lastOffset: chunk.records[chunk.records.length - 1]?.offset,
          records: chunk.records.length,
          attempt,
          retryInMs: waitMs,
        };
        if (attempt >= attemptsBeforeError) {
          logger.error(fields, 'batch handler keeps failing; the partition waits, nothing skipped');
        } else {
          logger.warn(fields, 'batch handler failed; redelivering the batch after a backoff');
        }
        if (options.pauseFailingPartitions === true) {
          // Out of the fetch loop for the backoff: the other partitions go on meanwhile, and
          // this one is fetched again from its last resolved offset once resumed.
          const resume = payload.pause();
          const entry = { attempts: attempt, resume: setTimeout(resume, waitMs) };
          entry.resume.unref();
          pausedPartitions.set(partitionKey, entry);
          return false;
        }
        // Sleep in slices so a stop or a rebalance is noticed, heartbeating to keep the partition.
        const until = Date.now() + waitMs;
        for (;;) {
          if (!payload.isRunning() || payload.isStale()) return false;
          const left = until - Date.now();
          if (left <= 0) break;
          await delay(Math.min(left, heartbeatIntervalMs, 500));
          await payload.heartbeat();
        }
      }
    }
  }

  async function startConsumer(): Promise<void> {
    const created = kafka.consumer({
      groupId,
      sessionTimeout: options.sessionTimeoutMs ?? kafkaSubscriptionDefaults.sessionTimeoutMs,
      heartbeatInterval: heartbeatIntervalMs,
      // Round robin after it: a group whose members do not all know the first (a rolling
      // upgrade from a version without it) agrees on the second.
      partitionAssigners: [
        processBalancedAssigner(deps.processKey),
        kafkajs.PartitionAssigners.roundRobin,
      ],
      maxBytesPerPartition:
        options.maxBytesPerPartition ?? kafkaSubscriptionDefaults.maxBytesPerPartition,
      maxWaitTimeInMs: options.maxWaitTimeMs ?? kafkaSubscriptionDefaults.maxWaitTimeMs,
      // Explicit, so NODE_ENV=test (which switches kafkajs to tiny retry defaults) changes nothing.
      retry: {
        initialRetryTime: 300,
        maxRetryTime: 30_000,
        multiplier: 2,
        factor: 0.2,
        retries: 5,
        restartOnFailure: () => Promise.resolve(!stopped),
      },
    });
    consumer = created;
    created.on(created.events.GROUP_JOIN, (event) => {
      restarts = 0;
      logger.info(
        { memberId: event.payload.memberId, assignment: event.payload.memberAssignment },
        'joined consumer group',
      );
      options.onAssignment?.(
        Object.entries(event.payload.memberAssignment).flatMap(([topic, partitions]) =>
          partitions.map((partition) => ({ topic, partition })),
        ),
      );
      joined?.();
    });
    created.on(created.events.CRASH, (event) => {
      if (event.payload.restart || stopped || created !== consumer) return;
      logger.error(
        { err: event.payload.error },
        'kafka consumer crashed and kafkajs will not restart it; restarting it here',
      );
      scheduleRestart();
    });
    await created.connect();
    await created.subscribe({ topics, fromBeginning });
    await created.run({
      autoCommit: true,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently:
        options.partitionsConsumedConcurrently ??
        kafkaSubscriptionDefaults.partitionsConsumedConcurrently,
      eachBatch: runBatch,
    });
  }

  function scheduleRestart(): void {
    if (stopped) return;
    restarts += 1;
    const waitMs = backoffMs(restarts, 1_000, 30_000);
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      void restart();
    }, waitMs);
  }

  async function restart(): Promise<void> {
    if (stopped) return;
    const previous = consumer;
    consumer = undefined;
    await previous?.disconnect().catch(() => undefined);
    try {
      await startConsumer();
    } catch (err) {
      logger.warn({ err }, 'kafka consumer could not start; trying again');
      scheduleRestart();
    }
  }

  async function stop(): Promise<void> {
    stopped = true;
    clearTimeout(restartTimer);
    for (const { resume } of pausedPartitions.values()) clearTimeout(resume);
    const current = consumer;
    consumer = undefined;
    // Waits for the batch in progress (a success is still committed), then leaves the group.
    await current?.disconnect().catch((err: unknown) => {
      logger.warn({ err }, 'kafka consumer did not disconnect cleanly');
    });
    options.onAssignment?.([]);
  }

  let timer: NodeJS.Timeout | undefined;
  try {
    await startConsumer();
    await Promise.race([
      firstJoin,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no group join within ${startTimeoutMs} ms`)),
          startTimeoutMs,
        );
      }),
    ]);
  } catch (err) {
    await stop();
    throw new BusUnavailableError('broker_error', { cause: err });
  } finally {
    clearTimeout(timer);
  }
  let stopping: Promise<void> | undefined;
  return { stop: () => (stopping ??= stop()) };
}

/**
 * Runs `work`, calling `heartbeat` every `everyMs` until it settles (kafkajs sends a heartbeat at
 * most once per heartbeat interval, and concurrent calls share one request). Without it a handler
 * that waits longer than the session timeout (retrying a write while the database fails over)
 * lost the group ("The coordinator is not aware of this member") and cost every member a
 * rebalance. Once `failed()` (a heartbeat failed: a rebalance began), it sends no more: the
 * rebalance then goes on without this member once its session expires, rather than waiting for
 * a handler that may wait on storage for long.
 */
async function heartbeatingWhile(
  work: () => Promise<void>,
  heartbeat: () => Promise<void>,
  failed: () => boolean,
  everyMs: number,
): Promise<void> {
  const timer = setInterval(() => {
    if (failed()) clearInterval(timer);
    // A failure is kept by `heartbeat` and reaches kafkajs once `work` settled.
    else heartbeat().catch(() => undefined);
  }, everyMs);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
}

function toConsumedRecord(topic: string, partition: number, message: KafkaMessage): ConsumedRecord {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    // Kafka allows a header name more than once (kafkajs gives an array): the last one wins.
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (last !== undefined) headers[name] = last.toString();
  }
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key === null ? null : message.key.toString(),
    value: message.value,
    headers,
    timestampMs: Number(message.timestamp),
  };
}
