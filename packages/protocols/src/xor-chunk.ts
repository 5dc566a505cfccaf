// Prometheus' XOR chunk encoding (Gorilla's timestamp delta-of-delta and value XOR), ported
// from prometheus/tsdb/chunkenc/xor.go and bstream.go at v2.42.0 (commit 225c6112), Apache-2.0,
// themselves largely from Damian Gryski's go-tsz (BSD-2-Clause, © 2015,2016 Damian Gryski).
// The bit layout, the quirks of the bit stream (a whole byte written at a byte boundary leaves
// an empty byte at the end) and the clamping of leading zeros are kept as upstream has them, so
// that the same samples give the same bytes as Prometheus' own chunks.

/** The staleness marker's bits, 0x7ff0000000000002 (Prometheus' value.StaleNaN). */
export const staleNaNBits = { hi: 0x7ff00000, lo: 0x00000002 } as const;

/** Samples per chunk: Prometheus' TSDB cuts its head chunks at 120. */
export const samplesPerXorChunk = 120;

const twoTo32 = 4294967296;
const scratch = new DataView(new ArrayBuffer(8));

/**
 * Prometheus' value.NormalNaN, 0x7ff8000000000001: the bits of a NaN that is a value (a
 * JavaScript NaN need not keep its payload, so every such NaN goes out as these bits).
 */
export const normalNaNBits = { hi: 0x7ff80000, lo: 0x00000001 } as const;

/**
 * A float's 64 bits as two unsigned halves: a NaN becomes the staleness marker when `stale`,
 * Prometheus' NormalNaN otherwise.
 */
export function floatBits(value: number, stale = Number.isNaN(value)): { hi: number; lo: number } {
  if (stale) return staleNaNBits;
  if (Number.isNaN(value)) return normalNaNBits;
  scratch.setFloat64(0, value);
  return { hi: scratch.getUint32(0), lo: scratch.getUint32(4) };
}

function bitsToFloat(hi: number, lo: number): number {
  scratch.setUint32(0, hi);
  scratch.setUint32(4, lo);
  return scratch.getFloat64(0);
}

function ctz32(x: number): number {
  return 31 - Math.clz32(x & -x);
}

/** bstream: a growing byte array and the free bits of its last byte. */
class BitWriter {
  bytes = new Uint8Array(128);
  /** Starts after the two header bytes (the sample count), as NewXORChunk's stream does. */
  length = 2;
  /** How many right-most bits of the last byte are free. */
  private count = 0;

  private push(byte: number): void {
    if (this.length === this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bytes[this.length++] = byte;
  }

  writeBit(bit: number): void {
    if (this.count === 0) {
      this.push(0);
      this.count = 8;
    }
    if (bit !== 0) this.bytes[this.length - 1]! |= 1 << (this.count - 1);
    this.count--;
  }

  writeByte(byte: number): void {
    if (this.count === 0) {
      this.push(0);
      this.count = 8;
    }
    this.bytes[this.length - 1]! |= byte >>> (8 - this.count);
    this.push((byte << this.count) & 0xff);
  }

  /** The `nbits` (≤ 64) right-most bits of hi:lo, most significant first. */
  writeBits(hi: number, lo: number, nbits: number): void {
    let p = nbits;
    for (; p >= 8; p -= 8) {
      const shift = p - 8;
      let byte: number;
      if (shift >= 32) byte = hi >>> (shift - 32);
      else if (shift + 8 <= 32) byte = lo >>> shift;
      else byte = (lo >>> shift) | (hi << (32 - shift));
      this.writeByte(byte & 0xff);
    }
    for (; p > 0; p--) {
      const at = p - 1;
      this.writeBit(at >= 32 ? (hi >>> (at - 32)) & 1 : (lo >>> at) & 1);
    }
  }

  /** Go's binary.PutUvarint, byte by byte, for a non-negative integer below 2^53. */
  writeUvarint(value: number): void {
    let x = value;
    while (x >= 0x80) {
      this.writeByte((x % 128) | 0x80);
      x = Math.floor(x / 128);
    }
    this.writeByte(x);
  }
}

/** Go's bitRange: whether x fits in nbits as the XOR encoding counts (asymmetric on purpose). */
function bitRange(x: number, nbits: number): boolean {
  const half = 2 ** (nbits - 1);
  return -(half - 1) <= x && x <= half;
}

/**
 * An XOR chunk under construction (xorAppender). Samples must come in ascending time order.
 * Timestamps are integer milliseconds within ±2^53.
 */
export class XorChunkEncoder {
  private readonly out = new BitWriter();
  private count = 0;
  private t = 0;
  private tDelta = 0;
  private vHi = 0;
  private vLo = 0;
  private leading = 0xff;
  private trailing = 0;

