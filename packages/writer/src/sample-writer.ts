import type { ConsumedRecord, DeadLetterSink, RecordBatch } from '@monitor/bus';
import { createConsumerBatchPolicy } from '@monitor/bus';
import type { Logger } from '@monitor/platform';
import { isRetriable } from '@monitor/platform';
import { createBatchAccumulator } from './batch-accumulator.js';
import type {
  DecodedSample,
  PositionedSample,
  RecordHostSample,
  SamplePosition,
  SampleRecordDecoder,
} from '@monitor/schemas';
import { decodeSampleRecord, toHostRecord } from '@monitor/schemas';

/** A decoded host sample with where it came from, so storage can skip what a replay repeats. */
export type PendingSample = {
  record: ConsumedRecord;
  sample: DecodedSample;
  /** Its partition's log end offset when it was read (see `RecordBatch.logEndOffset`). */
  logEndOffset: number;
  /**
   * True when the write holds every storable host of its record: storage records the record's
   * offset with it, and skips it on a replay. False while a record is written host by host (to
   * set one bad host aside): it is then written without a position (idempotent by key), and the
   * record's offset is stored once its last host is done (`SampleSink.write`'s `doneRecords`).
   */
  positioned: boolean;
  /** Its own message and place when its record carries several hosts: to dead-letter it alone. */
  hostOfRecord?: RecordHostSample;
};

/** A write as storage takes it (the db package's `SampleBatch`): see `toSampleWrite`. */
export type SampleWrite = {
  /** Each partition's in offset order. */
  samples: readonly PositionedSample[];
  /** Next offsets to record beyond those of positioned samples (records done host by host). */
  offsets: readonly { partition: number; nextOffset: number }[];
};

/** Where the writer puts samples. */
export type SampleSink = {
  /**
   * Writes every sample in one transaction, together with the next offset of each partition:
   * past the positioned samples' records and past `doneRecords` (records written host by host,
   * or whose hosts were all set aside). Idempotent: positioned samples at offsets already
   * written, and duplicate (service, metric, time), are skipped. Throws a retriable AppError
   * (connection lost, deadlock…) to have the whole write retried; anything else isolates and
   * dead-letters the samples that cause it. `toSampleWrite` gives the write storage takes.
   */
  write(
    samples: readonly PendingSample[],
    doneRecords?: readonly ConsumedRecord[],
  ): Promise<{ samplesWritten: number }>;
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
  /** The wait before a write that failed transiently (connection lost) is retried, doubled per retry… */
  retryInitialMs: number;
  /**
   * …up to this. Keep it short: while the database is away an attempt costs a refused connect,
   * and the first attempt after a promotion is what ends the outage for storage.
   */
  retryMaxMs: number;
  /**
   * How many writes (transactions, each on its own connection) a flush runs at once, its
   * partitions shared out between them. A partition's samples are always in one of them, so
   * per-partition order and offsets stay as with one. Default 1.
   */
  writeConnections?: number;
  /**
   * A transient failure hands the batch back to the bus (which redelivers it after a backoff,
   * its partition paused meanwhile) instead of retrying in place: with several sample shards,
   * one shard that is away must not hold up the bus's fetches of the others' partitions.
   * Default false.
   */
  redeliverTransientFailures?: boolean;
};

export type SampleWriterDeps = {
  sink: SampleSink;
  deadLetters: DeadLetterSink;
  metrics: WriterMetrics;
  logger: Logger;
  /** True once shutdown began: a transient failure then gives up so the batch is redelivered. */
  isStopping: () => boolean;
  sleep?: (ms: number) => Promise<void>;
  /** Decodes a record's value. Default: `decodeSampleRecord`. */
  decodeRecord?: SampleRecordDecoder;
};

/** A transient failure that keeps on is logged once per this many retries. */
const retriesPerLogLine = 20;

