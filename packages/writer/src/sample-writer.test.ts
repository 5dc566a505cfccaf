import { describe, expect, it } from 'vitest';
import type { ConsumedRecord, RecordBatch } from '@monitor/bus';
import { createLogger, dependencyUnavailable } from '@monitor/platform';
import type { SampleMessage } from '@monitor/schemas';
import { encodeSampleMessage } from '@monitor/schemas';
import type { PendingSample, SampleSink } from './sample-writer.js';
import { createSampleWriter } from './sample-writer.js';

const logger = createLogger({ level: 'silent', name: 'test' });

function message(host: string, value: number): SampleMessage {
  return {
    v: 1,
    org_id: 'org_1',
    host,
    time_ms: 1_790_000_000_000 + value,
    received_ms: 1_790_000_000_000,
    metrics: { cpu_percent: value },
    tags: {},
    containers: [],
    processes: [],
  };
}

function record(offset: number, value: Buffer | null): ConsumedRecord {
  return {
    topic: 'samples',
    partition: 0,
    offset: String(offset),
    key: 'org_1:h',
    value,
    headers: {},
    timestampMs: 0,
  };
}

function batchOf(...values: (Buffer | null)[]): RecordBatch {
  return {
    topic: 'samples',
    partition: 0,
    records: values.map((v, i) => record(i, v)),
    logEndOffset: values.length,
  };
}

/** What the sample store raises when the database is away. */
const transientError = (why: string) => dependencyUnavailable('The database', 1, new Error(why));

function harness(sinkWrite: (samples: readonly PendingSample[]) => Promise<void>) {
  const written: number[][] = [];
  const deadLettered: { offset: string; reason: string }[] = [];
  const counters = { retried: 0, deadLettered: 0 };
  let stopping = false;
  const sink: SampleSink = {
    async write(samples) {
      await sinkWrite(samples);
      written.push(samples.map((s) => Number(s.record.offset)));
      return { samplesWritten: samples.length };
    },
  };
  const writer = createSampleWriter(
    {
      sink,
      deadLetters: {
        send(rec, reason) {
          deadLettered.push({ offset: rec.offset, reason });
          return Promise.resolve();
        },
      },
      metrics: {
        batchWritten: () => undefined,
        deadLettered: () => counters.deadLettered++,
        writeRetried: () => counters.retried++,
      },
      logger,
      isStopping: () => stopping,
      sleep: () => Promise.resolve(),
    },
    { maxBatchMessages: 100, maxBatchWaitMs: 1, retryInitialMs: 1, retryMaxMs: 4 },
  );
  return { writer, written, deadLettered, counters, stop: () => (stopping = true) };
}

describe('createSampleWriter', () => {
  it('writes decoded samples and dead-letters undecodable records with the reason', async () => {
    const h = harness(() => Promise.resolve());
    await h.writer.handleBatch(
      batchOf(
        encodeSampleMessage(message('a', 1)),
        Buffer.from('not json'),
        null,
        encodeSampleMessage(message('b', 2)),
      ),
    );
    expect(h.written).toEqual([[0, 3]]);
    expect(h.deadLettered).toEqual([
      { offset: '1', reason: 'message value is not JSON' },
      { offset: '2', reason: 'empty message value' },
    ]);
  });

  it('retries transient storage failures until the write succeeds, skipping nothing', async () => {
    let failures = 3;
    const h = harness(() =>
      failures-- > 0 ? Promise.reject(transientError('reset')) : Promise.resolve(),
    );
    await h.writer.handleBatch(batchOf(encodeSampleMessage(message('a', 1))));
    expect(h.counters.retried).toBe(3);
    expect(h.written).toEqual([[0]]);
  });

  it('gives up on a transient failure once stopping, so the batch is redelivered', async () => {
    const h = harness(() => Promise.reject(transientError('down')));
    h.stop();
    await expect(
      h.writer.handleBatch(batchOf(encodeSampleMessage(message('a', 1)))),
    ).rejects.toMatchObject({ code: 'dependency_unavailable' });
    expect(h.written).toEqual([]);
  });

  it('isolates a sample that storage rejects permanently and stores the others', async () => {
    const poison = (samples: readonly PendingSample[]) =>
      samples.some((s) => s.sample.host === 'bad')
        ? Promise.reject(new Error('out of range'))
        : Promise.resolve();
    const h = harness(poison);
    await h.writer.handleBatch(
      batchOf(
        ...['a', 'b', 'bad', 'c', 'd'].map((host, i) => encodeSampleMessage(message(host, i))),
      ),
    );
    expect(h.written.flat().sort()).toEqual([0, 1, 3, 4]);
    expect(h.deadLettered).toEqual([{ offset: '2', reason: 'cannot be stored: out of range' }]);
  });

  it('combines concurrent partition batches into one write', async () => {
    const h = harness(() => Promise.resolve());
    await Promise.all([
      h.writer.handleBatch(batchOf(encodeSampleMessage(message('a', 1)))),
      h.writer.handleBatch(batchOf(encodeSampleMessage(message('b', 1)))),
    ]);
    expect(h.written).toHaveLength(1);
    expect(h.written[0]).toHaveLength(2);
  });
});
