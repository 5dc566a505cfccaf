import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeScale, scaledMantissa, unscaled } from '../storage/scaled-value.js';
import type { SlabReader } from './binary-arrays.js';
import {
  createFloat64SlabPool,
  createFloat64Slabs,
  decodeFloat8Array,
  decodePackedEpochMs,
  decodePackedOffsetsMs,
  decodeScaledCodes,
  decodeTimestampArray,
} from './binary-arrays.js';

/** A one-dimensional array of 8-byte elements in PostgreSQL's binary form (array_send). */
function binaryArray(
  elementOid: number,
  write: (buf: Buffer, at: number, i: number) => void,
  n: number,
): Buffer {
  const buf = Buffer.alloc(n === 0 ? 12 : 20 + n * 12);
  buf.writeInt32BE(n === 0 ? 0 : 1, 0);
  buf.writeInt32BE(0, 4);
  buf.writeInt32BE(elementOid, 8);
  if (n === 0) return buf;
  buf.writeInt32BE(n, 12);
  buf.writeInt32BE(1, 16);
  for (let i = 0; i < n; i++) {
    buf.writeInt32BE(8, 20 + i * 12);
    write(buf, 24 + i * 12, i);
  }
  return buf;
}

describe('decodeFloat8Array', () => {
  it('reads every value bit for bit', () => {
    const values = [-0, 0, Number.NaN, Number.POSITIVE_INFINITY, -1e100, 5e-324, 0.1 + 0.2];
    const bytes = binaryArray(
      701,
      (buf, at, i) => buf.writeDoubleBE(values[i]!, at),
      values.length,
    );
    expect(Array.from(decodeFloat8Array(bytes))).toEqual(values);
    expect(Object.is(decodeFloat8Array(bytes)[0], -0)).toBe(true);
  });

  it('reads an empty array and NULL as no values', () => {
    expect(decodeFloat8Array(binaryArray(701, () => undefined, 0))).toHaveLength(0);
    expect(decodeFloat8Array(null)).toHaveLength(0);
  });

  it('refuses elements that are not 8 bytes', () => {
    const bytes = binaryArray(701, (buf, at) => buf.writeDoubleBE(1, at), 2);
    expect(() => decodeFloat8Array(bytes.subarray(0, bytes.length - 4))).toThrow(/8-byte/);
  });
});

describe('decodeTimestampArray', () => {
  it('reads microseconds since 2000-01-01 as Unix milliseconds', () => {
    const timesMs = [Date.UTC(2026, 10, 25, 16, 0, 0, 1), Date.UTC(1999, 11, 31, 23, 59, 59, 999)];
    const micros = timesMs.map((ms) => BigInt(ms - Date.UTC(2000, 0, 1)) * 1000n);
    const bytes = binaryArray(1184, (buf, at, i) => buf.writeBigInt64BE(micros[i]!, at), 2);
    expect(Array.from(decodeTimestampArray(bytes))).toEqual(timesMs);
  });
});

/** Values packed as the series source's statement packs them over `raw_scaled_samples`. */
function packScaledCodes(values: number[], preferredScale = unscaled): Buffer {
  const parts = values.map((value) => {
    const scale = encodeScale(value, preferredScale);
    if (scale === unscaled) {
      const part = Buffer.alloc(16);
      part.writeDoubleBE(value, 8);
      return part;
    }
    const part = Buffer.alloc(8);
    part.writeBigInt64BE(BigInt(scaledMantissa(value, scale)) * 128n + BigInt(scale + 64));
    return part;
  });
  return Buffer.concat(parts);
}

describe('decodeScaledCodes', () => {
  it('reads scaled integers and float8s alike, bit for bit', () => {
    const values = [-0, 0, Number.NaN, Number.NEGATIVE_INFINITY, 1e300, 5e-324, 0.1 + 0.2, 12.25];
    values.push(-(2 ** 53), 2 ** 62, -4096 * 7, 0.1 + 0.7, -123.456);
    const decoded = Array.from(decodeScaledCodes(packScaledCodes(values), values.length));
    expect(decoded).toEqual(values);
    expect(Object.is(decoded[0], -0)).toBe(true);
    expect(decodeScaledCodes(Buffer.alloc(0), 0)).toHaveLength(0);
  });

  it('gives back every double exactly, at any preferred scale', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double(), { maxLength: 20 }),
        fc.integer({ min: -62, max: 22 }),
        (values, preferredScale) => {
          const decoded = decodeScaledCodes(packScaledCodes(values, preferredScale), values.length);
          values.forEach((v, i) => expect(Object.is(decoded[i], v)).toBe(true));
        },
      ),
    );
  });

  it('refuses fewer or more values than times', () => {
    const bytes = packScaledCodes([1, 2.5, Number.NaN]);
    expect(() => decodeScaledCodes(bytes, 4)).toThrow(/as many values as times/);
    expect(() => decodeScaledCodes(bytes, 2)).toThrow(/as many values as times/);
    expect(() => decodeScaledCodes(bytes.subarray(0, 28), 3)).toThrow(/float8 after a zero code/);
  });
});

describe('decodePackedEpochMs', () => {
  it('reads 8-byte integers exactly, before 1970 and far after it', () => {
    const timesMs = [0, -1, Date.UTC(2026, 10, 25, 16, 0, 0, 1), 2 ** 53 - 1, -(2 ** 40)];
    const bytes = Buffer.alloc(timesMs.length * 8);
    timesMs.forEach((t, i) => bytes.writeBigInt64BE(BigInt(t), i * 8));
    expect(Array.from(decodePackedEpochMs(bytes))).toEqual(timesMs);
  });
});

