/**
 * TimescaleDB's compressed columns as its `compressed_data` type sends them (the binary form
 * COPY writes: `tsl_compressed_data_send` in 2.28's tsl/src/compression), decoded here so that
 * a read of compressed history costs the server one row a batch of up to 1,000 samples instead
 * of one a sample (read-compressed-samples.ts). The three algorithms `samples`' columns get:
 *
 * - delta-delta (4), for bigint and smallint: differences of differences, zigzag-encoded in
 *   simple-8b RLE, from 0;
 * - Gorilla (3), for float8: each distinct value XOR the one before, with its leading zeros
 *   and width stored where they change, and tags for repeats;
 * - null (6): every value null.
 *
 * Integers come out as numbers, which hold them exactly up to 2^53: a column that needs more
 * throws `NotExactError`, and so does an algorithm not above; the caller then asks the server
 * to decode instead. Malformed input throws a plain Error: the caller never guesses.
 *
 * Decoding writes into a `ColumnBuffer` reused batch after batch: a read decodes thousands.
 */

/** A column this decoder cannot hand over exactly (an integer past 2^53, another algorithm). */
export class NotExactError extends Error {}

/**
 * One decoded column of a batch: `values[i]` for row i; where `hasNulls`, `nulls[i]` is 1 for
 * a null row (its value 0). Grown as batches need.
 */
export type ColumnBuffer = { values: Float64Array; nulls: Uint8Array; hasNulls: boolean };

export function createColumnBuffer(): ColumnBuffer {
  return { values: new Float64Array(1024), nulls: new Uint8Array(1024), hasNulls: false };
}

const algorithmGorilla = 3;
const algorithmDeltaDelta = 4;
const algorithmNull = 6;

/** Bits per value of each simple-8b selector (15: a run, 36 bits of value). */
const selectorBits = [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 21, 32, 64, 36];
const selectorCount = [0, 64, 32, 21, 16, 12, 10, 9, 8, 6, 5, 4, 3, 2, 1, 0];
const rleSelector = 15;

/** A big-endian cursor over one column's bytes. */
class Cursor {
  private at = 0;
  private readonly view: DataView;

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  byte(): number {
    this.need(1);
    return this.view.getUint8(this.at++);
  }

  uint32(): number {
    this.need(4);
    const v = this.view.getUint32(this.at);
    this.at += 4;
    return v;
  }

  /** 64-bit words as `[low, high]` pairs of 32-bit halves, into `into` from 0. */
  words(count: number, into: Uint32Array): void {
    this.need(count * 8);
    for (let i = 0; i < count; i++, this.at += 8) {
      into[i * 2 + 1] = this.view.getUint32(this.at);
      into[i * 2] = this.view.getUint32(this.at + 4);
    }
  }

  skip(n: number): void {
    this.need(n);
    this.at += n;
  }

  end(what: string): void {
    if (this.at !== this.bytes.length) throw new Error(`bytes after a ${what} column`);
  }

  private need(n: number): void {
    if (this.at + n > this.bytes.length) throw new Error('a compressed column cut short');
  }
}

/** Halves of 64-bit words, grown as needed: reused for each stream decoded. */
class Words {
  halves = new Uint32Array(2048);

  /** Room for `count` words. */
  room(count: number): Uint32Array {
    if (this.halves.length < count * 2) this.halves = new Uint32Array(count * 2);
    return this.halves;
  }
}

const selectorWords = new Words();
const blockWords = new Words();
const streamWords = new Words();
const bitmapBytes = { flags: new Uint8Array(1024) };

/**
 * A simple-8b RLE stream (`simple8brle_serialized_send`: element count, block count, the
 * selector slots of 16 four-bit selectors each, low bits first, then the blocks, their values
 * packed low bits first), as `[low, high]` halves per element into `out.room(…)`. Returns how
 * many elements.
 */
function readSimple8b(cursor: Cursor, out: Words): number {
  const count = cursor.uint32();
  const blocks = cursor.uint32();
  const slots = Math.ceil(blocks / 16);
  const selectors = selectorWords.room(slots);
  cursor.words(slots, selectors);
  const data = blockWords.room(blocks);
  cursor.words(blocks, data);
  // Full blocks are unpacked whole: room for a last one's padding.
  const capacity = count + 64;
  const halves = out.room(capacity);
  let n = 0;
  for (let b = 0; b < blocks; b++) {
    const pos = b & 15;
    const slot = (b >>> 4) * 2;
    const selector =
      pos < 8
        ? (selectors[slot]! >>> (pos * 4)) & 15
        : (selectors[slot + 1]! >>> ((pos - 8) * 4)) & 15;
    const lo = data[b * 2]!;
    const hi = data[b * 2 + 1]!;
    if (selector === rleSelector) {
      // 28 bits of repeat count above 36 bits of value.
      const repeat = hi >>> 4;
      if (n + repeat > capacity) throw new Error('a simple-8b run past its element count');
      for (let end = n + repeat; n < end; n++) {
        halves[n * 2] = lo;
        halves[n * 2 + 1] = hi & 15;
      }
      continue;
    }
    const bits = selectorBits[selector]!;
    const values = selectorCount[selector]!;
    if (values === 0) throw new Error('a simple-8b block with selector 0');
    if (n + values > capacity) throw new Error('a simple-8b block past its element count');
    if (bits === 64) {
      halves[n * 2] = lo;
      halves[n * 2 + 1] = hi;
      n++;
    } else if (bits === 32) {
      halves[n * 2] = lo;
      halves[n * 2 + 1] = 0;
      halves[n * 2 + 2] = hi;
      halves[n * 2 + 3] = 0;
      n += 2;
    } else {
      const mask = (1 << bits) - 1;
      for (let i = 0, shift = 0; i < values; i++, n++, shift += bits) {
        let v: number;
        if (shift + bits <= 32) v = (lo >>> shift) & mask;
        else if (shift >= 32) v = (hi >>> (shift - 32)) & mask;
        else v = ((lo >>> shift) | (hi << (32 - shift))) & mask;
        halves[n * 2] = v;
        halves[n * 2 + 1] = 0;
      }
    }
  }
  if (n < count) throw new Error('a simple-8b stream shorter than its element count');
  return count;
}

