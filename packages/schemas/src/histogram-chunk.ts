import type { BucketSpan, NativeHistogram, TimedHistogram } from './native-histogram.js';
import { counterResetHints } from './native-histogram.js';

/**
 * The native histograms of one series in time order, in bytes: our compressed layout for the bus
 * (one histogram) and for storage (many), lossless bit for bit. Its idea is Prometheus' histogram
 * chunk's: a bit stream of delta-of-delta times, the bucket layout written only when it changes,
 * delta-of-delta integer counts and XOR'd floats, each in as few bits as its size needs. Layout:
 *
 * - a version byte (`02`), the sample count (a varint), then the bit stream, most significant
 *   bit first, zero-padded to a whole byte;
 * - per sample: its time (the first absolute, the second its delta, then deltas of deltas), a
 *   `0` bit when its flags are the sample before's, else `1` and 5 bits of flags (bit 0 the
 *   layout follows, bit 1 `integer`, bit 2 the counts are XOR'd floats, bits 3–4 the counter
 *   reset hint), the layout when flagged (schema, the zero threshold's 64 bits, the positive then
 *   the negative spans as a count and (offset, length) pairs, the custom bounds as a count and
 *   their 64 bits each), the counts (count, zero count, positive then negative buckets), then the
 *   sum (XOR'd).
 *
 * Integers are zigzag'd, then written as Prometheus' varbit integers are: `0` for 0, else a
 * prefix of ones and a zero saying how many bits follow (3, 6, 9, 12, 18, 25, or all 53). Whole
 * counts up to 2^50 are written as deltas of deltas against the same count of the sample before;
 * any other count (a float histogram's, −0) as a float XOR'd with it, as Gorilla writes floats:
 * `0` when equal; `10` and the meaningful bits when they fit the window of the XOR before; else
 * `11`, 5 bits of leading zeros, 6 of the meaningful bits' length (0 for 64), and those bits. The
 * state behind deltas and XORs starts again at zero whenever the layout or the kind of counts
 * changes.
 */
const chunkVersion = 2;
const flagLayout = 0b1;
const flagInteger = 0b10;
const flagFloatCounts = 0b100;
const resetHintShift = 3;
const flagBits = 5;
/** Integers this small keep their deltas of deltas exact in a double. */
const maxDeltaEncoded = 2 ** 50;
/** The varbit classes: bits that follow the prefix of each, the last for any safe integer. */
const varbitClasses = [3, 6, 9, 12, 18, 25, 53] as const;
/** 2^bits of each class: the zigzag'd integers below it fit the class. */
const varbitLimits = varbitClasses.map((bits) => 2 ** bits);

/** Thrown when bytes are not a histogram chunk this code wrote. */
export class HistogramChunkError extends Error {}

const floatView = new DataView(new ArrayBuffer(8));

/** A double's bits as two unsigned 32-bit halves. */
function bitsOf(value: number): [high: number, low: number] {
  floatView.setFloat64(0, value);
  return [floatView.getUint32(0), floatView.getUint32(4)];
}

function fromBits(high: number, low: number): number {
  floatView.setUint32(0, high);
  floatView.setUint32(4, low);
  return floatView.getFloat64(0);
}

/** Trailing zero bits of a 32-bit value (32 for 0). */
function trailingZeros(value: number): number {
  return value === 0 ? 32 : 31 - Math.clz32(value & -value);
}

/** The XOR window of the float written before: leading zero bits and meaningful bits. */
type XorWindow = { leading: number; length: number };

class ChunkWriter {
  private bytes = new Uint8Array(256);
  /** Bits written so far. */
  private bit = 0;

  /**
   * Appends the `count` (≤ 32) low bits of `value`, a 32-bit integer (shifts, not divisions:
   * this runs for every field of every histogram the gateway publishes).
   */
  bits(value: number, count: number): void {
    if (count === 0) return;
    let bit = this.bit;
    if (((bit + count) >> 3) + 1 > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2 + 8);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    const bytes = this.bytes;
    for (let left = count; left > 0;) {
      const room = 8 - (bit & 7);
      const take = room < left ? room : left;
      const part = (value >>> (left - take)) & ((1 << take) - 1);
      bytes[bit >> 3]! |= part << (room - take);
      bit += take;
      left -= take;
    }
    this.bit = bit;
  }

