import type { Bus, Subscription } from '@monitor/bus';
import type { Database, RollupChunkSetAside } from '@monitor/db';
import { createSampleStore, PartitionMovedError, runMaintenance } from '@monitor/db';
import type { SampleSink, SampleWriter } from '@monitor/writer';
import { createSampleWriter, createWriterMetrics, toSampleWrite } from '@monitor/writer';
import { createConsumerLagReporter } from '@monitor/platform';
import type { SampleRecordDecoder } from '@monitor/schemas';
import { Counter, Gauge } from 'prom-client';
import type { BusConfig, ConsumerConfig, WriterConfig } from '../config.js';
import { writerGroupId } from '../consumer-groups.js';
import { stoppingAtMoveMarkers } from '../partition-move-markers.js';
import type { RoleContext } from '../role-context.js';
import type { SampleShard, SampleShards } from '../sample-shards.js';

const maintenanceIntervalMs = 60_000;

/**
 * Consumes the samples topic in group `writer` and stores every sample. Offsets are committed by
 * the bus only after `handleBatch` resolved, i.e. after the database transaction committed.
 *
 * With Kafka it runs `WRITER_CONSUMERS` consumers of the group, each with its own batches and
 * transactions: kafkajs fetches again only once every handler of its last fetch resolved, so
 * one consumer leaves PostgreSQL idle while it fetches and decodes, and Kafka idle while it
 * writes; several overlap those. They own different partitions, hence different hosts.
 */