/** A simple-8b stream of 0s and 1s (null flags, Gorilla's tags), one byte each, into `into`. */
function readBitmap(cursor: Cursor, into: { flags: Uint8Array }): number {
  const count = readSimple8b(cursor, streamWords);
  if (into.flags.length < count) into.flags = new Uint8Array(count);
  const halves = streamWords.halves;
  const flags = into.flags;
  for (let i = 0; i < count; i++) {
    const v = halves[i * 2]!;
    if (v > 1 || halves[i * 2 + 1] !== 0) throw new Error('a bitmap value other than 0 or 1');
    flags[i] = v;
  }
  return count;
}

/**
 * Spreads the first `dense` values of `out` over the rows its null flags (in `bitmapBytes`)
 * leave, from the end, in place.
 */
function spreadNulls(out: ColumnBuffer, dense: number, rows: number): void {
  const flags = bitmapBytes.flags;
  let d = dense;
  for (let i = rows - 1; i >= 0; i--) {
    const isNull = flags[i]!;
    out.nulls[i] = isNull;
    if (isNull === 1) out.values[i] = 0;
    else if (d > 0) out.values[i] = out.values[--d]!;
    else throw new Error('null flags that do not match the values');
  }
  if (d !== 0) throw new Error('null flags that do not match the values');
  out.hasNulls = true;
}

/**
 * A column's end: without nulls its `dense` values are its rows; with them, its null flags
 * follow and spread the values over the rows they leave. Nothing may follow.
 */
function endColumn(
  cursor: Cursor,
  hasNulls: number,
  dense: number,
  rows: number,
  out: ColumnBuffer,
  what: string,
): void {
  if (hasNulls === 0) {
    if (dense !== rows) throw new Error(`a ${what} column shorter than its batch`);
    out.hasNulls = false;
  } else {
    if (readBitmap(cursor, bitmapBytes) !== rows) throw new Error('null flags of another batch');
    spreadNulls(out, dense, rows);
  }
  cursor.end(what);
}

function readDeltaDelta(cursor: Cursor, rows: number, out: ColumnBuffer): void {
  const hasNulls = cursor.byte();
  cursor.skip(16); // the last value and delta, for appending: not needed to read
  const count = readSimple8b(cursor, streamWords);
  if (count > rows) throw new Error('a delta-delta column longer than its batch');
  const halves = streamWords.halves;
  const values = out.values;
  // In 64 bits that wrap, as the server computed them (int32 halves: the differences of
  // stored values within ±2^53 still take up to 56 bits); each value then exact or refused.
  let deltaLo = 0;
  let deltaHi = 0;
  let valueLo = 0;
  let valueHi = 0;
  for (let i = 0; i < count; i++) {
    const lo = halves[i * 2]!;
    const hi = halves[i * 2 + 1]!;
    // Zigzag: (v >>> 1) ^ -(v & 1).
    let dLo = ((lo >>> 1) | (hi << 31)) >>> 0;
    let dHi = hi >>> 1;
    if (lo & 1) {
      dLo = ~dLo >>> 0;
      dHi = ~dHi;
    }
    let sum = deltaLo + dLo;
    deltaHi = (deltaHi + dHi + (sum > 0xffffffff ? 1 : 0)) | 0;
    deltaLo = sum >>> 0;
    sum = valueLo + deltaLo;
    valueHi = (valueHi + deltaHi + (sum > 0xffffffff ? 1 : 0)) | 0;
    valueLo = sum >>> 0;
    // Within ±2^53: high half in [−2^21, 2^21), or 2^53 itself.
    if (valueHi >= 0x200000 || valueHi < -0x200000) {
      if (valueHi !== 0x200000 || valueLo !== 0) throw new NotExactError('an integer past 2^53');
    }
    values[i] = valueHi * 4_294_967_296 + valueLo;
  }
  endColumn(cursor, hasNulls, count, rows, out, 'delta-delta');
}

