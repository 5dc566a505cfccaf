import type { Admin, Kafka } from 'kafkajs';
import type { BusAdmin, EnsureTopicOptions, EnsureTopicResult } from './bus.js';
import type { BusLogger } from './bus-logger.js';
import { BusUnavailableError } from './bus-unavailable-error.js';
import { toBusError } from './kafka-errors.js';

export type KafkaAdminDeps = {
  kafka: Kafka;
  logger: BusLogger;
  /** `ping` answers false after this long. */
  pingTimeoutMs: number;
  /** How long the broker may take to create a topic and elect its leaders. */
  requestTimeoutMs: number;
};

export type KafkaAdmin = BusAdmin & {
  /** The topic's partition count as the broker reports it; throws a bus error. */
  partitionCount(name: string): Promise<number>;
  /** Disconnects the admin client. */
  close(): Promise<void>;
};

/**
 * Topic creation, partition counts and the readiness probe over one lazily connected kafkajs
 * admin client, consumer offsets for `awaitConsumed` over another; each dropped (and created
 * again on the next call) whenever a call on it fails, so a broker outage leaves nothing stale.
 */
/** kafkajs marks errors worth retrying (unknown topic while it is created, no leader yet…). */
function isRetriable(err: unknown): boolean {
  return (err as { retriable?: unknown } | undefined)?.retriable === true;
}

