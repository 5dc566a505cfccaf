import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeScaled,
  encodeScale,
  maxBinaryShift,
  maxValueScale,
  scaledMantissa,
  unscaled,
} from './scaled-value.js';

/** The value as stored: decoded from (mantissa, scale), or the float8 itself. */
function roundTrip(value: number, preferredScale: number): number {
  const scale = encodeScale(value, preferredScale);
  return scale === unscaled ? value : decodeScaled(scaledMantissa(value, scale), scale);
}

/** Same bits: Object.is tells −0 from +0 and NaN equals NaN. */
const sameBits = (a: number, b: number): boolean => Object.is(a, b);

/** What agents send: decimals of a few digits, counters, byte counts, rates. */
const agentValue = fc.oneof(
  fc.integer({ min: -1_000_000, max: 100_000_000 }).map((n) => n / 10),
  fc.integer({ min: 0, max: 10_000_000 }).map((n) => n / 100),
  fc.integer({ min: 0, max: 2 ** 40 }).map((n) => n * 4096),
  fc.integer({ min: 0, max: 1_000_000 }).map((n) => n / 1000),
  fc.double({ min: 0, max: 1e6, noNaN: true }),
  fc.constantFrom(0, -0, 1e100, -1e100, 0.1 + 0.2, 5e-324, Number.MAX_VALUE),
);

/** Any scale a series may have been stored at so far, or none. */
const preferredScale = fc.oneof(
  fc.constant(unscaled),
  fc.integer({ min: -maxBinaryShift, max: maxValueScale }),
);

describe('encodeScale', () => {
  it('gives back every double bit for bit, at any preferred scale', () => {
    fc.assert(
      fc.property(fc.double(), preferredScale, (value, preferred) =>
        sameBits(roundTrip(value, preferred), value),
      ),
      { numRuns: 20_000 },
    );
  });

  it('gives back realistic agent values bit for bit', () => {
    fc.assert(
      fc.property(agentValue, preferredScale, (value, preferred) =>
        sameBits(roundTrip(value, preferred), value),
      ),
      { numRuns: 20_000 },
    );
  });

  it('scales decimals of a few digits, with the smallest exact scale', () => {
    expect([12.3, 12.25, 41, 0.001, -7.5].map((v) => encodeScale(v, unscaled))).toEqual([
      1, 2, 0, 3, 1,
    ]);
    expect(scaledMantissa(12.25, 2)).toBe(1225);
  });

  it('keeps the preferred scale where it is exact', () => {
    expect(encodeScale(12.3, 2)).toBe(2);
    expect(scaledMantissa(12.3, 2)).toBe(1230);
  });

  it('stores whole numbers with trailing zero bits as a smaller mantissa times a power of two', () => {
    expect(
      [4096 * 3, 4096 * 8, 42, 7, 0, 2 ** 60, 1e18].map((v) => encodeScale(v, unscaled)),
    ).toEqual([-12, -15, -1, 0, 0, -60, -18]);
    expect(scaledMantissa(4096 * 3, -12)).toBe(3);
    expect(decodeScaled(3, -12)).toBe(4096 * 3);
  });

  it('keeps a series of whole pages at its finest shift', () => {
    expect(encodeScale(4096 * 8, -12)).toBe(-12);
    expect(scaledMantissa(4096 * 8, -12)).toBe(8);
    expect(encodeScale(4096 * 3, -15)).toBe(-12);
  });

  it('leaves −0, NaN, ±Infinity and values beyond 53 significant bits at every scale as float8', () => {
    for (const value of [-0, NaN, Infinity, -Infinity, 0.1 + 0.2, Number.MAX_VALUE, 2 ** 200]) {
      expect(encodeScale(value, unscaled)).toBe(unscaled);
    }
  });
});