export async function startSampleWriter(
  ctx: RoleContext,
  config: WriterConfig &
    ConsumerConfig &
    Pick<BusConfig, 'SAMPLES_TOPIC' | 'SAMPLES_TOPIC_PARTITIONS'> & {
      /** Unset: the in-process bus of role `all`. */
      KAFKA_BROKERS?: BusConfig['KAFKA_BROKERS'] | undefined;
    },
  deps: {
    /** The control database: its maintenance (alert history) beside the shards'. */
    db: Database;
    /** Where each partition's samples go, with the partition's offsets. */
    shards: SampleShards;
    bus: Bus;
    /** Role `all`: the decoder its evaluator shares (the in-process bus hands both the same values). */
    decodeRecord?: SampleRecordDecoder;
  },
): Promise<Subscription> {
  const logger = ctx.logger.child({ component: 'writer' });
  const writerMetrics = createWriterMetrics(ctx.metrics.registry);
  const duplicates = new Counter({
    name: 'monitor_samples_duplicate_total',
    help:
      'Samples not stored because their series already held a value at their time (the first ' +
      'value stands): the same value again, or a different one, dropped.',
    labelNames: ['reason'],
    registers: [ctx.metrics.registry],
  });
  // Shown at 0 from the start, so that a rate over it has a series before the first one.
  for (const reason of ['same_value', 'different_value']) duplicates.inc({ reason }, 0);
  /** A shard's sink: its partitions' samples and offsets in one transaction on that shard. */
  const sinkOf = (shard: SampleShard): SampleSink => {
    const store = createSampleStore(shard.db, {
      lateAfterMs: config.PROMQL_CACHE_SETTLED_MS / 2,
    });
    return {
      write: async (samples, doneRecords) => {
        const result = await store.writeBatch(toSampleWrite(samples, doneRecords), {
          groupId: writerGroupId,
          topic: config.SAMPLES_TOPIC,
        });
        const sameValues = result.duplicatesSkipped - result.differentValuesDropped;
        if (sameValues > 0) duplicates.inc({ reason: 'same_value' }, sameValues);
        if (result.differentValuesDropped > 0) {
          duplicates.inc({ reason: 'different_value' }, result.differentValuesDropped);
        }
        if (result.partitionsRestarted.length > 0) {
          writerMetrics.logsRestarted.inc(result.partitionsRestarted.length);
          logger.warn(
            {
              topic: config.SAMPLES_TOPIC,
              partitions: result.partitionsRestarted,
              shard: shard.name,
            },
            'stored offsets were past the end of the log (topic created again?); the partitions start afresh',
          );
        }
        return result;
      },
    };
  };
  const sinks = new Map(deps.shards.all.map((shard) => [shard, sinkOf(shard)]));
  const sharded = deps.shards.all.length > 1;
  let mapRead: Promise<void> = Promise.resolve();
  const readMapAgain = (): Promise<void> =>
    deps.shards.reload().catch((err: unknown) => {
      logger.warn({ err }, 'the partition map could not be read again; keeping the last one');
    });
  const subscribeConsumer = (): Promise<Subscription> => {
    // One writer per shard, each with its own batches: a batch (one partition) waits only for
    // its own shard's writes, and a write never spans two shards' transactions.
    const writers = new Map(
      [...sinks].map(([shard, sink]) => [
        shard,
        createSampleWriter(
          {
            sink,
            deadLetters: deps.bus.deadLetters(),
            metrics: writerMetrics,
            logger: deps.shards.all.length === 1 ? logger : logger.child({ shard: shard.name }),
            isStopping: () => ctx.shutdown.isShuttingDown,
            decodeRecord: deps.decodeRecord,
          },
          {
            maxBatchMessages: config.WRITER_BATCH_MAX_MESSAGES,
            maxBatchWaitMs:
              config.WRITER_BATCH_MAX_WAIT_MS ?? (config.KAFKA_BROKERS === undefined ? 0 : 10),
            retryInitialMs: 100,
            // A retry at most a quarter of a second after the database accepts writes again (a
            // promotion), paced while it is away by the pool's reconnect wait (as long at most):
            // storage resumes within a second of it, the write included. The bus heartbeats
            // meanwhile.
            retryMaxMs: 250,
            writeConnections: config.WRITER_WRITE_CONNECTIONS,
            redeliverTransientFailures: sharded,
          },
        ),
      ]),
    );
    const handleAroundMarkers = stoppingAtMoveMarkers(
      'writer',
      { control: deps.db, shards: deps.shards, logger },
      // The shard of each batch as the map has it when the batch is handled.
      (batch) =>
        (writers.get(deps.shards.shardOf(batch.partition)) as SampleWriter).handleBatch(batch),
    );
    const lagReporter = createConsumerLagReporter(ctx.metrics.registry, writerGroupId);
    return deps.bus.subscribe({
      groupId: writerGroupId,
      topics: [config.SAMPLES_TOPIC],
      fromBeginning: true,
      handleBatch: async (batch, batchCtx) => {
        await mapRead;
        try {
          await handleAroundMarkers(batch, batchCtx);
        } catch (err) {
          // Stored nowhere: the partition moved since this writer read the map.
          if (err instanceof PartitionMovedError) await readMapAgain();
          throw err;
        }
      },
      // Every partition's batch may be in flight at once, so one transaction per shard carries
      // them all.
      partitionsConsumedConcurrently: config.SAMPLES_TOPIC_PARTITIONS,
      // With several shards, a shard that is away pauses its partitions only (redelivered after
      // a backoff of at most a second): the others' are still fetched and stored meanwhile.
      ...(sharded ? { pauseFailingPartitions: true, retryInitialMs: 100, retryMaxMs: 1_000 } : {}),
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
      onLag: (lag) => lagReporter.onLag(lag),
      onAssignment: (partitions) => {
        lagReporter.onAssignment(partitions);
        // A partition may have moved while another writer held it: the map as of now, before
        // the new partitions' first batch.
        if (sharded) mapRead = readMapAgain();
      },
      maxBytesPerPartition: config.WRITER_FETCH_MAX_BYTES_PER_PARTITION,
    });
  };
  // The in-process bus allows one subscription per group, and has no fetches to overlap.
  const consumers = config.KAFKA_BROKERS === undefined ? 1 : config.WRITER_CONSUMERS;
  // Subscribed together, so they join in one rebalance rather than one after the other.
  const settled = await Promise.allSettled(
    Array.from({ length: consumers }, () => subscribeConsumer()),
  );
  const subscriptions = settled.flatMap((each) =>
    each.status === 'fulfilled' ? [each.value] : [],
  );
  const subscription: Subscription = {
    stop: async () => {
      await Promise.all(subscriptions.map((each) => each.stop()));
    },
  };
  const failed = settled.find((each) => each.status === 'rejected');
  if (failed !== undefined) {
    await subscription.stop();
    throw failed.reason;
  }
  ctx.shutdown.onShutdown('writer consumer', () => subscription.stop());
  startMaintenance(ctx, config, deps.db, deps.shards);
  return subscription;
}