export function createKafkaAdmin(deps: KafkaAdminDeps): KafkaAdmin {
  const { kafka, pingTimeoutMs, requestTimeoutMs } = deps;
  // How long a topic created by another process may take to show its partitions.
  const metadataSettleMs = requestTimeoutMs;
  const logger = deps.logger.child({ bus: 'kafka-admin' });
  type Handle = { admin: Admin; connected: Promise<void> };

  /**
   * One lazily connected admin client, dropped (and made again on the next call) whenever a
   * call on it fails. Two of them: the offsets polled for `awaitConsumed` fail more often (a
   * group's coordinator moving while its members rebalance), and dropping the client that topic
   * creation, partition counts and the readiness probe share failed those calls in flight.
   */
  function createSlot() {
    let current: Handle | undefined;
    function acquire(): Handle {
      if (current === undefined) {
        const admin = kafka.admin({
          retry: {
            initialRetryTime: 100,
            maxRetryTime: 1_000,
            retries: 3,
            multiplier: 2,
            factor: 0.2,
          },
        });
        const connected = admin.connect();
        // Awaited by whoever uses it; this only keeps a failure nobody waits for from going
        // unhandled.
        connected.catch(() => undefined);
        current = { admin, connected };
      }
      return current;
    }
    function drop(handle: Handle): void {
      if (current === handle) current = undefined;
      void handle.connected
        .catch(() => undefined)
        .then(() => handle.admin.disconnect())
        .catch(() => undefined);
    }
    async function withAdmin<T>(work: (admin: Admin) => Promise<T>): Promise<T> {
      const handle = acquire();
      try {
        await handle.connected;
        return await work(handle.admin);
      } catch (err) {
        drop(handle);
        throw err;
      }
    }
    async function close(): Promise<void> {
      const handle = current;
      current = undefined;
      if (handle === undefined) return;
      await handle.connected.catch(() => undefined);
      await handle.admin.disconnect().catch(() => undefined);
    }
    return { acquire, drop, withAdmin, close };
  }

  const shared = createSlot();
  const offsets = createSlot();
  const { acquire, drop, withAdmin } = shared;

  async function ensureTopic(
    name: string,
    options: EnsureTopicOptions,
  ): Promise<EnsureTopicResult> {
    if (!Number.isInteger(options.partitions) || options.partitions < 1) {
      throw new RangeError(`partitions must be a positive integer, got ${options.partitions}`);
    }
    try {
      return await withAdmin(async (admin) => {
        // Checked first: creating an existing topic works too, but kafkajs logs the refusal.
        let created = false;
        if (!(await admin.listTopics()).includes(name)) {
          const replicationFactor =
            options.replicationFactor ??
            Math.min(3, (await admin.describeCluster()).brokers.length);
          try {
            created = await admin.createTopics({
              topics: [
                {
                  topic: name,
                  numPartitions: options.partitions,
                  replicationFactor,
                  configEntries: Object.entries(options.configEntries ?? {}).map(
                    ([key, value]) => ({
                      name: key,
                      value,
                    }),
                  ),
                },
              ],
              waitForLeaders: true,
              timeout: requestTimeoutMs,
            });
          } catch (err) {
            // Another replica created it a moment earlier, and the wait for its leaders saw
            // the topic half-made: partitionCount below waits for it to settle.
            if (!isRetriable(err)) throw err;
          }
          if (created) logger.info({ topic: name, replicationFactor }, 'topic created');
        }
        const partitions = await partitionCount(admin, name);
        if (!created && partitions !== options.partitions) {
          // Adding partitions moves keys to other partitions (per-key order breaks across the
          // change); an operator decides that, never a deploy.
          logger.warn(
            { topic: name, partitions, wanted: options.partitions },
            'topic exists with another partition count; left unchanged',
          );
        }
        return { created, partitions };
      });
    } catch (err) {
      throw toBusError(err);
    }
  }

  /**
   * The topic's partition count once every partition has a leader. Another replica starting at the same moment may have created
   * the topic an instant ago: until its leaders are elected the broker answers a retriable
   * "does not host this topic-partition", so retry that for a few seconds.
   */
  async function partitionCount(admin: Admin, name: string): Promise<number> {
    const deadline = Date.now() + metadataSettleMs;
    for (let delayMs = 50; ; delayMs = Math.min(delayMs * 2, 1_000)) {
      try {
        const { topics } = await admin.fetchTopicMetadata({ topics: [name] });
        const partitions = topics[0]?.partitions ?? [];
        if (partitions.length > 0 && partitions.every((partition) => partition.leader >= 0)) {
          return partitions.length;
        }
        if (Date.now() + delayMs > deadline) return partitions.length;
      } catch (err) {
        if (!isRetriable(err) || Date.now() + delayMs > deadline) throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }

  async function ping(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const handle = acquire();
    try {
      await Promise.race([
        (async () => {
          await handle.connected;
          await handle.admin.describeCluster();
        })(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new BusUnavailableError('timeout')), pingTimeoutMs);
        }),
      ]);
      return true;
    } catch (err) {
      logger.debug({ err }, 'kafka ping failed');
      drop(handle);
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  async function close(): Promise<void> {
    await Promise.all([shared.close(), offsets.close()]);
  }

  async function topicPartitions(name: string): Promise<number> {
    try {
      return await withAdmin((admin) => partitionCount(admin, name));
    } catch (err) {
      throw toBusError(err);
    }
  }

  /**
   * Polls the group's committed offsets until they pass the topic's ends read first. A failed
   * request is tried again (on a new admin client) until the deadline: a broker slow to answer
   * once must not let a reader go ahead of its writer.
   */
  async function consumedBy(
    groupId: string,
    topic: string,
    deadline: number,
    isCancelled: () => boolean,
  ): Promise<boolean> {
    let ends: { partition: number; end: number }[] | undefined;
    for (let delayMs = 20; !isCancelled(); delayMs = Math.min(delayMs * 2, 250)) {
      try {
        const consumed = await offsets.withAdmin(async (admin) => {
          // A partition that keeps no record (empty, or all past retention) holds nothing to
          // wait on.
          ends ??= (await admin.fetchTopicOffsets(topic))
            .filter((p) => Number(p.high) > Number(p.low))
            .map((p) => ({ partition: p.partition, end: Number(p.high) }));
          const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
          // A partition the group never committed on reads -1.
          const next = new Map(committed?.partitions.map((p) => [p.partition, Number(p.offset)]));
          return ends.every(({ partition, end }) => (next.get(partition) ?? -1) >= end);
        });
        if (consumed) return true;
      } catch (err) {
        logger.debug({ err, groupId, topic }, 'consumer offsets could not be read; trying again');
      }
      if (Date.now() + delayMs > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
    return false;
  }

  async function awaitConsumed(
    groupId: string,
    topic: string,
    timeoutMs: number,
  ): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    let expired = false;
    const polling = consumedBy(groupId, topic, Date.now() + timeoutMs, () => expired);
    try {
      // Raced with the deadline: a broker that does not answer must not hold the caller longer.
      return await Promise.race([
        polling,
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), timeoutMs);
        }),
      ]);
    } finally {
      expired = true;
      clearTimeout(timer);
    }
  }

  return { ensureTopic, ping, awaitConsumed, close, partitionCount: topicPartitions };
}
