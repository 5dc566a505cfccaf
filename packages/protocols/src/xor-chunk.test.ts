import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import golden from './xor-chunk.golden.json' with { type: 'json' };
import {
  decodeXorChunk,
  encodeXorChunks,
  samplesPerXorChunk,
  normalNaNBits,
  staleNaNBits,
  XorChunkEncoder,
} from './xor-chunk.js';

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

function halves(bitsHex: string): [number, number] {
  return [Number.parseInt(bitsHex.slice(0, 8), 16), Number.parseInt(bitsHex.slice(8), 16)];
}

/** Strictly ascending integer times with gaps drawn to reach every delta-of-delta bucket. */
const ascendingTimes = fc
  .tuple(
    fc.integer({ min: -1e12, max: 4e12 }),
    fc.array(
      fc.oneof(
        fc.constant(15_000),
        fc.integer({ min: 1, max: 20_000 }),
        fc.integer({ min: 1, max: 2_000_000 }),
        fc.integer({ min: 1, max: 2 ** 40 }),
      ),
      { minLength: 0, maxLength: 300 },
    ),
  )
  .map(([first, gaps]) => {
    const out = [first];
    for (const gap of gaps) out.push(out[out.length - 1]! + gap);
    return out;
  });

/** 64 bits as two unsigned halves: every float, every NaN payload included. */
const valueBits = fc.tuple(fc.nat({ max: 0xffffffff }), fc.nat({ max: 0xffffffff }));

describe('XorChunkEncoder', () => {
  it("writes the same bytes as Prometheus 2.42's own xorAppender", () => {
    expect(golden.cases.length).toBeGreaterThan(5);
    for (const { samples, chunk } of golden.cases) {
      const encoder = new XorChunkEncoder();
      for (const [t, bits] of samples) encoder.appendBits(Number(t), ...halves(bits!));
      expect(hex(encoder.bytes())).toBe(chunk);
    }
  });

  it('decodes what it encodes: every time and all 64 bits of every value', () => {
    fc.assert(
      fc.property(
        ascendingTimes.chain((times) =>
          fc.tuple(
            fc.constant(times),
            fc.array(valueBits, { minLength: times.length, maxLength: times.length }),
          ),
        ),
        ([times, bits]) => {
          const encoder = new XorChunkEncoder();
          times.forEach((t, i) => encoder.appendBits(t, ...bits[i]!));
          const decoded = decodeXorChunk(encoder.bytes());
          expect(decoded.timestampsMs).toEqual(times);
          expect(decoded.valueBits).toEqual(bits);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('decodes floats as they were, and NaN as the staleness marker', () => {
    fc.assert(
      fc.property(
        ascendingTimes.chain((times) =>
          fc.tuple(
            fc.constant(times),
            fc.array(fc.double(), { minLength: times.length, maxLength: times.length }),
          ),
        ),
        ([times, values]) => {
          const encoder = new XorChunkEncoder();
          times.forEach((t, i) => encoder.append(t, values[i]!));
          const decoded = decodeXorChunk(encoder.bytes());
          expect(decoded.values).toEqual(values);
          decoded.valueBits.forEach(([hi, lo], i) => {
            if (Number.isNaN(values[i]))
              expect([hi, lo]).toEqual([staleNaNBits.hi, staleNaNBits.lo]);
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('encodeXorChunks', () => {
  it('cuts a series into chunks of 120 samples that decode back to it', () => {
    const times = Array.from({ length: 250 }, (_, i) => 1_700_000_000_000 + i * 15_000);
    const values = times.map((_, i) => (i === 130 ? Number.NaN : i * 1.5));
    const chunks = encodeXorChunks(times, values);
    expect(chunks.map((c) => decodeXorChunk(c.data).timestampsMs.length)).toEqual([
      samplesPerXorChunk,
      samplesPerXorChunk,
      10,
    ]);
    expect(chunks[1]).toMatchObject({ minTimeMs: times[120], maxTimeMs: times[239] });
    expect(chunks.flatMap((c) => decodeXorChunk(c.data).values)).toEqual(values);
  });

  it('writes flagged points as staleness markers and other NaNs as NormalNaN', () => {
    const times = [1_000, 2_000, 3_000];
    const [chunk] = encodeXorChunks(times, [Number.NaN, Number.NaN, Infinity], 120, [1, 0, 0]);
    const decoded = decodeXorChunk(chunk!.data);
    expect(decoded.valueBits).toEqual([
      [staleNaNBits.hi, staleNaNBits.lo],
      [normalNaNBits.hi, normalNaNBits.lo],
      [0x7ff00000, 0],
    ]);
  });

  it('gives no chunk for no samples', () => {
    expect(encodeXorChunks([], [])).toEqual([]);
  });
});
