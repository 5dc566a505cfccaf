import { afterEach, describe, expect, it } from 'vitest';
import type { Bus, BusMessage, ConsumedRecord, RecordBatch } from './bus.js';
import { BusUnavailableError } from './bus-unavailable-error.js';
import { deadLetterHeaders } from './dead-letter-sink.js';
import { createInProcessBus } from './in-process-bus.js';
import { partitionForKey } from './murmur2.js';

const fast = { retryInitialMs: 1, retryMaxMs: 5 };

function msg(key: string, value: string): BusMessage {
  return { key, value: Buffer.from(value) };
}

function valueOf(record: ConsumedRecord): string {
  return record.value?.toString() ?? '';
}

async function eventually(check: () => void, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('createInProcessBus', () => {
  let bus: Bus;
  afterEach(async () => {
    await bus.close();
  });

  it('delivers the records of one key in publish order, each on the partition of its key', async () => {
    bus = createInProcessBus({ defaultPartitions: 3 });
    const seen: ConsumedRecord[] = [];
    await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      fromBeginning: true,
      partitionsConsumedConcurrently: 3,
      maxBatchRecords: 7,
      handleBatch: async (batch) => {
        seen.push(...batch.records);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
      },
    });
    const publisher = bus.publisher();
    for (let i = 0; i < 50; i++) {
      await publisher.publish('t', [msg(`k${i % 5}`, `${i}`), msg(`k${(i + 1) % 5}`, `${i}b`)]);
    }
    await eventually(() => expect(seen).toHaveLength(100));
    for (let k = 0; k < 5; k++) {
      const ofKey = seen.filter((record) => record.key === `k${k}`);
      const expected: string[] = [];
      for (let i = 0; i < 50; i++) {
        if (i % 5 === k) expected.push(`${i}`);
        if ((i + 1) % 5 === k) expected.push(`${i}b`);
      }
      expect(ofKey.map(valueOf)).toEqual(expected);
      expect(new Set(ofKey.map((record) => record.partition))).toEqual(
        new Set([partitionForKey(`k${k}`, 3)]),
      );
    }
  });

  it('with packRecords, makes one record per partition of a publish, each key in order on its partition', async () => {
    bus = createInProcessBus({ defaultPartitions: 3 });
    const seen: ConsumedRecord[] = [];
    await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      fromBeginning: true,
      handleBatch: (batch) => {
        seen.push(...batch.records);
        return Promise.resolve();
      },
    });
    const pack = (values: readonly Buffer[]) => Buffer.from(values.map(String).join('|'));
    const publisher = bus.publisher({ packRecords: pack });
    const messages = Array.from({ length: 30 }, (_, i) => msg(`k${i % 7}`, `k${i % 7}#${i}`));
    await publisher.publish('t', messages);
    await eventually(() => expect(seen.length).toBe(3));
    for (const record of seen) {
      const values = valueOf(record).split('|');
      for (const value of values) {
        expect(partitionForKey(value.split('#')[0] ?? '', 3)).toBe(record.partition);
      }
      // Within the record, publish order.
      const order = values.map((value) => Number(value.split('#')[1]));
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
    expect(seen.flatMap((record) => valueOf(record).split('|')).sort()).toEqual(
      messages.map((message) => message.value.toString()).sort(),
    );
  });

  it('reports the records still behind each handled batch as consumer lag', async () => {
    bus = createInProcessBus({ defaultPartitions: 1 });
    const publisher = bus.publisher();
    await publisher.publish(
      't',
      Array.from({ length: 10 }, (_, i) => msg('k', `${i}`)),
    );
    const lags: number[] = [];
    await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      fromBeginning: true,
      maxBatchRecords: 4,
      handleBatch: () => Promise.resolve(),
      onLag: ({ records }) => lags.push(records),
    });
    await eventually(() => expect(lags).toEqual([6, 2, 0]));
  });

  it('assigns every partition of its topics to the subscription, and none once it stopped', async () => {
    bus = createInProcessBus({ defaultPartitions: 3 });
    const assignments: string[][] = [];
    const subscription = await bus.subscribe({
      groupId: 'g',
      topics: ['t', 'u'],
      fromBeginning: true,
      handleBatch: () => Promise.resolve(),
      onAssignment: (partitions) =>
        assignments.push(partitions.map((p) => `${p.topic}/${p.partition}`)),
    });
    expect(assignments).toEqual([['t/0', 't/1', 't/2', 'u/0', 'u/1', 'u/2']]);
    await subscription.stop();
    expect(assignments).toEqual([['t/0', 't/1', 't/2', 'u/0', 'u/1', 'u/2'], []]);
  });

  it('delivers the same batch again when the handler throws, skipping nothing', async () => {
    bus = createInProcessBus({ defaultPartitions: 1 });
    const deliveries: string[][] = [];
    let failures = 0;
    await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      fromBeginning: true,
      ...fast,
      handleBatch: (batch) => {
        deliveries.push(batch.records.map(valueOf));
        if (failures < 2) {
          failures += 1;
          return Promise.reject(new Error('database down'));
        }
        return Promise.resolve();
      },
    });
    await bus.publisher().publish('t', [msg('a', '1'), msg('a', '2'), msg('a', '3')]);
    await eventually(() => expect(deliveries).toHaveLength(3));
    expect(deliveries).toEqual([
      ['1', '2', '3'],
      ['1', '2', '3'],
      ['1', '2', '3'],
    ]);
  });

  it('gives every group every record, each at its own pace', async () => {
    bus = createInProcessBus({ defaultPartitions: 2 });
    const a: string[] = [];
    const b: string[] = [];
    let bFails = true;
    await bus.subscribe({
      groupId: 'a',
      topics: ['t'],
      fromBeginning: true,
      handleBatch: (batch) => {
        a.push(...batch.records.map(valueOf));
        return Promise.resolve();
      },
    });
    await bus.subscribe({
      groupId: 'b',
      topics: ['t'],
      fromBeginning: true,
      ...fast,
      handleBatch: (batch) => {
        if (bFails) return Promise.reject(new Error('b is down'));
        b.push(...batch.records.map(valueOf));
        return Promise.resolve();
      },
    });
    await bus.publisher().publish('t', [msg('x', '1'), msg('y', '2'), msg('z', '3')]);
    await eventually(() => expect(a.sort()).toEqual(['1', '2', '3']));
    expect(b).toEqual([]);
    bFails = false;
    await eventually(() => expect(b.sort()).toEqual(['1', '2', '3']));
  });

  it('commits only handled batches: a new subscription of the group resumes at the first unhandled record', async () => {
    bus = createInProcessBus({ defaultPartitions: 1 });
    const publisher = bus.publisher();
    await publisher.publish('t', [msg('a', '1'), msg('a', '2')]);
    const first: string[] = [];
    const gotFirst = deferred();
    const failing = await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      fromBeginning: true,
      maxBatchRecords: 1,
      ...fast,
      handleBatch: (batch) => {
        const value = valueOf(batch.records[0]!);
        if (value === '1') {
          first.push(value);
          gotFirst.resolve();
          return Promise.resolve();
        }
        return Promise.reject(new Error('cannot handle 2 yet'));
      },
    });
    await gotFirst.promise;
    await new Promise((resolve) => setTimeout(resolve, 20));
    await failing.stop();
    await publisher.publish('t', [msg('a', '3')]);
    const second: string[] = [];
    await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      fromBeginning: true,
      handleBatch: (batch) => {
        second.push(...batch.records.map(valueOf));
        return Promise.resolve();
      },
    });
    await eventually(() => expect(second).toEqual(['2', '3']));
    expect(first).toEqual(['1']);
  });

  it('starts a new group at the end unless fromBeginning', async () => {
    bus = createInProcessBus({ defaultPartitions: 1 });
    const publisher = bus.publisher();
    await publisher.publish('t', [msg('a', 'old')]);
    const fromEnd: string[] = [];
    const fromStart: string[] = [];
    for (const [groupId, fromBeginning, sink] of [
      ['late', false, fromEnd],
      ['early', true, fromStart],
    ] as const) {
      await bus.subscribe({
        groupId,
        topics: ['t'],
        fromBeginning,
        handleBatch: (batch) => {
          sink.push(...batch.records.map(valueOf));
          return Promise.resolve();
        },
      });
    }
    await publisher.publish('t', [msg('a', 'new')]);
    await eventually(() => expect(fromStart).toEqual(['old', 'new']));
    await eventually(() => expect(fromEnd).toEqual(['new']));
  });

  it('with ackAfterConsumedBy, resolves a publish only once every listed group handled it', async () => {
    bus = createInProcessBus({ defaultPartitions: 2 });
    const writerGate = deferred();
    const handledBy: string[] = [];
    await bus.subscribe({
      groupId: 'writer',
      topics: ['t'],
      fromBeginning: true,
      handleBatch: async (batch) => {
        await writerGate.promise;
        handledBy.push(...batch.records.map((record) => `writer:${valueOf(record)}`));
      },
    });
    await bus.subscribe({
      groupId: 'evaluator',
      topics: ['t'],
      fromBeginning: true,
      handleBatch: (batch) => {
        handledBy.push(...batch.records.map((record) => `evaluator:${valueOf(record)}`));
        return Promise.resolve();
      },
    });
    const publisher = bus.publisher({ ackAfterConsumedBy: ['writer'] });
    let acknowledged = false;
    const publishing = publisher
      .publish('t', [msg('h1', '1'), msg('h2', '2')])
      .then(() => (acknowledged = true));
    await eventually(() => expect(handledBy.sort()).toEqual(['evaluator:1', 'evaluator:2']));
    expect(acknowledged).toBe(false);
    writerGate.resolve();
    await publishing;
    expect(handledBy.filter((entry) => entry.startsWith('writer:')).sort()).toEqual([
      'writer:1',
      'writer:2',
    ]);
  });

  it('awaitConsumed answers true once the group handled every record published before the call, false when its time is up', async () => {
    bus = createInProcessBus({ defaultPartitions: 2 });
    const gate = deferred();
    const handled: string[] = [];
    await bus.subscribe({
      groupId: 'writer',
      topics: ['t'],
      fromBeginning: true,
      handleBatch: async (batch) => {
        await gate.promise;
        handled.push(...batch.records.map(valueOf));
      },
    });
    // Nothing published yet: nothing to wait for.
    await expect(bus.admin.awaitConsumed('writer', 't', 1_000)).resolves.toBe(true);
    await bus.publisher().publish('t', [msg('h1', '1'), msg('h2', '2')]);
    await expect(bus.admin.awaitConsumed('writer', 't', 20)).resolves.toBe(false);
    // A group that never subscribed has handled nothing.
    await expect(bus.admin.awaitConsumed('nobody', 't', 20)).resolves.toBe(false);
    const waiting = bus.admin.awaitConsumed('writer', 't', 60_000);
    gate.resolve();
    await expect(waiting).resolves.toBe(true);
    expect(handled.sort()).toEqual(['1', '2']);
  });

  it('with ackAfterConsumedBy, rejects with BusUnavailableError when the group does not succeed in time', async () => {
    bus = createInProcessBus({ defaultPartitions: 1 });
    await bus.subscribe({
      groupId: 'writer',
      topics: ['t'],
      fromBeginning: true,
      ...fast,
      handleBatch: () => Promise.reject(new Error('database down')),
    });
    const publisher = bus.publisher({ ackAfterConsumedBy: ['writer'], publishTimeoutMs: 50 });
    const err = await publisher.publish('t', [msg('a', '1')]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BusUnavailableError);
    expect((err as BusUnavailableError).reason).toBe('timeout');
  });

  it('rejects publishes still waiting for consumers when the bus closes', async () => {
    bus = createInProcessBus();
    const publisher = bus.publisher({ ackAfterConsumedBy: ['nobody'], publishTimeoutMs: 60_000 });
    const publishing = publisher.publish('t', [msg('a', '1')]).catch((e: unknown) => e);
    await bus.close();
    expect(((await publishing) as BusUnavailableError).reason).toBe('closed');
    await expect(publisher.publish('t', [msg('a', '2')])).rejects.toBeInstanceOf(
      BusUnavailableError,
    );
  });

  it('writes dead letters to <topic>.dlq with the reason and source headers', async () => {
    bus = createInProcessBus({ defaultPartitions: 1 });
    const letters: RecordBatch[] = [];
    await bus.subscribe({
      groupId: 'dlq-reader',
      topics: ['t.dlq'],
      fromBeginning: true,
      handleBatch: (batch) => {
        letters.push(batch);
        return Promise.resolve();
      },
    });
    const sink = bus.deadLetters();
    await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      fromBeginning: true,
      handleBatch: async (batch) => {
        for (const record of batch.records) await sink.send(record, 'cannot decode');
      },
    });
    await bus
      .publisher()
      .publish('t', [
        { key: 'k', value: Buffer.from('garbage'), headers: { 'content-type': 'x' } },
      ]);
    await eventually(() => expect(letters).toHaveLength(1));
    const letter = letters[0]!.records[0]!;
    expect(letter.key).toBe('k');
    expect(valueOf(letter)).toBe('garbage');
    expect(letter.headers).toEqual({
      'content-type': 'x',
      [deadLetterHeaders.reason]: 'cannot decode',
      [deadLetterHeaders.sourceTopic]: 't',
      [deadLetterHeaders.sourcePartition]: '0',
      [deadLetterHeaders.sourceOffset]: '0',
    });
  });

  it('refuses a second active subscription of the same group', async () => {
    bus = createInProcessBus();
    const handleBatch = (): Promise<void> => Promise.resolve();
    const first = await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      fromBeginning: true,
      handleBatch,
    });
    await expect(
      bus.subscribe({ groupId: 'g', topics: ['t'], fromBeginning: true, handleBatch }),
    ).rejects.toThrow(/already has a subscription/);
    await first.stop();
    const again = await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      fromBeginning: true,
      handleBatch,
    });
    await again.stop();
  });

  it('waits on stop for the handler call in progress and commits it when it succeeds', async () => {
    bus = createInProcessBus({ defaultPartitions: 1 });
    const gate = deferred();
    const started = deferred();
    const subscription = await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      fromBeginning: true,
      handleBatch: async () => {
        started.resolve();
        await gate.promise;
      },
    });
    await bus.publisher().publish('t', [msg('a', '1')]);
    await started.promise;
    let stopped = false;
    const stopping = subscription.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    const redelivered: string[] = [];
    await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      fromBeginning: true,
      handleBatch: (batch) => {
        redelivered.push(...batch.records.map(valueOf));
        return Promise.resolve();
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(redelivered).toEqual([]);
  });

  it('creates topics with the partition count asked for and leaves existing ones alone', async () => {
    bus = createInProcessBus({ defaultPartitions: 2 });
    expect(await bus.admin.ensureTopic('t', { partitions: 6 })).toEqual({
      created: true,
      partitions: 6,
    });
    expect(await bus.admin.ensureTopic('t', { partitions: 3 })).toEqual({
      created: false,
      partitions: 6,
    });
    expect(await bus.admin.ping()).toBe(true);
  });

  it('resumes each partition at the given offset, so its records follow those stored before', async () => {
    bus = createInProcessBus({ defaultPartitions: 2, resumeOffsets: new Map([['t', [1_000]]]) });
    const batches: RecordBatch[] = [];
    await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      fromBeginning: true,
      handleBatch: (batch) => {
        batches.push(batch);
        return Promise.resolve();
      },
    });
    const onPartition = (partition: number) =>
      ['a', 'b', 'c', 'd', 'e', 'f'].find((key) => partitionForKey(key, 2) === partition) ?? '';
    await bus.publisher().publish('t', [msg(onPartition(0), 'x'), msg(onPartition(1), 'y')]);
    await eventually(() => expect(batches).toHaveLength(2));
    const byPartition = new Map(batches.map((b) => [b.partition, b]));
    expect(byPartition.get(0)?.records.map((r) => r.offset)).toEqual(['1000']);
    expect(byPartition.get(0)?.logEndOffset).toBe(1001);
    // A partition the map does not name starts at 0.
    expect(byPartition.get(1)?.records.map((r) => r.offset)).toEqual(['0']);
  });

  it('sends dead letters to the sink it was given', async () => {
    const letters: { offset: string; reason: string }[] = [];
    bus = createInProcessBus({
      deadLetters: {
        send: (record, reason) => {
          letters.push({ offset: record.offset, reason });
          return Promise.resolve();
        },
      },
    });
    await bus.deadLetters().send(
      {
        topic: 't',
        partition: 0,
        offset: '7',
        key: 'k',
        value: null,
        headers: {},
        timestampMs: 0,
      },
      'broken',
    );
    expect(letters).toEqual([{ offset: '7', reason: 'broken' }]);
  });
});