/** A bit stream of 64-bit buckets, low bits first (TimescaleDB's BitArray). */
class BitReader {
  private at = 0;
  private bitCount = 0;
  readonly words = new Words();

  read(cursor: Cursor): void {
    const buckets = cursor.uint32();
    const lastBits = cursor.byte();
    cursor.words(buckets, this.words.room(buckets + 1));
    this.at = 0;
    this.bitCount = buckets === 0 ? 0 : (buckets - 1) * 64 + lastBits;
  }

  /** The next `n` ≤ 32 bits. */
  bits32(n: number): number {
    if (n === 0) return 0;
    if (this.at + n > this.bitCount) throw new Error('a bit array read past its end');
    const halves = this.words.halves;
    const word = this.at >>> 5;
    const shift = this.at & 31;
    let v = halves[word]! >>> shift;
    if (shift + n > 32) v |= halves[word + 1]! << (32 - shift);
    this.at += n;
    return n === 32 ? v >>> 0 : (v & (2 ** n - 1)) >>> 0;
  }
}

const leadingZeros = new BitReader();
const xors = new BitReader();
const tag0s = { flags: new Uint8Array(1024) };
const tag1s = { flags: new Uint8Array(1024) };
const widths = new Words();
let distinctHalves = new Uint32Array(2048);

/** Reused to turn a value's 64 bits into its float8. */
const floatBits = new Float64Array(1);
const floatHalves = new Uint32Array(floatBits.buffer);
const [loIndex, hiIndex] = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? [0, 1] : [1, 0];

function readGorilla(cursor: Cursor, rows: number, out: ColumnBuffer): void {
  const hasNulls = cursor.byte();
  cursor.skip(8); // the last value, for appending
  const notNull = readBitmap(cursor, tag0s);
  const distinctCount = readBitmap(cursor, tag1s);
  leadingZeros.read(cursor);
  const widthCount = readSimple8b(cursor, widths);
  xors.read(cursor);
  if (notNull > rows) throw new Error('a Gorilla column longer than its batch');
  if (distinctHalves.length < distinctCount * 2) {
    distinctHalves = new Uint32Array(distinctCount * 2);
  }
  // Each distinct value: the XOR with the one before, shifted into place by the leading zeros
  // and width that tag1 says are new (or else the previous ones).
  let hi = 0;
  let lo = 0;
  let width = 0;
  let zeros = 0;
  let changes = 0;
  for (let i = 0; i < distinctCount; i++) {
    if (tag1s.flags[i] === 1) {
      if (changes >= widthCount) throw new Error('a Gorilla width missing');
      width = widths.halves[changes * 2]!;
      if (width > 64) throw new Error('a Gorilla width past 64 bits');
      zeros = leadingZeros.bits32(6);
      changes++;
    } else if (changes === 0) throw new Error('a Gorilla column whose first tag1 is 0');
    const shift = (64 - (width + zeros)) & 63;
    const xLo = xors.bits32(Math.min(width, 32));
    const xHi = width > 32 ? xors.bits32(width - 32) : 0;
    if (shift === 0) {
      lo ^= xLo;
      hi ^= xHi;
    } else if (shift < 32) {
      lo ^= xLo << shift;
      hi ^= (xHi << shift) | (xLo >>> (32 - shift));
    } else {
      hi ^= xLo << (shift - 32);
    }
    distinctHalves[i * 2] = lo >>> 0;
    distinctHalves[i * 2 + 1] = hi >>> 0;
  }
  // Each value repeats the distinct one its tag0s count up to.
  const values = out.values;
  let k = -1;
  for (let i = 0; i < notNull; i++) {
    if (tag0s.flags[i] === 1) k++;
    if (k < 0 || k >= distinctCount) throw new Error('Gorilla tags that do not match values');
    floatHalves[loIndex] = distinctHalves[k * 2]!;
    floatHalves[hiIndex] = distinctHalves[k * 2 + 1]!;
    values[i] = floatBits[0]!;
  }
  endColumn(cursor, hasNulls, notNull, rows, out, 'Gorilla');
}

function allNull(rows: number, out: ColumnBuffer): void {
  out.values.fill(0, 0, rows);
  out.nulls.fill(1, 0, rows);
  out.hasNulls = true;
}

/**
 * One compressed column of a batch of `rows` rows, from its `compressed_data` send form (or
 * `undefined` where the column is SQL null: every value null), into `out`.
 */
export function decodeCompressedColumn(
  bytes: Uint8Array | undefined,
  rows: number,
  out: ColumnBuffer,
): void {
  if (out.values.length < rows) {
    out.values = new Float64Array(rows);
    out.nulls = new Uint8Array(rows);
  }
  if (bytes === undefined) return allNull(rows, out);
  const cursor = new Cursor(bytes);
  const algorithm = cursor.byte();
  if (algorithm === algorithmDeltaDelta) readDeltaDelta(cursor, rows, out);
  else if (algorithm === algorithmGorilla) readGorilla(cursor, rows, out);
  else if (algorithm === algorithmNull) {
    cursor.end('null');
    allNull(rows, out);
  } else throw new NotExactError(`compression algorithm ${algorithm}`);
}
