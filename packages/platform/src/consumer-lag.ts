import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

const recordsMetricName = 'consumer_lag_records';
const secondsMetricName = 'consumer_lag_seconds';

/** Where a consumer stands on one partition after a batch. */
type PartitionLag = {
  topic: string;
  partition: number;
  /** Records of the partition behind the last one handled. */
  records: number;
  /** The timestamp (time of acceptance) of the last record handled, ms since the epoch. */
  lastTimestampMs: number;
};

/** What one subscription (one Kafka consumer) reports, as `SubscribeOptions` takes it. */
type ConsumerLagReporter = {
  onLag(lag: PartitionLag): void;
  /** The consumer's partitions after a group join (none once it stopped). */
  onAssignment(partitions: readonly { topic: string; partition: number }[]): void;
};

/** Per group, the partitions each subscription of this process holds and how far behind it is. */
type LagBook = Map<string, Set<Map<string, PartitionLag>>>;

/**
 * The lag of a group in seconds of event time: for each partition with records still behind,
 * how long ago the last record handled was accepted (the newest the group has seen is that
 * old, so the records waiting after it have waited at least that long); the most over the
 * partitions this process holds, 0 when none is behind. Computed when scraped, so a consumer
 * stuck in a batch shows it growing. Records' own sample times do not enter it: an agent may send
 * old samples, which is not lag.
 */
function lagSecondsGauge(registry: Registry, nowMs: () => number): { book: LagBook } {
  const existing = registry.getSingleMetric(secondsMetricName) as
    (Gauge & { book: LagBook }) | undefined;
  if (existing !== undefined) return existing;
  const book: LagBook = new Map();
  const gauge = new Gauge({
    name: secondsMetricName,
    help: 'Seconds since the last record a consumer group handled was accepted, while records are behind it (0 when caught up); the most over the partitions this process holds.',
    labelNames: ['group'],
    registers: [registry],
    collect() {
      for (const [group, subscriptions] of book) {
        let seconds = 0;
        for (const partitions of subscriptions) {
          for (const lag of partitions.values()) {
            if (lag.records > 0)
              seconds = Math.max(seconds, (nowMs() - lag.lastTimestampMs) / 1000);
          }
        }
        this.set({ group }, seconds);
      }
    },
  });
  // The book travels with the gauge, so every group of this registry (role `all` runs two)
  // reports into the one metric without a module-level map.
  return Object.assign(gauge, { book });
}

function recordsGauge(registry: Registry): Gauge {
  return (
    (registry.getSingleMetric(recordsMetricName) as Gauge | undefined) ??
    new Gauge({
      name: recordsMetricName,
      help: 'Records of a partition not yet processed by this consumer group, after its last batch.',
      labelNames: ['group', 'topic', 'partition'],
      registers: [registry],
    })
  );
}

/**
 * The lag metrics of one subscription of `groupId`: `consumer_lag_records{group,topic,partition}`
 * after each batch, and `consumer_lag_seconds{group}` (see `lagSecondsGauge`). A partition taken
 * away by a rebalance leaves both, so a replica never reports lag it no longer owns.
 */
export function createConsumerLagReporter(
  registry: Registry,
  groupId: string,
  nowMs: () => number = Date.now,
): ConsumerLagReporter {
  const records = recordsGauge(registry);
  const { book } = lagSecondsGauge(registry, nowMs);
  const held = new Map<string, PartitionLag>();
  const subscriptions = book.get(groupId) ?? new Set();
  subscriptions.add(held);
  book.set(groupId, subscriptions);
  const key = (topic: string, partition: number): string => `${topic}\u0000${partition}`;
  return {
    onLag(lag) {
      held.set(key(lag.topic, lag.partition), lag);
      records.set(
        { group: groupId, topic: lag.topic, partition: String(lag.partition) },
        lag.records,
      );
    },
    onAssignment(partitions) {
      const assigned = new Set(partitions.map((p) => key(p.topic, p.partition)));
      for (const [name, lag] of held) {
        if (assigned.has(name)) continue;
        held.delete(name);
        records.remove({ group: groupId, topic: lag.topic, partition: String(lag.partition) });
      }
    },
  };
}