/**
 * The storage upkeep the database does not do by itself (plain PostgreSQL: partitions, rollups
 * and their retention; TimescaleDB: nothing while its job scheduler runs the refresh,
 * compression and retention jobs, the aggregates' refresh on a server without one), and the
 * alert history past ALERT_RETENTION_DAYS on both.
 */
function startMaintenance(
  ctx: RoleContext,
  config: WriterConfig,
  control: Database,
  shards: SampleShards,
): void {
  const logger = ctx.logger.child({ component: 'maintenance' });
  const setAside = new Counter({
    name: 'maintenance_rollups_set_aside_total',
    help: 'One organization’s rollup window set aside because its data failed the statement (the others moved on).',
    labelNames: ['rollup'],
    registers: [ctx.metrics.registry],
  });
  // How far each kept tier is stored: it should stay about 6 hours past the raw retention's
  // edge (now − RAW_RETENTION_DAYS); further behind, the raw samples go before it is stored.
  const tierFilledTo = new Gauge({
    name: 'maintenance_tier_filled_to_seconds',
    help: 'The end of the buckets each kept rollup tier has stored for every series (Unix time).',
    labelNames: ['tier'],
    registers: [ctx.metrics.registry],
  });
  const options = {
    alertRetentionDays: config.ALERT_RETENTION_DAYS,
    rawRetentionDays: config.RAW_RETENTION_DAYS,
    storageMoveBatchesPerRun: config.STORAGE_MOVE_BATCHES_PER_RUN,
    onRollupSetAside: (chunk: RollupChunkSetAside) => {
      setAside.inc({ rollup: chunk.rollup });
      logger.error(
        {
          orgId: chunk.orgId,
          rollup: chunk.rollup,
          from: chunk.from,
          to: chunk.to,
          sqlState: chunk.sqlState,
          reason: chunk.message,
        },
        'rollup window of an organization set aside: its data failed the statement',
      );
    },
  };
  // Each shard's samples, and the control database's alert history where it is no shard.
  const databases = [
    ...shards.all.map((shard) => ({ db: shard.db, shard: shard.name })),
    ...(shards.all.some((shard) => shard.db === control) ? [] : [{ db: control, shard: null }]),
  ];
  /** One database after the other; a tier is as far filled as its least filled shard. */
  const maintainEach = async (now: Date): Promise<void> => {
    const filled = new Map<string, number>();
    let everyShard = true;
    for (const { db, shard } of databases) {
      const log = shard === null || shards.all.length === 1 ? logger : logger.child({ shard });
      const outcome = await runMaintenance(db, now, options).catch((err: unknown) => {
        log.warn({ err }, 'storage maintenance failed'); // the other shards' goes on
        return null;
      });
      if (outcome === null) {
        everyShard = everyShard && shard === null;
        continue;
      }
      const { pruned, moved, tiers } = outcome;
      if (shard !== null) {
        for (const { tier, filledToMs } of tiers.filled) {
          filled.set(tier, Math.min(filled.get(tier) ?? Infinity, filledToMs));
        }
      }
      if (tiers.filled.some((tier) => tier.rows > 0) || tiers.pruned > 0)
        log.info({ tiers }, 'rollup tiers stored before the raw samples go');
      if (pruned.alerts + pruned.investigations + pruned.watermarks > 0)
        log.info({ pruned }, 'history past retention pruned');
      if (moved.batches > 0) log.info({ moved }, 'stored samples moved to the new layout');
    }
    // A shard that failed leaves the gauges as they were: its tiers may be behind the others'.
    if (everyShard)
      for (const [tier, filledToMs] of filled) tierFilledTo.set({ tier }, filledToMs / 1000);
  };
  // One run at a time: a run that outlasts its minute (a backlog) makes the next tick skip.
  let running = false;
  const run = (): void => {
    if (running) return;
    running = true;
    void maintainEach(new Date()).finally(() => {
      running = false;
    });
  };
  const timer = setInterval(run, maintenanceIntervalMs);
  timer.unref();
  ctx.shutdown.onShutdown('maintenance', () => clearInterval(timer));
}
