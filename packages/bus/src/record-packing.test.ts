import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BusMessage } from './bus.js';
import { partitionForKey } from './murmur2.js';
import { packByPartition } from './record-packing.js';

/** A reference packer: the values as a JSON array of strings (one value stays itself). */
const pack = (values: readonly Buffer[]): Buffer =>
  values.length === 1
    ? (values[0] as Buffer)
    : Buffer.from(JSON.stringify(values.map((value) => value.toString())));
const unpack = (value: Buffer): string[] =>
  value[0] === 0x5b ? (JSON.parse(value.toString()) as string[]) : [value.toString()];

// Values never start with `[`, so the reference unpacker tells packed from single records.
const messages = fc.array(
  fc.record({
    key: fc.constantFrom('o:a', 'o:b', 'o:c', 'o:d', 'p:a', 'p:e', 'ü:€'),
    value: fc.string({ minLength: 1, maxLength: 8 }).map((text) => Buffer.from(`v${text}`)),
  }),
  { maxLength: 60 },
);

describe('packByPartition', () => {
  it('puts every message in one record of the partition its key hashes to, in publish order per key', () => {
    fc.assert(
      fc.property(
        messages,
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 2, max: 40 }),
        (list, partitions, maxRecordBytes) => {
          // Tag each value with its place so order and multiplicity can be checked.
          const sent: BusMessage[] = list.map((message, i) => ({
            key: message.key,
            value: Buffer.from(`${message.value.toString()}#${i}`),
          }));
          const records = packByPartition(sent, partitions, pack, maxRecordBytes);
          const received = new Map<number, string[]>();
          for (const record of records) {
            expect(record.partition).toBeGreaterThanOrEqual(0);
            expect(record.partition).toBeLessThan(partitions);
            const values = unpack(record.value);
            // A record over the limit holds one value only (that value alone is over it).
            if (values.length > 1) {
              expect(values.reduce((sum, value) => sum + value.length, 0)).toBeLessThanOrEqual(
                maxRecordBytes,
              );
            }
            const log = received.get(record.partition ?? -1) ?? [];
            log.push(...values);
            received.set(record.partition ?? -1, log);
          }
          // Unpacked, each partition's log is exactly the messages hashing to it, in publish order.
          for (let partition = 0; partition < partitions; partition++) {
            const expected = sent
              .filter((message) => partitionForKey(message.key, partitions) === partition)
              .map((message) => message.value.toString());
            expect(received.get(partition) ?? []).toEqual(expected);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('makes one record per partition of a request of many hosts', () => {
    const hosts = Array.from({ length: 100 }, (_, i) => ({
      key: `org_1:host-${i}`,
      value: Buffer.from(`v${i}`),
    }));
    const records = packByPartition(hosts, 6, pack, 1_000_000);
    expect(records.length).toBe(6);
    expect(records.flatMap((record) => unpack(record.value)).sort()).toEqual(
      hosts.map((host) => host.value.toString()).sort(),
    );
  });

  it('leaves messages with headers or a chosen partition as records of their own', () => {
    const records = packByPartition(
      [
        { key: 'o:a', value: Buffer.from('v1'), headers: { h: '1' } },
        { key: 'o:a', value: Buffer.from('v2'), partition: 0 },
        { key: 'o:a', value: Buffer.from('v3') },
      ],
      1,
      pack,
      100,
    );
    expect(records.map((record) => record.value.toString())).toEqual(['v1', 'v2', 'v3']);
  });
});
