import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { int64ToDecimal, int64ToNumber, unixNanosToMs } from './int64.js';

/** A 64-bit integer as protobufjs' Long holds it: two signed 32-bit halves. */
function longOf(value: bigint, unsigned: boolean) {
  return {
    low: Number(BigInt.asIntN(32, value)),
    high: Number(BigInt.asIntN(32, value >> 32n)),
    unsigned,
  };
}

describe('unixNanosToMs', () => {
  it('floors nanoseconds to milliseconds exactly, beyond 2^53', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (nanos) => {
        const long = longOf(nanos, true);
        expect(unixNanosToMs(long)).toBe(Number(nanos / 1_000_000n));
        expect(unixNanosToMs(nanos.toString())).toBe(Number(nanos / 1_000_000n));
      }),
    );
  });

  it('keeps a time that falls exactly on a millisecond', () => {
    const nanos = 1_750_000_000_123_000_000n;
    expect(unixNanosToMs(longOf(nanos, true))).toBe(1_750_000_000_123);
  });
});

describe('int64ToNumber', () => {
  it('reads signed and unsigned Longs, numbers and strings', () => {
    expect(int64ToNumber(longOf(-5n, false))).toBe(-5);
    expect(int64ToNumber(longOf(2n ** 64n - 1n, true))).toBe(2 ** 64);
    expect(int64ToNumber(longOf(1_750_000_000_000n, false))).toBe(1_750_000_000_000);
    expect(int64ToNumber('42')).toBe(42);
    expect(int64ToNumber(7)).toBe(7);
    expect(int64ToNumber(undefined)).toBe(0);
  });
});

describe('int64ToDecimal', () => {
  it('writes every signed 64-bit value exactly, in every form protobufjs hands over', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (value) => {
        const unsigned = BigInt.asUintN(64, value);
        const long = { low: Number(unsigned & 0xffffffffn) | 0, high: Number(unsigned >> 32n) | 0 };
        expect(int64ToDecimal(long)).toBe(value.toString());
        expect(int64ToDecimal(value.toString())).toBe(value.toString());
      }),
    );
    expect(int64ToDecimal(42)).toBe('42');
    expect(int64ToDecimal(undefined)).toBe('0');
  });
});
