import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatFloat } from './format-float.js';

describe('formatFloat', () => {
  it('writes what reads back as the same float, never in exponent form', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        const text = formatFloat(value);
        expect(text).not.toMatch(/e/i);
        expect(Object.is(Number(text), value)).toBe(true);
      }),
    );
  });

  it('spells the special values as Go does', () => {
    expect([NaN, Infinity, -Infinity, 1e21, 1e-7, 0.5].map(formatFloat)).toEqual([
      'NaN',
      '+Inf',
      '-Inf',
      '1000000000000000000000',
      '0.0000001',
      '0.5',
    ]);
  });
});