  get numSamples(): number {
    return this.count;
  }

  /** Appends a float; a staleness marker when `stale` (by default: when it is NaN). */
  append(timestampMs: number, value: number, stale = Number.isNaN(value)): void {
    const { hi, lo } = floatBits(value, stale);
    this.appendBits(timestampMs, hi, lo);
  }

  /** Appends a value given by its 64 bits (unsigned 32-bit halves). */
  appendBits(timestampMs: number, hi: number, lo: number): void {
    const out = this.out;
    let tDelta = 0;
    if (this.count === 0) {
      // binary.PutVarint: zig-zag, then a uvarint.
      out.writeUvarint(timestampMs >= 0 ? timestampMs * 2 : -timestampMs * 2 - 1);
      out.writeBits(hi, lo, 64);
    } else if (this.count === 1) {
      tDelta = timestampMs - this.t;
      out.writeUvarint(tDelta);
      this.writeValueDelta(hi, lo);
    } else {
      tDelta = timestampMs - this.t;
      const dod = tDelta - this.tDelta;
      if (dod === 0) {
        out.writeBit(0);
      } else if (bitRange(dod, 14)) {
        out.writeBits(0, 0b10, 2);
        out.writeBits(0, dod & 0x3fff, 14);
      } else if (bitRange(dod, 17)) {
        out.writeBits(0, 0b110, 3);
        out.writeBits(0, dod & 0x1ffff, 17);
      } else if (bitRange(dod, 20)) {
        out.writeBits(0, 0b1110, 4);
        out.writeBits(0, dod & 0xfffff, 20);
      } else {
        out.writeBits(0, 0b1111, 4);
        const high = Math.floor(dod / twoTo32);
        out.writeBits(high >>> 0, dod - high * twoTo32, 64);
      }
      this.writeValueDelta(hi, lo);
    }
    this.t = timestampMs;
    this.vHi = hi;
    this.vLo = lo;
    this.tDelta = tDelta;
    this.count++;
  }

  /** xorWrite. */
  private writeValueDelta(hi: number, lo: number): void {
    const out = this.out;
    const dHi = (hi ^ this.vHi) >>> 0;
    const dLo = (lo ^ this.vLo) >>> 0;
    if (dHi === 0 && dLo === 0) {
      out.writeBit(0);
      return;
    }
    out.writeBit(1);
    let newLeading = dHi !== 0 ? Math.clz32(dHi) : 32 + Math.clz32(dLo);
    const newTrailing = dLo !== 0 ? ctz32(dLo) : 32 + ctz32(dHi);
    // Clamp the leading zeros to what 5 bits hold.
    if (newLeading >= 32) newLeading = 31;
    if (this.leading !== 0xff && newLeading >= this.leading && newTrailing >= this.trailing) {
      out.writeBit(0);
      const [sHi, sLo] = shiftRight(dHi, dLo, this.trailing);
      out.writeBits(sHi, sLo, 64 - this.leading - this.trailing);
      return;
    }
    this.leading = newLeading;
    this.trailing = newTrailing;
    out.writeBit(1);
    out.writeBits(0, newLeading, 5);
    // 64 significant bits do not fit in 6 bits: written as 0, read back as 64.
    const sigbits = 64 - newLeading - newTrailing;
    out.writeBits(0, sigbits & 0x3f, 6);
    const [sHi, sLo] = shiftRight(dHi, dLo, newTrailing);
    out.writeBits(sHi, sLo, sigbits);
  }

  /** The chunk's bytes: the big-endian sample count, then the bit stream. */
  bytes(): Uint8Array {
    const bytes = this.out.bytes.slice(0, this.out.length);
    bytes[0] = this.count >>> 8;
    bytes[1] = this.count & 0xff;
    return bytes;
  }
}

function shiftRight(hi: number, lo: number, n: number): [number, number] {
  if (n === 0) return [hi, lo];
  if (n >= 32) return [0, hi >>> (n - 32)];
  return [hi >>> n, ((lo >>> n) | (hi << (32 - n))) >>> 0];
}

/** bstreamReader, bit by bit (decoding serves tests and clients, not the hot path). */
class BitReader {
  private bit = 0;
  constructor(private readonly bytes: Uint8Array) {}

  readBit(): number {
    const index = this.bit >>> 3;
    if (index >= this.bytes.length) throw new Error('XOR chunk: unexpected end of data');
    const value = (this.bytes[index]! >>> (7 - (this.bit & 7))) & 1;
    this.bit++;
    return value;
  }

