import type { ConsumedRecord, DeadLetterSink, RecordBatch } from '@monitor/bus';
import type { Logger } from '@monitor/platform';
import { isRetriable } from '@monitor/platform';
import { createBatchAccumulator } from './batch-accumulator.js';
import type { DecodedSample } from '@monitor/schemas';
import { decodeSampleRecord } from '@monitor/schemas';

/** A decoded host sample with where it came from, so storage can skip what a replay repeats. */
export type PendingSample = {
  record: ConsumedRecord;
  sample: DecodedSample;
  /** Its partition's log end offset when it was read (see `RecordBatch.logEndOffset`). */
  logEndOffset: number;
};

/** Where the writer puts samples. */
export type SampleSink = {
  /**
   * Writes every sample in one transaction, together with each partition's next offset.
   * Idempotent: samples at offsets already written, and duplicate (service, metric, time), are
   * skipped. Throws a retriable AppError (connection lost, deadlock…) to have the whole batch
   * retried; anything else isolates and dead-letters the samples that cause it.
   */
  write(samples: readonly PendingSample[]): Promise<{ samplesWritten: number }>;
};

export type WriterMetrics = {
  batchWritten(hostSamples: number, samplesWritten: number, durationMs: number): void;
  deadLettered(reason: 'undecodable' | 'unstorable'): void;
  writeRetried(): void;
};

export type SampleWriterOptions = {
  /** Flush once this many host samples are waiting… */
  maxBatchMessages: number;
  /** …or this long after the first one arrived. */
  maxBatchWaitMs: number;
  retryInitialMs: number;
  retryMaxMs: number;
};

export type SampleWriterDeps = {
  sink: SampleSink;
  deadLetters: DeadLetterSink;
  metrics: WriterMetrics;
  logger: Logger;
  /** True once shutdown began: a transient failure then gives up so the batch is redelivered. */
  isStopping: () => boolean;
  sleep?: (ms: number) => Promise<void>;
};

/**
 * The writer's consumer logic, free of Kafka and SQL. `handleBatch` resolves only once every
 * record of the batch is stored or dead-lettered; it throws (so nothing is committed) when it
 * gives up on a transient failure during shutdown.
 */
export function createSampleWriter(deps: SampleWriterDeps, options: SampleWriterOptions) {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const log = deps.logger;

  async function writeWithRetry(samples: PendingSample[]): Promise<void> {
    let delayMs = options.retryInitialMs;
    for (;;) {
      const startedMs = performance.now();
      try {
        const { samplesWritten } = await deps.sink.write(samples);
        deps.metrics.batchWritten(samples.length, samplesWritten, performance.now() - startedMs);
        return;
      } catch (err) {
        if (!isRetriable(err)) return isolatePermanentFailure(samples, err);
        if (deps.isStopping()) throw err;
        deps.metrics.writeRetried();
        log.warn(
          { err, hostSamples: samples.length, retryInMs: delayMs },
          'storage write failed; retrying',
        );
        await sleep(delayMs);
        delayMs = Math.min(delayMs * 2, options.retryMaxMs);
      }
    }
  }

  /**
   * A permanent error fails the whole transaction; bisect to find the samples that cause it,
   * store the rest, and dead-letter only those.
   */
  async function isolatePermanentFailure(samples: PendingSample[], err: unknown): Promise<void> {
    if (samples.length === 1) {
      const [sample] = samples as [PendingSample];
      log.error(
        { err, partition: sample.record.partition, offset: sample.record.offset },
        'sample cannot be stored; dead-lettered',
      );
      await deps.deadLetters.send(sample.record, `cannot be stored: ${describe(err)}`);
      deps.metrics.deadLettered('unstorable');
      return;
    }
    const middle = Math.ceil(samples.length / 2);
    await writeWithRetry(samples.slice(0, middle));
    await writeWithRetry(samples.slice(middle));
  }

  const accumulator = createBatchAccumulator<PendingSample>({
    maxItems: options.maxBatchMessages,
    maxWaitMs: options.maxBatchWaitMs,
    flush: writeWithRetry,
  });

  return {
    async handleBatch(batch: RecordBatch): Promise<void> {
      const samples: PendingSample[] = [];
      for (const record of batch.records) {
        const decoded = decodeSampleRecord(record.value);
        if (decoded.ok) {
          samples.push({ record, sample: decoded.value, logEndOffset: batch.logEndOffset });
        } else {
          log.warn(
            { partition: record.partition, offset: record.offset, reason: decoded.reason },
            'undecodable sample dead-lettered',
          );
          await deps.deadLetters.send(record, decoded.reason);
          deps.metrics.deadLettered('undecodable');
        }
      }
      await accumulator.add(samples);
    },
    /** Writes whatever is waiting; call on shutdown before the consumer commits. */
    drain: () => accumulator.drain(),
  };
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
