/**
 * The consumers thread of role `all`: the bus, the writer, the evaluator, the notifier and the
 * investigator, with their own database pool, so that storing and evaluating run on a second
 * core while the main thread answers HTTP. The thread's entry point, as `main.ts` is the
 * process's: only this file touches the thread's ports and its exit.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Publisher } from '@monitor/bus';
import { deadLetterTopic, servePublisher } from '@monitor/bus';
import { createMetrics, createShutdown } from '@monitor/platform';
import { createSharedSampleRecordDecoder } from '@monitor/schemas';
import {
  evaluatorSliceFields,
  investigatorFields,
  notifierFields,
  sliceOf,
  writerSliceFields,
} from '../config.js';
import { evaluatorGroupId, writerGroupId } from '../consumer-groups.js';
import { openBus, openDatabase } from '../dependencies.js';
import { createProcessLogger } from '../process-logger.js';
import type { RoleContext } from '../role-context.js';
import { openRoutedSampleShards } from '../sample-shards.js';
import type {
  ConsumersReply,
  ConsumersRequest,
  ConsumersWorkerData,
} from './consumers-thread-messages.js';
import { startAlertEvaluator } from './evaluator-role.js';
import { ingestPublisherOptions } from './gateway-role.js';
import { startInvestigator } from './investigator-role.js';
import { startNotifier } from './notifier-role.js';
import { startSampleWriter } from './writer-role.js';

const control = parentPort;
if (control === null) throw new Error('consumers-worker runs as a worker thread of role all');
const { config, databaseUrl, publishPort } = workerData as ConsumersWorkerData;
const reply = (message: ConsumersReply): void => control.postMessage(message);

const logger = createProcessLogger(config, 'monitor-all').child({ thread: 'consumers' });
const shutdown = createShutdown({ logger, timeoutMs: config.SHUTDOWN_TIMEOUT_MS });
// Process metrics (CPU, memory, GC) come from the main thread: they describe the whole process.
const metrics = createMetrics({ defaultMetrics: false, defaultLabels: { role: 'all' } });
const ctx: RoleContext = { logger, metrics, shutdown };

const db = openDatabase(ctx, config, databaseUrl, 'monitor-all-consumers');
let busCheck: () => Promise<boolean> = () => Promise.resolve(false);

control.on('message', (request: ConsumersRequest) => {
  switch (request.type) {
    case 'check':
      void Promise.all([db.ping().then(() => true), busCheck()])
        .then(([database, bus]) => database && bus)
        .catch(() => false)
        .then((ok) => reply({ type: 'check', id: request.id, ok }));
      return;
    case 'metrics':
      void metrics.registry
        .getMetricsAsJSON()
        .then((json) => reply({ type: 'metrics', id: request.id, metrics: json }));
      return;
    case 'stop':
      void shutdown.shutdown('role all stopping').then((result) => {
        reply({ type: 'stopped', ok: result.ok });
        control.close();
      });
      return;
  }
});

try {
  const bus = await openBus(ctx, db, config);
  busCheck = () => bus.admin.ping();
  // The in-process bus's log has one partition: the requests that arrive while the writer's
  // (and the evaluator's) transaction commits all go into its next one. Partitions would only
  // split them into more, smaller transactions on the same database (6 partitions: 1,092
  // requests/s against 2,649 for one, at 3.4 times the transactions).
  const samples = publishPort === undefined ? config : { ...config, SAMPLES_TOPIC_PARTITIONS: 1 };
  const samplesTopic = await bus.admin.ensureTopic(config.SAMPLES_TOPIC, {
    partitions: samples.SAMPLES_TOPIC_PARTITIONS,
  });
  await bus.admin.ensureTopic(deadLetterTopic(config.SAMPLES_TOPIC), { partitions: 1 });
  // The in-process bus hands the writer and the evaluator the same record values: each is
  // decoded once (Kafka consumers get values of their own).
  const decodeRecord = publishPort === undefined ? undefined : createSharedSampleRecordDecoder();
  const consumerDeps = { db, bus, decodeRecord };
  const shards = await openRoutedSampleShards(
    ctx,
    config,
    { url: databaseUrl, primary: db },
    config.SAMPLES_TOPIC,
  );
  await startSampleWriter(ctx, sliceOf(writerSliceFields, samples), { ...consumerDeps, shards });
  await startAlertEvaluator(ctx, sliceOf(evaluatorSliceFields, samples), {
    ...consumerDeps,
    shards,
    samplesPartitions: samplesTopic.partitions,
  });
  startNotifier(ctx, sliceOf(notifierFields, config), db);
  startInvestigator(ctx, sliceOf(investigatorFields, config), db, shards.all);
  if (publishPort !== undefined) {
    // Without Kafka nothing durable stands between the gateway and the consumers: an ingest is
    // answered once the writer has stored its samples and the evaluator checkpointed their effect.
    const publisher: Publisher = bus.publisher({
      ...ingestPublisherOptions(config),
      ackAfterConsumedBy: [writerGroupId, evaluatorGroupId],
    });
    const served = servePublisher(publishPort, publisher);
    shutdown.onShutdown('ingest publisher', async () => {
      await served.close();
      await publisher.close();
    });
  }
  reply({ type: 'ready' });
} catch (err) {
  logger.fatal({ err }, 'consumers thread failed to start');
  await shutdown.shutdown('start failed');
  reply({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
  control.close();
}