  /** Up to 64 bits as unsigned halves. */
  readBits(nbits: number): [number, number] {
    let hi = 0;
    let lo = 0;
    for (let i = 0; i < nbits; i++) {
      hi = ((hi << 1) | (lo >>> 31)) >>> 0;
      lo = ((lo << 1) | this.readBit()) >>> 0;
    }
    return [hi, lo];
  }

  readSmall(nbits: number): number {
    return this.readBits(nbits)[1];
  }

  readUvarint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const byte = this.readSmall(8);
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
    throw new Error('XOR chunk: varint overflows 64 bits');
  }
}

/** A decoded chunk: times, values (the staleness marker as NaN) and each value's 64 bits. */
export type DecodedXorChunk = {
  timestampsMs: number[];
  values: number[];
  /** [hi, lo] per sample, unsigned 32-bit halves: tells the staleness marker from other NaNs. */
  valueBits: [number, number][];
};

/** Reads an XOR chunk (xorIterator); throws on truncated data. */
export function decodeXorChunk(bytes: Uint8Array): DecodedXorChunk {
  if (bytes.length < 2) throw new Error('XOR chunk: no header');
  const total = (bytes[0]! << 8) | bytes[1]!;
  const reader = new BitReader(bytes.subarray(2));
  const out: DecodedXorChunk = { timestampsMs: [], values: [], valueBits: [] };
  let t = 0;
  let tDelta = 0;
  let hi = 0;
  let lo = 0;
  let leading = 0;
  let trailing = 0;
  const readValue = (): void => {
    if (reader.readBit() === 0) return;
    let mbits: number;
    if (reader.readBit() === 0) {
      mbits = 64 - leading - trailing;
    } else {
      leading = reader.readSmall(5);
      mbits = reader.readSmall(6);
      if (mbits === 0) mbits = 64;
      trailing = 64 - leading - mbits;
    }
    const [bHi, bLo] = reader.readBits(mbits);
    const [xHi, xLo] = shiftLeft(bHi, bLo, trailing);
    hi = (hi ^ xHi) >>> 0;
    lo = (lo ^ xLo) >>> 0;
  };
  for (let n = 0; n < total; n++) {
    if (n === 0) {
      const zigzag = reader.readUvarint();
      t = zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2;
      [hi, lo] = reader.readBits(64);
    } else if (n === 1) {
      tDelta = reader.readUvarint();
      t += tDelta;
      readValue();
    } else {
      let d = 0;
      for (let i = 0; i < 4; i++) {
        d <<= 1;
        if (reader.readBit() === 0) break;
        d |= 1;
      }
      let dod = 0;
      const size = d === 0b10 ? 14 : d === 0b110 ? 17 : d === 0b1110 ? 20 : 0;
      if (d === 0b1111) {
        const [dHi, dLo] = reader.readBits(64);
        dod = (dHi | 0) * twoTo32 + dLo;
      } else if (size !== 0) {
        let bits = reader.readSmall(size);
        if (bits > 2 ** (size - 1)) bits -= 2 ** size;
        dod = bits;
      }
      tDelta += dod;
      t += tDelta;
      readValue();
    }
    out.timestampsMs.push(t);
    out.values.push(bitsToFloat(hi, lo));
    out.valueBits.push([hi, lo]);
  }
  return out;
}

function shiftLeft(hi: number, lo: number, n: number): [number, number] {
  if (n === 0) return [hi, lo];
  if (n >= 32) return [(lo << (n - 32)) >>> 0, 0];
  return [((hi << n) | (lo >>> (32 - n))) >>> 0, (lo << n) >>> 0];
}

/** One chunk of a series as remote read sends it. */
export type XorChunk = { minTimeMs: number; maxTimeMs: number; data: Uint8Array };

/**
 * A series' samples (ascending times) cut into XOR chunks of at most `samplesPerChunk`. `stale`
 * flags the staleness markers (1); without it, every NaN is one.
 */
export function encodeXorChunks(
  timestampsMs: ArrayLike<number>,
  values: ArrayLike<number>,
  samplesPerChunk = samplesPerXorChunk,
  stale?: ArrayLike<number>,
): XorChunk[] {
  const chunks: XorChunk[] = [];
  for (let start = 0; start < timestampsMs.length; start += samplesPerChunk) {
    const end = Math.min(start + samplesPerChunk, timestampsMs.length);
    const encoder = new XorChunkEncoder();
    for (let i = start; i < end; i++) {
      const value = values[i]!;
      encoder.append(
        timestampsMs[i]!,
        value,
        stale === undefined ? Number.isNaN(value) : stale[i] === 1,
      );
    }
    chunks.push({
      minTimeMs: timestampsMs[start]!,
      maxTimeMs: timestampsMs[end - 1]!,
      data: encoder.bytes(),
    });
  }
  return chunks;
}
