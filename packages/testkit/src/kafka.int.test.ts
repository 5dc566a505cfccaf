// @services kafka
import { randomUUID } from 'node:crypto';
import type { Admin, Consumer, Producer } from 'kafkajs';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { describe, expect, it, vi } from 'vitest';
import { serviceUrl } from './vitest-context.js';

const keyCount = 10;
const messagesPerKey = 30;

type Received = { key: string; seq: number; partition: number; offset: bigint };

describe('kafka (real broker)', () => {
  it('delivers every message of an idempotent producer to a consumer group, in order per key', async () => {
    const kafka = new Kafka({
      clientId: 'testkit-int',
      brokers: serviceUrl('kafka').split(','),
      logLevel: logLevel.ERROR,
    });
    const topic = `testkit.kafka-int.${randomUUID()}`;
    const keys = Array.from({ length: keyCount }, (_, i) => `org-1:host-${i}`);
    const received: Received[] = [];
    let admin: Admin | undefined;
    let producer: Producer | undefined;
    let consumer: Consumer | undefined;
    try {
      admin = kafka.admin();
      await admin.connect();
      const created = await admin.createTopics({
        topics: [{ topic, numPartitions: 3, replicationFactor: 1 }],
        waitForLeaders: true,
      });
      expect(created).toBe(true);

      producer = kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        createPartitioner: Partitioners.DefaultPartitioner,
      });
      await producer.connect();
      for (let seq = 0; seq < messagesPerKey; seq++) {
        await producer.send({
          topic,
          acks: -1,
          messages: keys.map((key) => ({ key, value: JSON.stringify({ key, seq }) })),
        });
      }

      // disconnect() waits out the fetch in flight; the default 5 s long poll would dominate the test.
      consumer = kafka.consumer({
        groupId: `testkit-kafka-int-${randomUUID()}`,
        maxWaitTimeInMs: 250,
      });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        eachMessage: ({ partition, message }) => {
          const value = JSON.parse(message.value?.toString() ?? 'null') as {
            key: string;
            seq: number;
          };
          expect(message.key?.toString()).toBe(value.key);
          received.push({
            key: value.key,
            seq: value.seq,
            partition,
            offset: BigInt(message.offset),
          });
          return Promise.resolve();
        },
      });
      await vi.waitFor(() => expect(received).toHaveLength(keyCount * messagesPerKey), {
        timeout: 60_000,
        interval: 100,
      });

      for (const key of keys) {
        const ofKey = received.filter((r) => r.key === key);
        expect(ofKey.map((r) => r.seq)).toEqual(
          Array.from({ length: messagesPerKey }, (_, i) => i),
        );
        expect(new Set(ofKey.map((r) => r.partition)).size).toBe(1);
      }
      for (const partition of new Set(received.map((r) => r.partition))) {
        const offsets = received.filter((r) => r.partition === partition).map((r) => r.offset);
        expect(offsets).toEqual([...offsets].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      }
      // Ten keys over three partitions: the keyed partitioner spreads them over more than one.
      expect(new Set(received.map((r) => r.partition)).size).toBeGreaterThan(1);
    } finally {
      await consumer?.disconnect();
      await producer?.disconnect();
      await admin?.disconnect();
    }
  });
});
