import fc from 'fast-check';
import { CompressionTypes } from 'kafkajs';
import snappy from 'snappy';
import { describe, expect, it } from 'vitest';
import { compressionFor, snappyFromBytes, snappyRecords } from './kafka-snappy.js';

/** snappy-java's framing, as Kafka's Java producer writes a snappy batch. */
function xerialFramed(blocks: Buffer[]): Buffer {
  const header = Buffer.from([
    0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00, 0, 0, 0, 1, 0, 0, 0, 1,
  ]);
  const parts: Buffer[] = [header];
  for (const block of blocks) {
    const compressed = snappy.compressSync(block);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(compressed.length);
    parts.push(length, compressed);
  }
  return Buffer.concat(parts);
}

describe('snappyRecords', () => {
  it('reads a raw snappy block and snappy-java framing alike', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 3000 }), { maxLength: 5 }), (chunks) => {
        const blocks = chunks.map((chunk) => Buffer.from(chunk));
        const records = Buffer.concat(blocks);
        expect(snappyRecords(snappy.compressSync(records))).toEqual(records);
        expect(snappyRecords(xerialFramed(blocks))).toEqual(records);
      }),
    );
  });

  it('throws on framing cut short rather than returning part of a batch', () => {
    const framed = xerialFramed([Buffer.from('a'.repeat(500)), Buffer.from('b'.repeat(500))]);
    expect(() => snappyRecords(framed.subarray(0, framed.length - 3))).toThrow(RangeError);
    expect(() => snappyRecords(framed.subarray(0, 18))).toThrow(RangeError);
  });
});

describe('compressionFor', () => {
  it('compresses a request from snappyFromBytes of values on, and not below', () => {
    expect(compressionFor(0)).toBe(CompressionTypes.None);
    expect(compressionFor(snappyFromBytes - 1)).toBe(CompressionTypes.None);
    expect(compressionFor(snappyFromBytes)).toBe(CompressionTypes.Snappy);
  });
});
