// @services kafka
import { randomUUID } from 'node:crypto';
import { createLogger, logLevels } from '@monitor/platform';
import type { LogLevel } from '@monitor/platform';
import { getFreePort } from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';
import kafkajs, { CompressionTypes } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus, BusMessage, ConsumedRecord, Subscription } from './bus.js';
import { BusUnavailableError } from './bus-unavailable-error.js';
import { deadLetterHeaders, deadLetterTopic } from './dead-letter-sink.js';
import { createKafkaBus } from './kafka-bus.js';
import { snappyFromBytes } from './kafka-snappy.js';
import { partitionForKey } from './murmur2.js';

const envLevel = process.env['LOG_LEVEL'];
const logger = createLogger({
  level: logLevels.includes(envLevel as LogLevel) ? (envLevel as LogLevel) : 'silent',
});

function unique(name: string): string {
  return `bus-test-${name}-${randomUUID().slice(0, 8)}`;
}

function msg(key: string, value: string, headers?: Record<string, string>): BusMessage {
  return headers === undefined
    ? { key, value: Buffer.from(value) }
    : { key, value: Buffer.from(value), headers };
}

function valueOf(record: ConsumedRecord): string {
  return record.value?.toString() ?? '';
}

async function eventually(check: () => void | Promise<void>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

describe('createKafkaBus', () => {
  let bus: Bus;
  const subscriptions: Subscription[] = [];

  beforeAll(() => {
    bus = createKafkaBus({
      brokers: serviceUrl('kafka').split(','),
      clientId: 'bus-int-test',
      logger,
    });
  });

  afterAll(async () => {
    await Promise.all(subscriptions.map((subscription) => subscription.stop()));
    await bus.close();
  });

  /** A new group reading `topic` from its beginning: the records it receives, as they arrive. */
  async function readAll(topic: string): Promise<ConsumedRecord[]> {
    const seen: ConsumedRecord[] = [];
    subscriptions.push(
      await bus.subscribe({
        groupId: unique('group'),
        topics: [topic],
        fromBeginning: true,
        handleBatch: (batch) => {
          seen.push(...batch.records);
          return Promise.resolve();
        },
      }),
    );
    return seen;
  }

  it('delivers published records in order per key, on the partition murmur2 picks', async () => {
    const topic = unique('round-trip');
    expect(await bus.admin.ensureTopic(topic, { partitions: 3 })).toEqual({
      created: true,
      partitions: 3,
    });
    expect(await bus.admin.ensureTopic(topic, { partitions: 3 })).toEqual({
      created: false,
      partitions: 3,
    });
    const publisher = bus.publisher();
    const keys = Array.from({ length: 30 }, (_, i) => `org_1:host-${i}`);
    // Concurrent callers, coalesced by the batching publisher; each caller's own order is kept.
    await Promise.all(
      keys.map(async (key) => {
        for (let i = 0; i < 10; i++) {
          await publisher.publish(topic, [msg(key, `${key}#${i}`, { 'x-seq': String(i) })]);
        }
      }),
    );
    const seen = await readAll(topic);
    await eventually(() => expect(seen).toHaveLength(300));
    for (const key of keys) {
      const ofKey = seen.filter((record) => record.key === key);
      expect(ofKey.map(valueOf)).toEqual(Array.from({ length: 10 }, (_, i) => `${key}#${i}`));
      expect(ofKey.map((record) => record.headers['x-seq'])).toEqual(
        Array.from({ length: 10 }, (_, i) => String(i)),
      );
      expect(new Set(ofKey.map((record) => record.partition))).toEqual(
        new Set([partitionForKey(key, 3)]),
      );
    }
    expect(seen.every((record) => record.timestampMs > Date.now() - 120_000)).toBe(true);
    await publisher.close();
  });

  it('with packRecords, sends concurrent publishes as a record per partition, each key in order on its partition', async () => {
    const topic = unique('packed');
    await bus.admin.ensureTopic(topic, { partitions: 3 });
    const pack = (values: readonly Buffer[]) => Buffer.from(values.map(String).join('|'));
    const publisher = bus.publisher({ packRecords: pack });
    const keys = Array.from({ length: 30 }, (_, i) => `org_1:host-${i}`);
    await Promise.all(
      keys.map(async (key) => {
        for (let i = 0; i < 5; i++) await publisher.publish(topic, [msg(key, `${key}#${i}`)]);
      }),
    );
    const seen = await readAll(topic);
    const unpacked = () => seen.flatMap((record) => valueOf(record).split('|'));
    await eventually(() => expect(unpacked()).toHaveLength(150));
    // Fewer records than messages: concurrent callers' hosts shared records.
    expect(seen.length).toBeLessThan(150);
    for (const key of keys) {
      const ofKey = seen.flatMap((record) =>
        valueOf(record)
          .split('|')
          .filter((value) => value.startsWith(`${key}#`))
          .map((value) => ({ value, partition: record.partition })),
      );
      expect(ofKey.map((entry) => entry.value)).toEqual(
        Array.from({ length: 5 }, (_, i) => `${key}#${i}`),
      );
      expect(new Set(ofKey.map((entry) => entry.partition))).toEqual(
        new Set([partitionForKey(key, 3)]),
      );
    }
    await publisher.close();
  });

  it('delivers a batch whose handler threw once again, losing and skipping nothing', async () => {
    const topic = unique('redeliver');
    await bus.admin.ensureTopic(topic, { partitions: 3 });
    const publisher = bus.publisher();
    const values = Array.from({ length: 60 }, (_, i) => `v${i}`);
    await publisher.publish(
      topic,
      values.map((value, i) => msg(`k${i % 6}`, value)),
    );
    await publisher.close();
    const deliveries: { partition: number; offsets: string[] }[] = [];
    const handled: ConsumedRecord[] = [];
    let thrown = false;
    subscriptions.push(
      await bus.subscribe({
        groupId: unique('group'),
        topics: [topic],
        fromBeginning: true,
        retryInitialMs: 50,
        handleBatch: (batch) => {
          deliveries.push({
            partition: batch.partition,
            offsets: batch.records.map((record) => record.offset),
          });
          if (!thrown) {
            thrown = true;
            return Promise.reject(new Error('the database is down'));
          }
          handled.push(...batch.records);
          return Promise.resolve();
        },
      }),
    );
    await eventually(() => expect(handled).toHaveLength(60));
    expect(deliveries[1]).toEqual(deliveries[0]);
    expect(handled.map(valueOf).sort()).toEqual([...values].sort());
    for (let partition = 0; partition < 3; partition++) {
      const offsets = handled
        .filter((record) => record.partition === partition)
        .map((record) => Number(record.offset));
      expect(offsets).toEqual(offsets.map((_, i) => i));
    }
  });

  it('keeps its group membership while a handler waits longer than the session timeout', async () => {
    // The writer retrying a write through a database failover (issue 60): it never calls
    // ctx.heartbeat itself. Without the bus heartbeating for it, the broker dropped the member
    // once the session expired, and it re-joined (a rebalance) once the handler was done.
    const topic = unique('long-handler');
    await bus.admin.ensureTopic(topic, { partitions: 1 });
    const publisher = bus.publisher();
    await publisher.publish(topic, [msg('k', 'slow')]);
    const sessionTimeoutMs = 6_000;
    const joins: number[][] = [];
    const handled: string[] = [];
    subscriptions.push(
      await bus.subscribe({
        groupId: unique('group'),
        topics: [topic],
        fromBeginning: true,
        sessionTimeoutMs,
        heartbeatIntervalMs: 1_000,
        onAssignment: (partitions) => {
          if (partitions.length > 0) joins.push(partitions.map((p) => p.partition));
        },
        handleBatch: async (batch) => {
          const values = batch.records.map(valueOf);
          if (values.includes('slow'))
            await new Promise((resolve) => setTimeout(resolve, sessionTimeoutMs * 1.5));
          handled.push(...values);
        },
      }),
    );
    await eventually(() => expect(handled).toEqual(['slow']), 30_000);
    // A record after the long one: handled by the same member, in the same generation.
    await publisher.publish(topic, [msg('k', 'next')]);
    await eventually(() => expect(handled).toEqual(['slow', 'next']), 30_000);
    expect(joins).toEqual([[0]]);
    await publisher.close();
  }, 60_000);

  it('commits offsets only after the handler succeeded: a new consumer of the group resumes there', async () => {
    const topic = unique('commit');
    await bus.admin.ensureTopic(topic, { partitions: 1 });
    const groupId = unique('group');
    const publisher = bus.publisher();
    await publisher.publish(
      topic,
      Array.from({ length: 10 }, (_, i) => msg('k', `v${i}`)),
    );
    const attempted: string[][] = [];
    const first = await bus.subscribe({
      groupId,
      topics: [topic],
      fromBeginning: true,
      maxBatchRecords: 4,
      retryInitialMs: 20,
      retryMaxMs: 50,
      handleBatch: (batch) => {
        attempted.push(batch.records.map(valueOf));
        // The first chunk (v0..v3) succeeds; the second (v4..v7) always fails.
        return batch.records[0]!.offset === '0'
          ? Promise.resolve()
          : Promise.reject(new Error('cannot store'));
      },
    });
    await eventually(() => expect(attempted.length).toBeGreaterThanOrEqual(3));
    await first.stop();
    expect(attempted[0]).toEqual(['v0', 'v1', 'v2', 'v3']);
    expect(attempted.slice(1).every((values) => values[0] === 'v4')).toBe(true);

    const resumed: ConsumedRecord[] = [];
    subscriptions.push(
      await bus.subscribe({
        groupId,
        topics: [topic],
        fromBeginning: true,
        handleBatch: (batch) => {
          resumed.push(...batch.records);
          return Promise.resolve();
        },
      }),
    );
    await eventually(() => expect(resumed).toHaveLength(6));
    expect(resumed.map(valueOf)).toEqual(['v4', 'v5', 'v6', 'v7', 'v8', 'v9']);
    await publisher.close();
  });

  it('dead-letters records to <topic>.dlq with the reason and source headers', async () => {
    const topic = unique('dlq');
    await bus.admin.ensureTopic(topic, { partitions: 3 });
    await bus.admin.ensureTopic(deadLetterTopic(topic), { partitions: 1 });
    const sink = bus.deadLetters();
    const publisher = bus.publisher();
    await publisher.publish(topic, [
      msg('org_1:host-a', 'not json', { 'content-type': 'application/json' }),
      msg('org_1:host-b', '{"v":99}'),
    ]);
    const poisoned: ConsumedRecord[] = [];
    subscriptions.push(
      await bus.subscribe({
        groupId: unique('group'),
        topics: [topic],
        fromBeginning: true,
        handleBatch: async (batch) => {
          poisoned.push(...batch.records);
          await Promise.all(
            batch.records.map((record) => sink.send(record, `cannot decode ${valueOf(record)}`)),
          );
        },
      }),
    );
    const letters = await readAll(deadLetterTopic(topic));
    await eventually(() => expect(letters).toHaveLength(2));
    for (const letter of letters) {
      const source = poisoned.find((record) => record.key === letter.key)!;
      expect(valueOf(letter)).toBe(valueOf(source));
      expect(letter.headers).toMatchObject({
        ...source.headers,
        [deadLetterHeaders.reason]: `cannot decode ${valueOf(source)}`,
        [deadLetterHeaders.sourceTopic]: topic,
        [deadLetterHeaders.sourcePartition]: String(source.partition),
        [deadLetterHeaders.sourceOffset]: source.offset,
      });
    }
    await publisher.close();
  });

  it('coalesces many concurrent publishes and acknowledges every one', async () => {
    const topic = unique('concurrent');
    await bus.admin.ensureTopic(topic, { partitions: 3 });
    const publisher = bus.publisher({ lingerMs: 5 });
    await Promise.all(
      Array.from({ length: 2_000 }, (_, i) =>
        publisher.publish(topic, [msg(`k${i % 50}`, `v${i}`)]),
      ),
    );
    await publisher.close();
    const seen = await readAll(topic);
    await eventually(() => expect(new Set(seen.map(valueOf)).size).toBe(2_000));
  });

  it('sends a large publish snappy-compressed and a small one plain, and reads both back', async () => {
    // The bus's own codec, counted: the broker stores what the codec wrote, and every
    // compressed batch fetched goes through the codec again.
    const codecs = kafkajs.CompressionCodecs;
    const shipped = codecs[CompressionTypes.Snappy];
    const calls = { compress: 0, decompress: 0 };
    codecs[CompressionTypes.Snappy] = () => {
      const codec = shipped() as {
        compress(encoder: unknown): Promise<Buffer>;
        decompress(buffer: Buffer): Promise<Buffer>;
      };
      return {
        compress: (encoder: unknown) => (calls.compress++, codec.compress(encoder)),
        decompress: (buffer: Buffer) => (calls.decompress++, codec.decompress(buffer)),
      };
    };
    try {
      const topic = unique('snappy');
      await bus.admin.ensureTopic(topic, { partitions: 1 });
      const publisher = bus.publisher();
      const large = Array.from({ length: 200 }, (_, i) =>
        msg(`host-${i}`, JSON.stringify({ host: `host-${i}`, metrics: { cpu: i, memory: 2 * i } })),
      );
      const largeBytes = large.reduce((sum, message) => sum + message.value.length, 0);
      expect(largeBytes).toBeGreaterThanOrEqual(snappyFromBytes / 2);
      await publisher.publish(topic, [...large, ...large]);
      expect(calls.compress).toBe(1);
      await publisher.publish(topic, [msg('host-0', 'small')]);
      expect(calls.compress).toBe(1);
      await publisher.close();

      const seen = await readAll(topic);
      await eventually(() => expect(seen).toHaveLength(401));
      expect(seen.map(valueOf)).toEqual(
        [...large, ...large, msg('host-0', 'small')].map((m) => m.value.toString()),
      );
      expect(calls.decompress).toBeGreaterThanOrEqual(1);
    } finally {
      codecs[CompressionTypes.Snappy] = shipped;
    }
  });

  it("spreads a group's partitions over processes, then over each process's consumers", async () => {
    const topic = unique('processes');
    await bus.admin.ensureTopic(topic, { partitions: 4 });
    const groupId = unique('group');
    // A second process's bus: the group's leader tells the two apart by their process keys.
    const other = createKafkaBus({
      brokers: serviceUrl('kafka').split(','),
      clientId: 'bus-int-test-other',
      logger,
    });
    const consumersOf = (process: Bus): Promise<Subscription[]> =>
      Promise.all(
        [0, 1, 2].map(() =>
          process.subscribe({
            groupId,
            topics: [topic],
            fromBeginning: true,
            handleBatch: () => Promise.resolve(),
          }),
        ),
      );
    // The broker's view once the group is stable with `members` members (a rebalance still
    // running would show a generation's assignment half handed out): the protocol it chose, and
    // per client id (a process) how many partitions each of its members holds.
    const admin = new kafkajs.Kafka({
      brokers: serviceUrl('kafka').split(','),
      clientId: 'bus-int-test-admin',
    }).admin();
    await admin.connect();
    const settled = async (members: number) => {
      let seen: { protocol: string; partitions: number[]; byClient: Map<string, number[]> };
      await eventually(async () => {
        const [group] = (await admin.describeGroups([groupId])).groups;
        expect(group?.state).toBe('Stable');
        expect(group?.members).toHaveLength(members);
        const byClient = new Map<string, number[]>();
        const partitions: number[] = [];
        for (const member of group?.members ?? []) {
          const held =
            kafkajs.AssignerProtocol.MemberAssignment.decode(member.memberAssignment)?.assignment[
              topic
            ] ?? [];
          partitions.push(...held);
          byClient.set(member.clientId, [...(byClient.get(member.clientId) ?? []), held.length]);
        }
        seen = { protocol: group?.protocol ?? '', partitions: partitions.sort(), byClient };
      });
      return seen!;
    };
    const ours = await consumersOf(bus);
    subscriptions.push(...ours);
    const theirs = await consumersOf(other);
    try {
      // Two processes of three consumers, four partitions: two for each process, on two of its
      // consumers. Round robin over the six members alone gives the four to the first four
      // member ids, three of them in one process (its client id sorts first).
      const both = await settled(6);
      expect(both.protocol).toBe('ProcessBalancedAssigner');
      expect(both.partitions).toEqual([0, 1, 2, 3]);
      expect(both.byClient.get('bus-int-test')?.sort()).toEqual([0, 1, 1]);
      expect(both.byClient.get('bus-int-test-other')?.sort()).toEqual([0, 1, 1]);
    } finally {
      await Promise.all(theirs.map((subscription) => subscription.stop()));
      await other.close();
    }
    try {
      // The other process gone: its partitions come to this one's consumers.
      const alone = await settled(3);
      expect(alone.partitions).toEqual([0, 1, 2, 3]);
      expect(alone.byClient.get('bus-int-test')?.sort()).toEqual([1, 1, 2]);
    } finally {
      await admin.disconnect();
    }
  });

  it('awaitConsumed answers true once the group committed past every record published before the call, false when its time is up', async () => {
    const topic = unique('fence');
    await bus.admin.ensureTopic(topic, { partitions: 2 });
    const groupId = unique('group');
    // An empty topic holds nothing to wait for, even for a group that never committed.
    await expect(bus.admin.awaitConsumed(groupId, topic, 5_000)).resolves.toBe(true);
    const publisher = bus.publisher();
    await publisher.publish(topic, [msg('a', '1'), msg('b', '2'), msg('c', '3')]);
    await expect(bus.admin.awaitConsumed(groupId, topic, 200)).resolves.toBe(false);
    let gate: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => (gate = resolve));
    const handled: string[] = [];
    subscriptions.push(
      await bus.subscribe({
        groupId,
        topics: [topic],
        fromBeginning: true,
        handleBatch: async (batch) => {
          await opened;
          handled.push(...batch.records.map(valueOf));
        },
      }),
    );
    const waiting = bus.admin.awaitConsumed(groupId, topic, 30_000);
    gate();
    await expect(waiting).resolves.toBe(true);
    expect(handled.sort()).toEqual(['1', '2', '3']);
    await publisher.close();
  });

  it('answers ping with true while the broker is up', async () => {
    expect(await bus.admin.ping()).toBe(true);
  });
});

