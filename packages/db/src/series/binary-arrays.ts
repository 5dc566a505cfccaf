/**
 * PostgreSQL's binary forms of what the series source reads: one-dimensional arrays of 8-byte
 * elements (array_send), and 8-byte values packed back to back (`string_agg` of their binary
 * send forms, as a column of COPY's binary format; copy-binary-reader.ts reads the rows).
 */

import { decodeScaled } from '../storage/scaled-value.js';

/** PostgreSQL's epoch (2000-01-01) in Unix ms: timestamptz's binary form counts µs from it. */
const postgresEpochMs = 946_684_800_000;

/**
 * The element count of a one-dimensional array without nulls of 8-byte elements in
 * PostgreSQL's binary format (ndim, flags, element oid, length, lower bound, then a 4-byte size
 * and the 8 bytes of each element), and a view to read them; 0 for none.
 */
export function binaryArray(bytes: Uint8Array | null): { length: number; view: DataView } {
  const view =
    bytes === null
      ? new DataView(new ArrayBuffer(4))
      : new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes === null || view.getInt32(0) === 0) return { length: 0, view };
  if (view.getInt32(0) !== 1 || view.getInt32(4) !== 0 || bytes.length < 20) {
    throw new Error('expected a one-dimensional array without nulls');
  }
  const length = view.getInt32(12);
  if (bytes.length !== 20 + length * 12) throw new Error('expected 8-byte array elements');
  return { length, view };
}

/** timestamptz[] (µs since 2000-01-01) as epoch ms. Loops written out: they run per sample. */
export function decodeTimestampArray(bytes: Uint8Array | null): Float64Array {
  const { length, view } = binaryArray(bytes);
  const out = new Float64Array(length);
  for (let i = 0, at = 24; i < length; i++, at += 12) {
    out[i] = (view.getInt32(at) * 4_294_967_296 + view.getUint32(at + 4)) / 1000 + postgresEpochMs;
  }
  return out;
}

/** Where a decoder puts what it decodes: a zeroed array of `length` numbers. */
export type Float64Allocator = (length: number) => Float64Array;

const newFloat64Array: Float64Allocator = (length) => new Float64Array(length);

/**
 * An allocator that hands out views of 1 MiB slabs, for the arrays of one read. A PromQL read of
 * 1,000 series made 2,000 arrays of 11.5 KiB, each a backing store of its own outside V8's heap,
 * and the young collections V8 runs for that external memory cost the api more than decoding
 * (docs/benchmarks/promql.md, "PromQL"). A view keeps its whole slab alive: meant for the arrays of one
 * query, which die with it. An array of more than a quarter of a slab gets one of its own.
 * `newSlab` gives the slabs (a pool's reader takes them from the pool).
 */
export function createFloat64Slabs(
  slabLength = 131_072,
  newSlab: () => Float64Array<ArrayBuffer> = () => new Float64Array(slabLength),
): Float64Allocator {
  let slab = new Float64Array(0);
  let used = 0;
  return (length) => {
    if (length > slabLength / 4) return new Float64Array(length);
    if (used + length > slab.length) {
      slab = newSlab();
      used = 0;
    }
    const out = slab.subarray(used, used + length);
    used += length;
    return out;
  };
}

/**
 * Arrays of `value` of any length, views of one array grown as asked: for columns a read leaves
 * at one value (an aggregate it does not read, no staleness markers), without an array each.
 * Read-only: every view shares the array.
 */
export function createConstantArrays(value: number): Float64Allocator {
  let array = new Float64Array(0);
  return (length) => {
    if (length > array.length) {
      array = new Float64Array(Math.max(length, 2 * array.length)).fill(value);
    }
    return array.subarray(0, length);
  };
}

/** One read's allocator from a lease, and its end: it decodes nothing more. */
export type SlabReader = { allocate: Float64Allocator; end(): void };

/** A reader with slabs of its own, never pooled: nothing to hand back at its end. */
export function unpooledReader(slabLength?: number): SlabReader {
  return { allocate: createFloat64Slabs(slabLength), end: () => undefined };
}

/** The slabs of one query, from a pool (`createFloat64SlabPool`). */
export type Float64SlabLease = {
  /** An allocator for one read of the query; call `end` once that read decodes nothing more. */
  reader(): SlabReader;
  /**
   * Nothing reads the query's arrays any more (its answer is written): its slabs go back to the
   * pool, zeroed, once every reader has ended. A reader asked for after this gets slabs of its
   * own, never pooled.
   */
  release(): void;
};

export type Float64SlabPool = {
  lease(): Float64SlabLease;
  /** Slabs waiting for the next lease. */
  idleSlabs(): number;
};

/**
 * Slabs handed from one query to the next: a range query over 1,000 series decodes into about
 * 23 MiB of them, and new ones every query kept V8's young collections busy with external memory
 * (docs/benchmarks/promql.md, "PromQL"). A slab goes back only when the lease is released and each of
 * its readers has ended, so a read still running after its query failed never writes into
 * another query's arrays; it comes back zeroed, so no query reads another's (or another
 * organization's) numbers. At most `maxIdleSlabs` wait; the rest are left to the collector.
 */