  /** Appends `count` (≤ 53) low bits of a non-negative safe integer. */
  wide(value: number, count: number): void {
    if (count > 32) {
      this.bits(Math.floor(value / 2 ** 32), count - 32);
      this.bits(value % 2 ** 32, 32);
    } else this.bits(value, count);
  }

  varbit(value: number): void {
    const zigzag = value >= 0 ? value * 2 : -value * 2 - 1;
    if (zigzag === 0) {
      this.bits(0, 1);
      return;
    }
    const last = varbitClasses.length - 1;
    let i = 0;
    while (i < last && zigzag >= varbitLimits[i]!) i++;
    // i + 1 ones, then a zero (the last class has none: its prefix is all ones).
    if (i === last) this.bits((1 << (i + 1)) - 1, i + 1);
    else this.bits((1 << (i + 2)) - 2, i + 2);
    this.wide(zigzag, varbitClasses[i]!);
  }

  float64(value: number): void {
    const [high, low] = bitsOf(value);
    this.bits(high, 32);
    this.bits(low, 32);
  }

  /** `value` XOR'd with `previous`, Gorilla's way; returns the window it used. */
  xor(value: number, previous: number, window: XorWindow): XorWindow {
    const [high, low] = bitsOf(value);
    const [previousHigh, previousLow] = bitsOf(previous);
    const xorHigh = (high ^ previousHigh) >>> 0;
    const xorLow = (low ^ previousLow) >>> 0;
    if (xorHigh === 0 && xorLow === 0) {
      this.bits(0, 1);
      return window;
    }
    const leading = Math.min(31, xorHigh === 0 ? 32 + Math.clz32(xorLow) : Math.clz32(xorHigh));
    const trailing = xorLow === 0 ? 32 + trailingZeros(xorHigh) : trailingZeros(xorLow);
    let used = { leading, length: 64 - leading - trailing };
    if (window.length > 0 && leading >= window.leading) {
      const windowTrailing = 64 - window.leading - window.length;
      if (trailing >= windowTrailing) {
        this.bits(0b10, 2);
        used = window;
      }
    }
    if (used !== window) {
      this.bits(0b11, 2);
      this.bits(used.leading, 5);
      this.bits(used.length & 63, 6);
    }
    this.meaningful(xorHigh, xorLow, used);
    return used;
  }

  /** The `length` bits of a 64-bit value after its `leading` bits. */
  private meaningful(high: number, low: number, { leading, length }: XorWindow): void {
    const shift = 64 - leading - length;
    // The value shifted right by `shift`, as two halves, then its low `length` bits.
    let shiftedHigh: number;
    let shiftedLow: number;
    if (shift >= 32) {
      shiftedHigh = 0;
      shiftedLow = high >>> (shift - 32);
    } else if (shift === 0) {
      shiftedHigh = high;
      shiftedLow = low;
    } else {
      shiftedHigh = high >>> shift;
      shiftedLow = ((low >>> shift) | (high << (32 - shift))) >>> 0;
    }
    if (length > 32) {
      this.bits(shiftedHigh & (2 ** (length - 32) - 1), length - 32);
      this.bits(shiftedLow, 32);
    } else this.bits(length === 32 ? shiftedLow : shiftedLow & (2 ** length - 1), length);
  }

  result(prefix: readonly number[]): Uint8Array {
    const body = this.bytes.subarray(0, (this.bit + 7) >> 3);
    const out = new Uint8Array(prefix.length + body.length);
    out.set(prefix);
    out.set(body, prefix.length);
    return out;
  }
}

class ChunkReader {
  private bit: number;

  constructor(
    private readonly bytes: Uint8Array,
    start: number,
  ) {
    this.bit = start * 8;
  }

