import fc from 'fast-check';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { StringTable } from '@monitor/schemas';
import { InterningReader } from './interning-reader.js';
import { int64ToNumber } from './int64.js';
import { remoteWriteTypes } from './proto-types.js';

type Label = { name: string; value: string };

const labelType = () => remoteWriteTypes().writeRequest.lookupType('prometheus.Label');

function encodeLabels(labels: Label[]): Uint8Array {
  const request = remoteWriteTypes().writeRequest;
  return request.encode(request.fromObject({ timeseries: [{ labels, samples: [] }] })).finish();
}

function decodeLabels(bytes: Uint8Array, table: StringTable): Label[] {
  const request = remoteWriteTypes().writeRequest.decode(new InterningReader(bytes, table));
  return (
    (request.toJSON() as { timeseries?: { labels?: Label[] }[] }).timeseries?.[0]?.labels ?? []
  );
}

/** The bytes of one Label message whose `value` field holds `value` as given, valid or not. */
function labelBytes(value: Uint8Array): Uint8Array {
  const writer = protobuf.Writer.create();
  writer.uint32((2 << 3) | 2).bytes(value);
  return writer.finish();
}

describe('InterningReader', () => {
  it('decodes what protobufjs decodes, whatever strings repeat or collide', () => {
    const text = fc.oneof(
      fc.constantFrom('__name__', 'instance', 'job', 'node-1:9100', ''),
      fc.string({ maxLength: 80 }),
      fc.string({ unit: 'grapheme', maxLength: 20 }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.record({ name: text, value: text }), { maxLength: 8 }), {
          minLength: 1,
          maxLength: 6,
        }),
        (requests) => {
          // Two slots: nearly every string collides with another.
          const table = new StringTable(2);
          for (const labels of requests) {
            const bytes = encodeLabels(labels);
            const expected = remoteWriteTypes().writeRequest.decode(bytes).toJSON();
            const request = remoteWriteTypes().writeRequest.decode(
              new InterningReader(bytes, table),
            );
            expect(request.toJSON()).toEqual(expected);
          }
        },
      ),
    );
  });

  it('keeps the ASCII strings it reads, and finds them by their bytes', () => {
    const table = new StringTable(1024);
    const value = 'node-17.example.internal:9100';
    const bytes = new TextEncoder().encode(value);
    expect(typeof table.find(bytes, 0, bytes.length)).toBe('number');
    decodeLabels(encodeLabels([{ name: 'instance', value }]), table);
    expect(table.find(bytes, 0, bytes.length)).toBe(value);
    // Non-ASCII is read, never kept: equal char codes would not mean equal bytes.
    const accented = new TextEncoder().encode('nœud-1');
    expect(
      decodeLabels(encodeLabels([{ name: 'instance', value: 'nœud-1' }]), table)[0]?.value,
    ).toBe('nœud-1');
    expect(typeof table.find(accented, 0, accented.length)).toBe('number');
  });

  it('keeps no string longer than 64 characters, and reads it all the same', () => {
    const table = new StringTable(1024);
    const long = 'x'.repeat(65);
    expect(decodeLabels(encodeLabels([{ name: 'a', value: long }]), table)[0]?.value).toBe(long);
    expect(decodeLabels(encodeLabels([{ name: 'a', value: long }]), table)[0]?.value).toBe(long);
  });

  it('rejects invalid UTF-8 as protobufjs does, even after a valid string of the same length', () => {
    const table = new StringTable(1);
    const valid = new TextEncoder().encode('ab');
    expect(
      labelType()
        .decode(new InterningReader(labelBytes(valid), table))
        .toJSON(),
    ).toEqual({
      value: 'ab',
    });
    const invalid = new Uint8Array([0xc3, 0x28]);
    expect(() => labelType().decode(invalid)).toThrow();
    expect(() => labelType().decode(new InterningReader(labelBytes(invalid), table))).toThrow();
  });

  it('throws as protobufjs does on a string running past the end', () => {
    const bytes = labelBytes(new TextEncoder().encode('abcdef')).subarray(0, 5);
    expect(() => labelType().decode(bytes)).toThrow(RangeError);
    expect(() => labelType().decode(new InterningReader(bytes, new StringTable(8)))).toThrow(
      RangeError,
    );
  });

  it('reads a zigzag varint (sint64) as the number protobufjs’ Long makes, to 64 bits', () => {
    const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    fc.assert(
      fc.property(fc.array(int64, { minLength: 1, maxLength: 20 }), (values) => {
        const writer = protobuf.Writer.create();
        for (const value of values) writer.sint64(String(value));
        const bytes = writer.finish();
        const theirs = protobuf.Reader.create(bytes);
        const ours = new InterningReader(bytes, new StringTable(16));
        for (let i = 0; i < values.length; i++) {
          expect(ours.sint64()).toBe(int64ToNumber(theirs.sint64()));
        }
        expect(ours.pos).toBe(bytes.length);
      }),
    );
    // Past the end: an error, as protobufjs throws one.
    const cut = protobuf.Writer.create().sint64(-123456789012).finish().subarray(0, 3);
    expect(() => new InterningReader(cut, new StringTable(16)).sint64()).toThrow();
  });
});
