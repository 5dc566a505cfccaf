import { describe, expect, it } from 'vitest';
import { createColumnBuffer, decodeCompressedColumn, NotExactError } from './compressed-columns.js';

// The real encodings are read against TimescaleDB in read-compressed-samples.int.test.ts; these
// are the shapes built by hand: a run, a short column, what is refused.

const word = (hi: number, lo: number): number[] => {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(hi >>> 0, 0);
  b.writeUInt32BE(lo >>> 0, 4);
  return [...b];
};
const uint32 = (v: number): number[] => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v, 0);
  return [...b];
};

/** A delta-delta column without nulls: its zigzag stream as simple-8b blocks. */
const deltaDelta = (count: number, blocks: { selector: number; hi: number; lo: number }[]) =>
  Uint8Array.from([
    4, // delta-delta
    0, // no nulls
    ...word(0, 0), // last value (for appending)
    ...word(0, 0), // last delta
    ...uint32(count),
    ...uint32(blocks.length),
    ...word(
      0,
      blocks.reduce((slot, b, i) => slot | (b.selector << (4 * i)), 0),
    ),
    ...blocks.flatMap((b) => word(b.hi, b.lo)),
  ]);

const decoded = (bytes: Uint8Array | undefined, rows: number) => {
  const column = createColumnBuffer();
  decodeCompressedColumn(bytes, rows, column);
  return {
    values: Array.from(column.values.subarray(0, rows)),
    nulls: column.hasNulls ? Array.from(column.nulls.subarray(0, rows)) : undefined,
  };
};

describe('compressed columns', () => {
  it('reads a delta-delta column packed in 4-bit values', () => {
    // 7, 7, 7, 7: differences of differences 7, −7, 0, 0, zigzag 14, 13, 0, 0.
    const bytes = deltaDelta(4, [{ selector: 4, hi: 0, lo: 14 | (13 << 4) }]);
    expect(decoded(bytes, 4)).toEqual({ values: [7, 7, 7, 7], nulls: undefined });
  });

  it('reads a run: a packed block of 16 and 984 zeros more', () => {
    const bytes = deltaDelta(1000, [
      { selector: 4, hi: 0, lo: 6 | (5 << 4) },
      { selector: 15, hi: 984 << 4, lo: 0 },
    ]);
    expect(decoded(bytes, 1000).values).toEqual(Array.from({ length: 1000 }, () => 3));
  });

  it('reads whole 64-bit blocks, negative values among them', () => {
    // −2^40 then +2^40: zigzag(−2^40) = 2^41 − 1; then a difference of 2^41, from −2^40
    // back: zigzag(2^41 + 2^40) = 2^42 + 2^41.
    const bytes = deltaDelta(2, [
      { selector: 14, hi: 2 ** 9 - 1, lo: 0xffffffff },
      { selector: 14, hi: 2 ** 10 + 2 ** 9, lo: 0 },
    ]);
    expect(decoded(bytes, 2).values).toEqual([-(2 ** 40), 2 ** 40]);
  });

  it('refuses an integer past 2^53 rather than round it', () => {
    // 2^53 + 1: zigzag 2^54 + 2.
    const bytes = deltaDelta(1, [{ selector: 14, hi: 2 ** 22, lo: 2 }]);
    expect(() => decoded(bytes, 1)).toThrow(NotExactError);
    expect(decoded(deltaDelta(1, [{ selector: 14, hi: 2 ** 22, lo: 0 }]), 1).values).toEqual([
      2 ** 53,
    ]);
  });

  it('takes a null column, or a column that is SQL null, as every row null', () => {
    const all = { values: [0, 0, 0], nulls: [1, 1, 1] };
    expect(decoded(Uint8Array.from([6]), 3)).toEqual(all);
    expect(decoded(undefined, 3)).toEqual(all);
  });

  it('refuses what it does not know and what is cut short or too long', () => {
    expect(() => decoded(Uint8Array.from([1, 0, 0]), 1)).toThrow(NotExactError);
    const bytes = deltaDelta(4, [{ selector: 4, hi: 0, lo: 14 | (13 << 4) }]);
    expect(() => decoded(bytes.subarray(0, bytes.length - 1), 4)).toThrow(/cut short/);
    expect(() => decoded(Uint8Array.from([...bytes, 0]), 4)).toThrow(/bytes after/);
    expect(() => decoded(bytes, 5)).toThrow(/shorter than its batch/);
    expect(() => decoded(deltaDelta(4, [{ selector: 0, hi: 0, lo: 0 }]), 4)).toThrow(/selector 0/);
  });
});