describe('decodePackedOffsetsMs', () => {
  it('reads 4-byte offsets from the base exactly, over the whole int4 range', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -(2 ** 45), max: 2 ** 45 }),
        fc.array(fc.integer({ min: 0, max: 2 ** 31 - 1 })),
        (baseMs, offsets) => {
          const bytes = Buffer.alloc(offsets.length * 4);
          offsets.forEach((o, i) => bytes.writeInt32BE(o, i * 4));
          expect(Array.from(decodePackedOffsetsMs(bytes, baseMs))).toEqual(
            offsets.map((o) => baseMs + o),
          );
        },
      ),
    );
  });

  it('refuses bytes that are not whole offsets', () => {
    expect(() => decodePackedOffsetsMs(Buffer.alloc(6), 0)).toThrow(/4-byte values/);
  });
});

describe('createFloat64Slabs', () => {
  it('hands out zeroed arrays of the lengths asked that never share an element', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 60 }), (lengths) => {
        const allocate = createFloat64Slabs(256);
        const arrays = lengths.map((length) => allocate(length));
        expect(arrays.map((a) => a.length)).toEqual(lengths);
        for (const a of arrays) expect(a.every((x) => x === 0)).toBe(true);
        // Each array written with its own index: none overwrote another.
        arrays.forEach((a, i) => a.fill(i + 1));
        arrays.forEach((a, i) => expect(a.every((x) => x === i + 1)).toBe(true));
      }),
    );
  });

  it('gives an array of more than a quarter of a slab a backing store of its own', () => {
    const allocate = createFloat64Slabs(256);
    const small = allocate(10);
    expect(small.buffer.byteLength).toBe(256 * 8);
    expect(allocate(65).buffer.byteLength).toBe(65 * 8);
    expect(allocate(10).buffer).toBe(small.buffer);
  });
});

describe('createFloat64SlabPool', () => {
  type Op =
    | { kind: 'lease' }
    | { kind: 'reader'; lease: number }
    | { kind: 'allocate'; reader: number; length: number }
    | { kind: 'end'; reader: number }
    | { kind: 'release'; lease: number };
  const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
    fc.constant<Op>({ kind: 'lease' }),
    fc.nat(3).map((lease): Op => ({ kind: 'reader', lease })),
    fc
      .record({ reader: fc.nat(8), length: fc.integer({ min: 0, max: 100 }) })
      .map(({ reader, length }): Op => ({ kind: 'allocate', reader, length })),
    fc.nat(8).map((reader): Op => ({ kind: 'end', reader })),
    fc.nat(3).map((lease): Op => ({ kind: 'release', lease })),
  );

  it("never lets one query's slabs hold another's arrays while it may still read or write them", () => {
    fc.assert(
      fc.property(fc.array(opArbitrary, { maxLength: 80 }), (ops) => {
        const pool = createFloat64SlabPool({ maxIdleSlabs: 4, slabLength: 128 });
        const leases: { lease: ReturnType<typeof pool.lease>; released: boolean; open: number }[] =
          [];
        // `pooled`: asked for before its lease's release (later ones get slabs of their own).
        const readers: { reader: SlabReader; lease: number; pooled: boolean; ended: boolean }[] =
          [];
        const arrays: { array: Float64Array; tag: number; lease: number }[] = [];
        // A lease's arrays are its own until it is released and every reader of it has ended.
        const held = (lease: number): boolean =>
          !leases[lease]!.released || leases[lease]!.open > 0;
        for (const op of ops) {
          if (op.kind === 'lease') leases.push({ lease: pool.lease(), released: false, open: 0 });
          else if (op.kind === 'reader' && op.lease < leases.length) {
            const entry = leases[op.lease]!;
            const pooled = !entry.released;
            readers.push({ reader: entry.lease.reader(), lease: op.lease, pooled, ended: false });
            if (pooled) entry.open++;
          } else if (op.kind === 'allocate' && op.reader < readers.length) {
            const { reader, lease } = readers[op.reader]!;
            const array = reader.allocate(op.length);
            expect(array.length).toBe(op.length);
            expect(array.every((x) => x === 0)).toBe(true);
            const tag = arrays.length + 1;
            array.fill(tag);
            arrays.push({ array, tag, lease });
          } else if (op.kind === 'end' && op.reader < readers.length) {
            const entry = readers[op.reader]!;
            if (!entry.ended && entry.pooled) leases[entry.lease]!.open--;
            entry.ended = true;
            entry.reader.end();
          } else if (op.kind === 'release' && op.lease < leases.length) {
            leases[op.lease]!.released = true;
            leases[op.lease]!.lease.release();
          }
          for (const { array, tag, lease } of arrays) {
            if (held(lease)) expect(array.every((x) => x === tag)).toBe(true);
          }
          expect(pool.idleSlabs()).toBeLessThanOrEqual(4);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('hands the slabs of a released query to the next, zeroed, and keeps at most maxIdleSlabs', () => {
    const pool = createFloat64SlabPool({ maxIdleSlabs: 2, slabLength: 128 });
    const first = pool.lease();
    const reader = first.reader();
    // Four arrays of 30 to a slab of 128: three slabs.
    const arrays = Array.from({ length: 9 }, () => reader.allocate(30).fill(7));
    expect(new Set(arrays.map((array) => array.buffer)).size).toBe(3);
    first.release();
    expect(pool.idleSlabs()).toBe(0); // a reader still reads
    reader.end();
    expect(pool.idleSlabs()).toBe(2);
    const next = pool.lease().reader().allocate(10);
    expect(arrays.map((array) => array.buffer)).toContain(next.buffer);
    expect(new Float64Array(next.buffer).every((x) => x === 0)).toBe(true);
  });
});
