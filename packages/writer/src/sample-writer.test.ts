import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildSampleMessage } from '@monitor/testkit/builders';
import type { ConsumedRecord, RecordBatch } from '@monitor/bus';
import { createLogger, dependencyUnavailable } from '@monitor/platform';
import type { SampleMessage } from '@monitor/schemas';
import { encodeSampleMessage, encodeSampleRecord } from '@monitor/schemas';
import type { PendingSample, SampleSink } from './sample-writer.js';
import { byPartitionLanes, createSampleWriter, toSampleWrite } from './sample-writer.js';

const logger = createLogger({ level: 'silent', name: 'test' });

function message(host: string, value: number): SampleMessage {
  return buildSampleMessage({
    org_id: 'org_1',
    host,
    time_ms: 1_790_000_000_000 + value,
    received_ms: 1_790_000_000_000,
    metrics: { cpu_percent: value },
  });
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
  const writes: { hosts: string[]; positioned: boolean[]; doneOffsets: string[] }[] = [];
  const deadLettered: {
    offset: string;
    reason: string;
    key?: string | null;
    value?: string;
    index?: string;
  }[] = [];
  const counters = { retried: 0, deadLettered: 0 };
  let stopping = false;
  const sink: SampleSink = {
    async write(samples, doneRecords = []) {
      await sinkWrite(samples);
      written.push(samples.map((s) => Number(s.record.offset)));
      writes.push({
        hosts: samples.map((s) => s.sample.host),
        positioned: samples.map((s) => s.positioned),
        doneOffsets: doneRecords.map((r) => r.offset),
      });
      return { samplesWritten: samples.length };
    },
  };
  const writer = createSampleWriter(
    {
      sink,
      deadLetters: {
        send(rec, reason) {
          const index = rec.headers['x-sample-record-index'];
          deadLettered.push({
            offset: rec.offset,
            reason,
            ...(index === undefined ? {} : { key: rec.key, value: rec.value?.toString(), index }),
          });
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
  return { writer, written, writes, deadLettered, counters, stop: () => (stopping = true) };
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

  describe('with records of many hosts', () => {
    const hostsRecord = (...hosts: string[]) =>
      encodeSampleRecord(hosts.map((host, i) => encodeSampleMessage(message(host, i))));
    const poison = (samples: readonly PendingSample[]) =>
      samples.some((s) => s.sample.host === 'bad')
        ? Promise.reject(new Error('out of range'))
        : Promise.resolve();

    it('writes every host of old single-host and new many-host records of one batch', async () => {
      const h = harness(() => Promise.resolve());
      await h.writer.handleBatch(
        batchOf(encodeSampleMessage(message('a', 1)), hostsRecord('b', 'c', 'd')),
      );
      expect(h.writes).toEqual([
        { hosts: ['a', 'b', 'c', 'd'], positioned: [true, true, true, true], doneOffsets: [] },
      ]);
    });

    it('stores the neighbours of a host storage refuses, and dead-letters that host alone', async () => {
      const h = harness(poison);
      await h.writer.handleBatch(
        batchOf(hostsRecord('a', 'b'), hostsRecord('c', 'bad', 'd'), hostsRecord('e', 'f')),
      );
      const stored = h.writes.flatMap((w) => w.hosts.filter((host) => host !== 'bad'));
      // Each host is written once the failing write is out of the way: none is dropped.
      expect(new Set(stored)).toEqual(new Set(['a', 'b', 'c', 'd', 'e', 'f']));
      expect(h.deadLettered).toEqual([
        {
          offset: '1',
          reason: 'cannot be stored: out of range',
          key: 'org_1:bad',
          value: encodeSampleMessage(message('bad', 1)).toString(),
          index: '1',
        },
      ]);
      // The split record's hosts are written without their position, so the first one stored
      // cannot make a replay skip the others; its offset is stored after its last host.
      const split = h.writes.filter((w) => w.positioned.includes(false));
      expect(split.map((w) => w.hosts)).toEqual([['c'], ['d']]);
      const offsetOnly = h.writes.filter((w) => w.doneOffsets.length > 0);
      expect(offsetOnly).toEqual([{ hosts: [], positioned: [], doneOffsets: ['1'] }]);
      const splitAt = h.writes.findIndex((w) => w.hosts[0] === 'c');
      expect(h.writes.indexOf(offsetOnly[0]!)).toBeGreaterThan(splitAt);
      // Whole records are written with their positions.
      for (const w of h.writes) {
        if (w.hosts.includes('a') || w.hosts.includes('e'))
          expect(w.positioned).not.toContain(false);
      }
    });

    it('dead-letters a host that does not decode alone, with its own message', async () => {
      const h = harness(() => Promise.resolve());
      const bad = Buffer.from(JSON.stringify({ ...message('x', 1), v: 9 }));
      const record = encodeSampleRecord([encodeSampleMessage(message('a', 1)), bad]);
      await h.writer.handleBatch(batchOf(record));
      expect(h.writes).toEqual([{ hosts: ['a'], positioned: [true], doneOffsets: [] }]);
      expect(h.deadLettered).toHaveLength(1);
      expect(h.deadLettered[0]).toMatchObject({ offset: '0', value: bad.toString(), index: '1' });
    });

    it('stores the offset of a record none of whose hosts decode, so a replay skips it', async () => {
      const h = harness(() => Promise.resolve());
      const bad = Buffer.from('{nope');
      await h.writer.handleBatch(batchOf(encodeSampleRecord([bad, bad])));
      expect(h.deadLettered).toHaveLength(2);
      expect(h.writes).toEqual([{ hosts: [], positioned: [], doneOffsets: ['0'] }]);
    });

    it('dead-letters a record whose framing is broken as a whole', async () => {
      const h = harness(() => Promise.resolve());
      await h.writer.handleBatch(batchOf(Buffer.from([0, 2, 0, 0, 0, 9])));
      expect(h.deadLettered).toEqual([
        { offset: '0', reason: 'sample record frame 0 is cut short' },
      ]);
    });
  });
});

describe('byPartitionLanes', () => {
  it('shares whole partitions out between the lanes, each partition in its order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 80 }),
        fc.integer({ min: 1, max: 5 }),
        (partitionOfEach, lanes) => {
          const samples = partitionOfEach.map((partition, i) => ({ record: { partition }, i }));
          const groups = byPartitionLanes(samples, lanes);
          const partitions = new Set(partitionOfEach);
          expect(groups.length).toBeLessThanOrEqual(Math.max(1, Math.min(lanes, partitions.size)));
          expect(
            groups
              .flat()
              .map((s) => s.i)
              .sort((a, b) => a - b),
          ).toEqual(samples.map((s) => s.i));
          for (const partition of partitions) {
            const holding = groups.filter((g) => g.some((s) => s.record.partition === partition));
            expect(holding).toHaveLength(1);
            const order = holding[0]!
              .filter((s) => s.record.partition === partition)
              .map((s) => s.i);
            expect(order).toEqual([...order].sort((a, b) => a - b));
          }
        },
      ),
    );
  });
});

