import type { Bus, SubscribeOptions, Subscription } from '@monitor/bus';
import type { Database } from '@monitor/db';
import { createSampleStore, isTransientDbError, runMaintenance } from '@monitor/db';
import type { SampleSink, WriterMetrics } from '@monitor/writer';
import { createSampleWriter } from '@monitor/writer';
import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { RoleContext } from '../role-context.js';
import { createLagGauge } from './lag-gauge.js';

export const writerGroupId = 'writer';
const maintenanceIntervalMs = 60_000;

/**
 * Consumes the samples topic in group `writer` and stores every sample. Offsets are committed by
 * the bus only after `handleBatch` resolved, i.e. after the database transaction committed.
 */
export async function startSampleWriter(
  ctx: RoleContext,
  deps: { db: Database; bus: Bus },
): Promise<Subscription> {
  const { config } = ctx;
  const logger = ctx.logger.child({ component: 'writer' });
  const store = createSampleStore(deps.db);
  const sink: SampleSink = {
    write: (samples) =>
      store.writeBatch(
        {
          samples: samples.map(({ record, message }) => ({
            orgId: message.org_id,
            host: message.host,
            timeMs: message.time_ms,
            metrics: message.metrics,
            tags: message.tags,
            containers: message.containers,
            processes: message.processes,
            position: { partition: record.partition, offset: Number(record.offset) },
          })),
        },
        { groupId: writerGroupId, topic: config.SAMPLES_TOPIC },
      ),
    isTransient: isTransientDbError,
  };
  const writerMetrics = createWriterMetrics(ctx.metrics.registry);
  const writer = createSampleWriter(
    {
      sink,
      deadLetters: deps.bus.deadLetters(),
      metrics: writerMetrics,
      logger,
      isStopping: () => ctx.shutdown.isShuttingDown,
    },
    {
      maxBatchMessages: config.WRITER_BATCH_MAX_MESSAGES,
      maxBatchWaitMs: config.WRITER_BATCH_MAX_WAIT_MS,
      retryInitialMs: 100,
      retryMaxMs: 10_000,
    },
  );
  const subscription = await deps.bus.subscribe({
    groupId: writerGroupId,
    topics: [config.SAMPLES_TOPIC],
    fromBeginning: true,
    handleBatch: (batch) => writer.handleBatch(batch),
    // Every partition's batch may be in flight at once, so one transaction carries them all.
    partitionsConsumedConcurrently: config.SAMPLES_TOPIC_PARTITIONS,
    sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
    onLag: writerMetrics.lag,
  });
  ctx.shutdown.onShutdown('writer consumer', () => subscription.stop());
  startMaintenance(ctx, deps.db);
  return subscription;
}

/**
 * Partitions and rollups of the plain PostgreSQL mode (a no-op on TimescaleDB, whose jobs do
 * it), and the alert history past ALERT_RETENTION_DAYS in both modes.
 */
function startMaintenance(ctx: RoleContext, db: Database): void {
  const logger = ctx.logger.child({ component: 'maintenance' });
  const options = { alertRetentionDays: ctx.config.ALERT_RETENTION_DAYS };
  const run = (): void => {
    runMaintenance(db, new Date(), options)
      .then(({ pruned }) => {
        if (pruned.alerts + pruned.investigations > 0)
          logger.info({ pruned }, 'alert history pruned');
      })
      .catch((err: unknown) => logger.warn({ err }, 'storage maintenance failed'));
  };
  const timer = setInterval(run, maintenanceIntervalMs);
  timer.unref();
  ctx.shutdown.onShutdown('maintenance', () => clearInterval(timer));
}

function createWriterMetrics(
  registry: Registry,
): WriterMetrics & { lag: NonNullable<SubscribeOptions['onLag']> } {
  const batches = new Histogram({
    name: 'writer_batch_host_samples',
    help: 'Host samples (Kafka messages) per storage batch.',
    buckets: [1, 10, 100, 500, 1000, 2500, 5000, 10000],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'writer_batch_write_seconds',
    help: 'Time to write one batch in one transaction.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const written = new Counter({
    name: 'writer_samples_written_total',
    help: 'Metric samples written to storage (duplicates excluded).',
    registers: [registry],
  });
  const deadLettered = new Counter({
    name: 'writer_dead_letters_total',
    help: 'Messages sent to the dead-letter topic, by reason.',
    labelNames: ['reason'],
    registers: [registry],
  });
  const retries = new Counter({
    name: 'writer_write_retries_total',
    help: 'Storage writes retried after a transient error.',
    registers: [registry],
  });
  return {
    batchWritten(hostSamples, samplesWritten, durationMs) {
      batches.observe(hostSamples);
      latency.observe(durationMs / 1000);
      written.inc(samplesWritten);
    },
    deadLettered: (reason) => deadLettered.inc({ reason }),
    writeRetried: () => retries.inc(),
    lag: createLagGauge(registry, writerGroupId),
  };
}