  bits(count: number): number {
    if (this.bit + count > this.bytes.length * 8) {
      throw new HistogramChunkError('histogram chunk cut short');
    }
    let value = 0;
    let bit = this.bit;
    const bytes = this.bytes;
    for (let left = count; left > 0;) {
      const room = 8 - (bit & 7);
      const take = room < left ? room : left;
      const part = (bytes[bit >> 3]! >> (room - take)) & ((1 << take) - 1);
      // A multiplication, not a shift: a varbit of the last class reads 53 bits.
      value = value * (1 << take) + part;
      bit += take;
      left -= take;
    }
    this.bit = bit;
    return value;
  }

  varbit(): number {
    let ones = 0;
    while (ones < varbitClasses.length && this.bits(1) === 1) ones++;
    if (ones === 0) return 0;
    const zigzag = this.bits(varbitClasses[ones - 1]!);
    return zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2;
  }

  float64(): number {
    const high = this.bits(32);
    return fromBits(high, this.bits(32));
  }

  xor(previous: number, window: XorWindow): { value: number; window: XorWindow } {
    if (this.bits(1) === 0) return { value: previous, window };
    let used = window;
    if (this.bits(1) === 1) {
      const leading = this.bits(5);
      const length = this.bits(6) || 64;
      used = { leading, length };
    } else if (window.length === 0) {
      throw new HistogramChunkError('histogram chunk reuses no window');
    }
    if (used.leading + used.length > 64) {
      throw new HistogramChunkError('histogram chunk float out of bounds');
    }
    const shift = 64 - used.leading - used.length;
    // The meaningful bits, as a high and a low part, shifted left by `shift` into place.
    const highBits = Math.max(0, used.length - 32);
    const top = highBits > 0 ? this.bits(highBits) : 0;
    const bottom = this.bits(used.length - highBits);
    let xorHigh: number;
    let xorLow: number;
    if (shift >= 32) {
      xorHigh = (bottom << (shift - 32)) >>> 0;
      xorLow = 0;
    } else if (shift === 0) {
      xorHigh = top;
      xorLow = bottom;
    } else {
      xorHigh = ((top << shift) | (bottom >>> (32 - shift))) >>> 0;
      xorLow = (bottom << shift) >>> 0;
    }
    const [previousHigh, previousLow] = bitsOf(previous);
    return {
      value: fromBits((previousHigh ^ xorHigh) >>> 0, (previousLow ^ xorLow) >>> 0),
      window: used,
    };
  }

  /** Whether only the last byte's padding is left. */
  get done(): boolean {
    return this.bytes.length - (this.bit >> 3) <= 1 && this.bytes.length * 8 - this.bit < 8;
  }
}

function sameSpans(a: readonly BucketSpan[], b: readonly BucketSpan[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i]!.offset !== b[i]!.offset || a[i]!.length !== b[i]!.length) return false;
  }
  return true;
}

function sameFloats(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((value, i) => Object.is(value, b[i]));
}

function sameLayout(a: NativeHistogram, b: NativeHistogram): boolean {
  return (
    a.schema === b.schema &&
    Object.is(a.zeroThreshold, b.zeroThreshold) &&
    sameSpans(a.positiveSpans, b.positiveSpans) &&
    sameSpans(a.negativeSpans, b.negativeSpans) &&
    sameFloats(a.customValues, b.customValues)
  );
}

function countsOf(histogram: NativeHistogram): number[] {
  return [
    histogram.count,
    histogram.zeroCount,
    ...histogram.positiveBuckets,
    ...histogram.negativeBuckets,
  ];
}

function isDeltaEncodable(value: number): boolean {
  return Number.isInteger(value) && Math.abs(value) <= maxDeltaEncoded && !Object.is(value, -0);
}

/**
 * The delta/XOR state of a chunk's counts: per count, its last value and last delta (whole
 * counts) or the XOR window it last used (floats).
 */
type CountState = { values: number[]; deltas: number[]; windows: XorWindow[] };

function freshState(size: number): CountState {
  return {
    values: new Array<number>(size).fill(0),
    deltas: new Array<number>(size).fill(0),
    windows: new Array<XorWindow>(size).fill(noWindow),
  };
}

/** A time (any a Date holds, ±8.64e15 ms): a sign bit and 53 bits of magnitude. */
function writeTime(out: ChunkWriter, timeMs: number): void {
  out.bits(timeMs < 0 ? 1 : 0, 1);
  out.wide(Math.abs(timeMs), 53);
}