describe('createSampleWriter on several connections', () => {
  it('writes the partitions of one flush in concurrent writes', async () => {
    let inFlight = 0;
    let most = 0;
    const partitionsWritten: number[][] = [];
    const sink: SampleSink = {
      async write(samples) {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        partitionsWritten.push([...new Set(samples.map((s) => s.record.partition))]);
        inFlight--;
        return { samplesWritten: samples.length };
      },
    };
    const writer = createSampleWriter(
      {
        sink,
        deadLetters: { send: () => Promise.resolve() },
        metrics: {
          batchWritten: () => undefined,
          deadLettered: () => undefined,
          writeRetried: () => undefined,
        },
        logger,
        isStopping: () => false,
      },
      {
        maxBatchMessages: 100,
        maxBatchWaitMs: 5,
        retryInitialMs: 1,
        retryMaxMs: 4,
        writeConnections: 2,
      },
    );
    await Promise.all(
      [0, 1, 2, 3].map((partition) =>
        writer.handleBatch({
          ...batchOf(encodeSampleMessage(message(`h${partition}`, partition))),
          partition,
          records: [{ ...record(0, encodeSampleMessage(message(`h${partition}`, 1))), partition }],
        }),
      ),
    );
    expect(most).toBe(2);
    expect(partitionsWritten.flat().sort()).toEqual([0, 1, 2, 3]);
  });
});

describe('toSampleWrite', () => {
  const sample = (host: string) => ({
    orgId: 'org_1',
    host,
    timeMs: 1_000,
    metrics: { cpu: 1 },
    tags: {},
    tagsLabelSeries: undefined,
    staleMetrics: undefined,
    containers: [],
    processes: [],
  });

  it('gives positioned samples their record’s position, one object per record, and done records their next offsets', () => {
    const first = record(7, null);
    const second = record(8, null);
    const write = toSampleWrite(
      [
        { record: first, sample: sample('a'), logEndOffset: 20, positioned: true },
        { record: first, sample: sample('b'), logEndOffset: 20, positioned: true },
        { record: second, sample: sample('c'), logEndOffset: 20, positioned: true },
        { record: second, sample: sample('d'), logEndOffset: 20, positioned: false },
      ],
      [record(9, null)],
    );
    expect(write.samples.map((s) => [s.host, s.position])).toEqual([
      ['a', { partition: 0, offset: 7, logEndOffset: 20 }],
      ['b', { partition: 0, offset: 7, logEndOffset: 20 }],
      ['c', { partition: 0, offset: 8, logEndOffset: 20 }],
      ['d', undefined],
    ]);
    expect(write.samples[0]!.position).toBe(write.samples[1]!.position);
    expect(write.samples[3]).toEqual(sample('d'));
    expect(write.offsets).toEqual([{ partition: 0, nextOffset: 10 }]);
  });
});
