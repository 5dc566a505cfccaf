import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { WriterMetrics } from './sample-writer.js';

/** The writer's figures in `registry`, and the restart counter its storage sink reports to. */
export function createWriterMetrics(
  registry: Registry,
): WriterMetrics & { logsRestarted: Counter } {
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
  const logsRestarted = new Counter({
    name: 'writer_log_restarts_total',
    help: 'Partitions whose stored offset was past the end of the log (an earlier log of the topic): offsets started afresh.',
    registers: [registry],
  });
  return {
    logsRestarted,
    batchWritten(hostSamples, samplesWritten, durationMs) {
      batches.observe(hostSamples);
      latency.observe(durationMs / 1000);
      written.inc(samplesWritten);
    },
    deadLettered: (reason) => deadLettered.inc({ reason }),
    writeRetried: () => retries.inc(),
  };
}