function readTime(input: ChunkReader): number {
  const negative = input.bits(1) === 1;
  const magnitude = input.bits(21) * 2 ** 32 + input.bits(32);
  return negative ? -magnitude : magnitude;
}

/** A delta of times: within a chunk, a few days at most; anything wider is no chunk's. */
function checkedDelta(value: number): number {
  if (Math.abs(value) > 2 ** 51) throw new RangeError('histogram times too far apart for a chunk');
  return value;
}

/** The count as a varint, before the bit stream. */
function varintBytes(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return bytes;
}

const noWindow: XorWindow = { leading: 0, length: 0 };

/** The histograms of one series, in time order, as a chunk. */
export function encodeHistogramChunk(samples: readonly TimedHistogram[]): Uint8Array {
  const out = new ChunkWriter();
  let previous: NativeHistogram | undefined;
  let previousFlags = -1;
  let state = freshState(0);
  let lastTime = 0;
  let lastTimeDelta = 0;
  let lastSum = 0;
  let sumWindow = noWindow;
  samples.forEach(({ timeMs, histogram }, index) => {
    if (index === 0) writeTime(out, timeMs);
    else {
      const delta = checkedDelta(timeMs - lastTime);
      out.varbit(index === 1 ? delta : checkedDelta(delta - lastTimeDelta));
      lastTimeDelta = delta;
    }
    lastTime = timeMs;
    const counts = countsOf(histogram);
    const floatCounts = !counts.every(isDeltaEncodable);
    const layout = previous === undefined || !sameLayout(previous, histogram);
    const flags =
      (layout ? flagLayout : 0) |
      (histogram.integer ? flagInteger : 0) |
      (floatCounts ? flagFloatCounts : 0) |
      (counterResetHints.indexOf(histogram.counterResetHint) << resetHintShift);
    if (flags === previousFlags) out.bits(0, 1);
    else {
      out.bits(1, 1);
      out.bits(flags, flagBits);
    }
    if (layout) {
      out.varbit(histogram.schema);
      out.float64(histogram.zeroThreshold);
      for (const spans of [histogram.positiveSpans, histogram.negativeSpans]) {
        out.varbit(spans.length);
        for (const span of spans) {
          out.varbit(span.offset);
          out.varbit(span.length);
        }
      }
      out.varbit(histogram.customValues.length);
      for (const bound of histogram.customValues) out.float64(bound);
    }
    if (layout || (flags & flagFloatCounts) !== (previousFlags & flagFloatCounts)) {
      state = freshState(counts.length);
    }
    counts.forEach((value, i) => {
      if (floatCounts) state.windows[i] = out.xor(value, state.values[i]!, state.windows[i]!);
      else {
        const delta = value - state.values[i]!;
        out.varbit(delta - state.deltas[i]!);
        state.deltas[i] = delta;
      }
      state.values[i] = value;
    });
    sumWindow = out.xor(histogram.sum, lastSum, sumWindow);
    lastSum = histogram.sum;
    previous = histogram;
    previousFlags = flags;
  });
  return out.result([chunkVersion, ...varintBytes(samples.length)]);
}

function readSpans(input: ChunkReader): BucketSpan[] {
  const spans: BucketSpan[] = [];
  for (let n = input.varbit(); n > 0; n--) {
    spans.push({ offset: input.varbit(), length: input.varbit() });
  }
  return spans;
}

function bucketCount(spans: readonly BucketSpan[]): number {
  return spans.reduce((sum, span) => sum + span.length, 0);
}

/** The sample count and where the bit stream starts. */
function readHeader(bytes: Uint8Array): { size: number; start: number } {
  if (bytes[0] !== chunkVersion) throw new HistogramChunkError('unknown histogram chunk');
  let size = 0;
  let scale = 1;
  for (let at = 1; at < Math.min(bytes.length, 9); at++) {
    const byte = bytes[at]!;
    size += (byte & 0x7f) * scale;
    if (byte < 0x80) return { size, start: at + 1 };
    scale *= 0x80;
  }
  throw new HistogramChunkError('histogram chunk cut short');
}