/**
 * The writer's consumer logic, free of Kafka and SQL. `handleBatch` resolves only once every
 * host of every record of the batch is stored or dead-lettered; it throws (so nothing is
 * committed) when it gives up on a transient failure during shutdown.
 *
 * The record is the unit stored, retried and skipped: a replay is skipped by record offset, so
 * a write never holds part of a record with its position (the rest would then be skipped as a
 * replay). A permanent failure is bisected by record; a record that fails alone is written host
 * by host without positions, the failing host dead-lettered alone, and its offset stored after.
 */
export function createSampleWriter(deps: SampleWriterDeps, options: SampleWriterOptions) {
  const decodeRecord = deps.decodeRecord ?? decodeSampleRecord;
  const log = deps.logger;

  async function writeSamples(
    samples: readonly PendingSample[],
    doneRecords: readonly ConsumedRecord[] = [],
  ): Promise<void> {
    const startedMs = performance.now();
    const { samplesWritten } = await deps.sink.write(samples, doneRecords);
    deps.metrics.batchWritten(samples.length, samplesWritten, performance.now() - startedMs);
  }

  /** A permanent error fails the whole transaction: the policy finds the samples that cause it. */
  const policy = createConsumerBatchPolicy<PendingSample>(
    {
      recordOf: (sample) => sample.record,
      process: (samples) => writeSamples(samples),
      splitRecord: (samples) => samples,
      // Without its position: the first host stored must not make a replay skip the others.
      processAlone: (sample) => writeSamples([{ ...sample, positioned: false }]),
      setAside: deadLetterUnstorable,
      commitPast: (record) => writeSamples([], [record]),
      // A transient failure gives up once stopping (or at once if asked), so that the batch is
      // redelivered.
      handlingOf: (err) =>
        !isRetriable(err)
          ? 'isolate'
          : deps.isStopping() || options.redeliverTransientFailures === true
            ? 'redeliver'
            : 'retry',
      onRetry: (err, retryInMs, attempt) => {
        deps.metrics.writeRetried();
        // The first failure and then every 20th: retries come several times a second while the
        // database is away (see SampleWriterOptions), and the metric counts each one.
        if (attempt === 1 || attempt % retriesPerLogLine === 0)
          log.warn({ err, retryInMs, attempt }, 'storage write failed; retrying');
      },
      sleep: deps.sleep,
    },
    {
      attemptsBeforeSetAside: 1,
      retryInitialMs: options.retryInitialMs,
      retryMaxMs: options.retryMaxMs,
    },
  );

  async function deadLetterUnstorable(pending: PendingSample, err: Error): Promise<void> {
    const { record, sample } = pending;
    log.error(
      { err, partition: record.partition, offset: record.offset, host: sample.host },
      'sample cannot be stored; dead-lettered',
    );
    const hostRecord = hostRecordOf(pending);
    await deps.deadLetters.send(hostRecord, `cannot be stored: ${err.message}`);
    deps.metrics.deadLettered('unstorable');
  }

  const writeConnections = options.writeConnections ?? 1;
  const accumulator = createBatchAccumulator<PendingSample>({
    maxItems: options.maxBatchMessages,
    maxWaitMs: options.maxBatchWaitMs,
    flush: async (samples) => {
      const lanes = byPartitionLanes(samples, writeConnections);
      if (lanes.length === 1) return policy.handle(samples);
      // Every lane runs to its end: a lane that failed for good has nothing to do with the others.
      const outcomes = await Promise.allSettled(lanes.map((lane) => policy.handle(lane)));
      const failed = outcomes.find((outcome) => outcome.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    },
  });

  /** The dead letter of one host: its record itself, or its own message out of a many-host record. */
  function hostRecordOf(pending: PendingSample): ConsumedRecord {
    const host = pending.hostOfRecord;
    return host === undefined ? pending.record : toHostRecord(pending.record, host);
  }

  return {
    async handleBatch(batch: RecordBatch): Promise<void> {
      const samples: PendingSample[] = [];
      const whollyBad: ConsumedRecord[] = [];
      for (const record of batch.records) {
        const decoded = decodeRecord(record.value);
        if (!decoded.ok) {
          await deadLetterUndecodable(record, decoded.reason);
          continue;
        }
        const hosts = decoded.value;
        let stored = 0;
        for (const host of hosts) {
          if (!host.decoded.ok) {
            await deadLetterUndecodable(
              hosts.length === 1 ? record : toHostRecord(record, host),
              host.decoded.reason,
            );
            continue;
          }
          const pending: PendingSample = {
            record,
            sample: host.decoded.value,
            logEndOffset: batch.logEndOffset,
            positioned: true,
            // A field, not a WeakMap entry per host: those cost the collector on every batch.
            hostOfRecord: hosts.length > 1 ? host : undefined,
          };
          samples.push(pending);
          stored++;
        }
        // A many-host record none of whose hosts decoded: its offset, so a replay skips it.
        if (stored === 0 && hosts.length > 1) whollyBad.push(record);
      }
      await accumulator.add(samples);
      if (whollyBad.length > 0) await policy.retrying(() => writeSamples([], whollyBad));
    },
    /** Writes whatever is waiting; call on shutdown before the consumer commits. */
    drain: () => accumulator.drain(),
  };

  async function deadLetterUndecodable(record: ConsumedRecord, reason: string): Promise<void> {
    log.warn(
      { partition: record.partition, offset: record.offset, reason },
      'undecodable sample dead-lettered',
    );
    await deps.deadLetters.send(record, reason);
    deps.metrics.deadLettered('undecodable');
  }
}

/**
 * Up to `lanes` groups of whole partitions, their sizes evened out (largest partitions first,
 * each to the lightest lane), each partition's samples in their order.
 */
export function byPartitionLanes<T extends { record: { partition: number } }>(
  samples: readonly T[],
  lanes: number,
): T[][] {
  const partitions = new Map<number, T[]>();
  for (const sample of samples) {
    const list = partitions.get(sample.record.partition);
    if (list === undefined) partitions.set(sample.record.partition, [sample]);
    else list.push(sample);
  }
  if (lanes <= 1 || partitions.size <= 1) return [samples as T[]];
  const groups: T[][] = Array.from({ length: Math.min(lanes, partitions.size) }, () => []);
  for (const list of [...partitions.values()].sort((a, b) => b.length - a.length)) {
    let lightest = groups[0] as T[];
    for (const group of groups) if (group.length < lightest.length) lightest = group;
    lightest.push(...list);
  }
  return groups;
}

/**
 * The write storage takes: positioned samples carry their record's position (one object per
 * record, its hosts being consecutive), and records done host by host their next offsets.
 */
export function toSampleWrite(
  samples: readonly PendingSample[],
  doneRecords: readonly ConsumedRecord[] = [],
): SampleWrite {
  let positionOf: { record: ConsumedRecord; position: SamplePosition } | undefined;
  return {
    samples: samples.map(({ record, sample, logEndOffset, positioned }): PositionedSample => {
      if (!positioned) return sample;
      if (positionOf?.record !== record) {
        const position = {
          partition: record.partition,
          offset: Number(record.offset),
          logEndOffset,
        };
        positionOf = { record, position };
      }
      // Field by field, in one order: one object shape for the store's loops over them.
      return {
        orgId: sample.orgId,
        host: sample.host,
        timeMs: sample.timeMs,
        metrics: sample.metrics,
        tags: sample.tags,
        tagsLabelSeries: sample.tagsLabelSeries,
        staleMetrics: sample.staleMetrics,
        exemplars: sample.exemplars,
        histograms: sample.histograms,
        containers: sample.containers,
        processes: sample.processes,
        position: positionOf.position,
      };
    }),
    offsets: doneRecords.map((record) => ({
      partition: record.partition,
      nextOffset: Number(record.offset) + 1,
    })),
  };
}

/** The writer's consumer logic of one sink (see `createSampleWriter`). */
export type SampleWriter = ReturnType<typeof createSampleWriter>;