export function createFloat64SlabPool(options: {
  maxIdleSlabs: number;
  slabLength?: number;
}): Float64SlabPool {
  const { maxIdleSlabs, slabLength = 131_072 } = options;
  const idle: Float64Array<ArrayBuffer>[] = [];
  return {
    idleSlabs: () => idle.length,
    lease() {
      const taken: Float64Array<ArrayBuffer>[] = [];
      let readers = 0;
      let released = false;
      const giveBack = (): void => {
        for (const slab of taken.splice(0)) {
          if (idle.length >= maxIdleSlabs) break;
          idle.push(slab.fill(0));
        }
      };
      return {
        reader() {
          if (released) return unpooledReader(slabLength);
          readers++;
          let ended = false;
          const allocate = createFloat64Slabs(slabLength, () => {
            const slab = idle.pop() ?? new Float64Array(slabLength);
            taken.push(slab);
            return slab;
          });
          return {
            allocate,
            end() {
              if (ended) return;
              ended = true;
              readers--;
              if (released && readers === 0) giveBack();
            },
          };
        },
        release() {
          if (released) return;
          released = true;
          if (readers === 0) giveBack();
        },
      };
    },
  };
}

/** A view of `bytes` holding `width`-byte values back to back, and how many. */
function packedValues(bytes: Uint8Array, width: 4 | 8): { length: number; view: DataView } {
  if (bytes.length % width !== 0) throw new Error(`expected ${width}-byte values back to back`);
  return {
    length: bytes.length / width,
    view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength),
  };
}

/**
 * Epoch milliseconds as `string_agg(int8send(time_ms), '')` packs them: 8-byte big-endian
 * integers back to back, a third fewer bytes than an int8[] (no length before each). Exact: a
 * time is far below 2^53 ms.
 */
export function decodePackedEpochMs(
  bytes: Uint8Array,
  allocate: Float64Allocator = newFloat64Array,
): Float64Array {
  const { length, view } = packedValues(bytes, 8);
  const out = allocate(length);
  for (let i = 0, at = 0; i < length; i++, at += 8) {
    out[i] = view.getInt32(at) * 4_294_967_296 + view.getUint32(at + 4);
  }
  return out;
}

/**
 * Epoch milliseconds as `string_agg(int4send((time_ms - base_ms)::int4), '')` packs them: 4-byte
 * big-endian offsets from `baseMs` back to back, half the bytes of `decodePackedEpochMs`' for a
 * read spanning less than 2^31 ms (24.8 days).
 */
export function decodePackedOffsetsMs(
  bytes: Uint8Array,
  baseMs: number,
  allocate: Float64Allocator = newFloat64Array,
): Float64Array {
  const { length, view } = packedValues(bytes, 4);
  const out = allocate(length);
  for (let i = 0, at = 0; i < length; i++, at += 4) out[i] = baseMs + view.getInt32(at);
  return out;
}

/**
 * Values as `string_agg(coalesce(int8send(scaled), zero8 || float8send(value)), '')` packs
 * them over `raw_scaled_samples` (storage/scaled-code.ts): per value an 8-byte big-endian
 * `mantissa × 128 + scale + 64`, whose low 7 bits (the scale + 64) are never 0, or 8 zero bytes
 * and then the float8, bit for bit. `count` is how many values (as many as the times). Decoded as
 * `sample_value` decodes in SQL (`decodeScaled`: the same IEEE operation, the same bits).
 */
export function decodeScaledCodes(
  bytes: Uint8Array,
  count: number,
  allocate: Float64Allocator = newFloat64Array,
): Float64Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = allocate(count);
  let at = 0;
  for (let i = 0; i < count; i++, at += 8) {
    if (at + 8 > bytes.length) throw new Error('expected as many values as times');
    const low = view.getUint32(at + 4);
    const code = low & 127;
    if (code === 0) {
      at += 8;
      if (at + 8 > bytes.length) throw new Error('expected a float8 after a zero code');
      out[i] = view.getFloat64(at);
      continue;
    }
    // (high × 2^32 + low − code) / 128, exact: |mantissa| ≤ 2^53.
    out[i] = decodeScaled(view.getInt32(at) * 33_554_432 + (low - code) / 128, code - 64);
  }
  if (at !== bytes.length) throw new Error('expected as many values as times');
  return out;
}

/** float8[], bit for bit (−0, NaN payloads, ±Inf as sent). */
export function decodeFloat8Array(bytes: Uint8Array | null): Float64Array {
  const { length, view } = binaryArray(bytes);
  const out = new Float64Array(length);
  for (let i = 0, at = 24; i < length; i++, at += 12) out[i] = view.getFloat64(at);
  return out;
}