/** A chunk's histograms, as `encodeHistogramChunk` was given them; throws on other bytes. */
export function decodeHistogramChunk(bytes: Uint8Array): TimedHistogram[] {
  const { size, start } = readHeader(bytes);
  const input = new ChunkReader(bytes, start);
  const samples: TimedHistogram[] = [];
  let layout: Omit<NativeHistogram, 'integer' | 'counterResetHint' | 'count' | 'sum'> | undefined;
  let flags = -1;
  let state = freshState(0);
  let lastTime = 0;
  let lastTimeDelta = 0;
  let lastSum = 0;
  let sumWindow = noWindow;
  for (let index = 0; index < size; index++) {
    let timeMs: number;
    if (index === 0) timeMs = readTime(input);
    else {
      const read = input.varbit();
      lastTimeDelta = index === 1 ? read : lastTimeDelta + read;
      timeMs = lastTime + lastTimeDelta;
    }
    lastTime = timeMs;
    const previousFlags = flags;
    if (input.bits(1) === 1) flags = input.bits(flagBits);
    else if (flags === -1) throw new HistogramChunkError('histogram chunk without flags');
    const floatCounts = (flags & flagFloatCounts) !== 0;
    const counterResetHint = counterResetHints[(flags >> resetHintShift) & 0b11]!;
    const layoutFollows = (flags & flagLayout) !== 0;
    if (layoutFollows) {
      const schema = input.varbit();
      const zeroThreshold = input.float64();
      const positiveSpans = readSpans(input);
      const negativeSpans = readSpans(input);
      const customValues: number[] = [];
      for (let n = input.varbit(); n > 0; n--) customValues.push(input.float64());
      layout = {
        schema,
        zeroThreshold,
        zeroCount: 0,
        positiveSpans,
        positiveBuckets: [],
        negativeSpans,
        negativeBuckets: [],
        customValues,
      };
    }
    if (layout === undefined) throw new HistogramChunkError('histogram chunk without a layout');
    const positive = bucketCount(layout.positiveSpans);
    const counts = 2 + positive + bucketCount(layout.negativeSpans);
    if (layoutFollows || (flags & flagFloatCounts) !== (previousFlags & flagFloatCounts)) {
      state = freshState(counts);
    }
    for (let i = 0; i < counts; i++) {
      if (floatCounts) {
        const read = input.xor(state.values[i]!, state.windows[i]!);
        state.values[i] = read.value;
        state.windows[i] = read.window;
      } else {
        state.deltas[i] = state.deltas[i]! + input.varbit();
        state.values[i] = state.values[i]! + state.deltas[i]!;
      }
    }
    const sum = input.xor(lastSum, sumWindow);
    lastSum = sum.value;
    sumWindow = sum.window;
    samples.push({
      timeMs,
      histogram: {
        integer: (flags & flagInteger) !== 0,
        schema: layout.schema,
        zeroThreshold: layout.zeroThreshold,
        zeroCount: state.values[1]!,
        count: state.values[0]!,
        sum: lastSum,
        positiveSpans: layout.positiveSpans.map((span) => ({ ...span })),
        positiveBuckets: state.values.slice(2, 2 + positive),
        negativeSpans: layout.negativeSpans.map((span) => ({ ...span })),
        negativeBuckets: state.values.slice(2 + positive),
        counterResetHint,
        customValues: [...layout.customValues],
      },
    });
  }
  if (!input.done) throw new HistogramChunkError('histogram chunk has bytes past its samples');
  return samples;
}

/** One histogram in the chunk layout, for the bus (its time travels beside it). */
export function encodeHistogram(histogram: NativeHistogram): Uint8Array {
  return encodeHistogramChunk([{ timeMs: 0, histogram }]);
}

/** What `encodeHistogram` wrote; throws `HistogramChunkError` on other bytes. */
export function decodeHistogram(bytes: Uint8Array): NativeHistogram {
  const [sample, ...rest] = decodeHistogramChunk(bytes);
  if (sample === undefined || rest.length > 0) {
    throw new HistogramChunkError('not exactly one histogram');
  }
  return sample.histogram;
}
