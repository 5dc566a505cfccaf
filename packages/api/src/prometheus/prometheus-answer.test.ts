import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatSampleValue } from './prometheus-answer.js';

describe('formatSampleValue', () => {
  it('writes values as Prometheus 2.42 answers them', () => {
    // Each as `vector(v)` at /api/v1/query of a real Prometheus 2.42 answers it.
    const cases: [number, string][] = [
      [6, '6'],
      [0.25, '0.25'],
      [-1.5, '-1.5'],
      [0, '0'],
      [-0, '-0'],
      [1e-6, '0.000001'],
      [1e-7, '1e-07'],
      [-1e-9, '-1e-09'],
      [1.5e-300, '1.5e-300'],
      [123456789012345680000, '123456789012345680000'],
      [1e21, '1e+21'],
      [-2.5e100, '-2.5e+100'],
      [NaN, 'NaN'],
      [Infinity, '+Inf'],
      [-Infinity, '-Inf'],
    ];
    expect(cases.map(([value]) => formatSampleValue(value))).toEqual(cases.map(([, text]) => text));
  });

  it('writes what reads back as the same float', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        expect(Object.is(Number(formatSampleValue(value)), value)).toBe(true);
      }),
    );
  });
});