describe('createKafkaBus with an unreachable broker', () => {
  let bus: Bus;
  beforeAll(async () => {
    // A free port with nothing listening: connections are refused.
    bus = createKafkaBus({
      brokers: [`127.0.0.1:${await getFreePort()}`],
      clientId: 'bus-int-test-unreachable',
      logger,
      connectionTimeoutMs: 500,
      pingTimeoutMs: 1_000,
    });
  });
  afterAll(async () => {
    await bus.close();
  });

  it('rejects a publish with BusUnavailableError within the publish deadline', async () => {
    const publishTimeoutMs = 1_500;
    const publisher = bus.publisher({ publishTimeoutMs, retryAfterSeconds: 3 });
    for (let attempt = 0; attempt < 3; attempt++) {
      const started = Date.now();
      const err = await publisher.publish('anything', [msg('k', 'v')]).catch((e: unknown) => e);
      const elapsedMs = Date.now() - started;
      expect(err).toBeInstanceOf(BusUnavailableError);
      expect(err).toMatchObject({
        code: 'dependency_unavailable',
        retriable: true,
        retryAfterSeconds: 3,
      });
      expect(elapsedMs).toBeLessThanOrEqual(publishTimeoutMs + 200);
    }
    await publisher.close();
  });

  it('answers ping with false within the ping timeout', async () => {
    const started = Date.now();
    expect(await bus.admin.ping()).toBe(false);
    expect(Date.now() - started).toBeLessThanOrEqual(1_200);
  });

  it('answers awaitConsumed with false rather than throwing', async () => {
    expect(await bus.admin.awaitConsumed('writer', 'samples', 500)).toBe(false);
  });

  it('rejects subscribe with BusUnavailableError', async () => {
    await expect(
      bus.subscribe({
        groupId: 'nobody',
        topics: ['anything'],
        fromBeginning: true,
        startTimeoutMs: 2_000,
        handleBatch: () => Promise.resolve(),
      }),
    ).rejects.toBeInstanceOf(BusUnavailableError);
  });
});
