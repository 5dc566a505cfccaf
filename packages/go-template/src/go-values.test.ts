import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { goSprintf } from './go-sprintf.js';
import { formatGoFloat } from './go-values.js';

describe('formatGoFloat', () => {
  it('writes %v as Go does: shortest digits, exponent from 1e+21 down to 1e-05', () => {
    const cases: [number, string][] = [
      [0, '0'],
      [1, '1'],
      [1.5, '1.5'],
      [123456, '123456'],
      [1234567, '1.234567e+06'],
      [1e6, '1e+06'],
      [0.0001, '0.0001'],
      [0.00001, '1e-05'],
      [-2.5e-300, '-2.5e-300'],
      [NaN, 'NaN'],
      [Infinity, '+Inf'],
      [-Infinity, '-Inf'],
    ];
    for (const [value, text] of cases) expect(formatGoFloat(value, 'g', -1)).toBe(text);
  });

  it('writes %.4g as Go does, ties to even on exact halves', () => {
    const cases: [number, string][] = [
      [1, '1'],
      [100, '100'],
      [1000, '1000'],
      [12345, '1.234e+04'],
      [12355, '1.236e+04'],
      [0.5, '0.5'],
      [1.23456, '1.235'],
      [999.95, '1000'], // 999.950000000000045… is above the half
      [9999.5, '1e+04'],
      [0.000012345, '1.234e-05'],
    ];
    for (const [value, text] of cases) expect(formatGoFloat(value, 'g', 4)).toBe(text);
  });

  it('writes %f and %e with a precision', () => {
    expect(formatGoFloat(1234567.5, 'f', 2)).toBe('1234567.50');
    expect(formatGoFloat(0.006, 'f', 2)).toBe('0.01');
    expect(formatGoFloat(0.004, 'f', 2)).toBe('0.00');
    expect(formatGoFloat(9.996, 'f', 2)).toBe('10.00');
    expect(formatGoFloat(1234.5678, 'e', 3)).toBe('1.235e+03');
    expect(formatGoFloat(0, 'e', 2)).toBe('0.00e+00');
  });

  it('reads back as the same float with %v', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        expect(Number(formatGoFloat(value, 'g', -1))).toBe(value);
      }),
    );
  });

  it('agrees with toPrecision on %.Ne digits away from ties', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1e-300, max: 1e300, noNaN: true }),
        fc.integer({ min: 0, max: 15 }),
        (value, prec) => {
          const ours = formatGoFloat(value, 'e', prec);
          const js = value.toExponential(prec).replace(/e([+-])(\d)$/, 'e$10$2');
          const tie = /50*$/.test(
            value
              .toExponential(99)
              .split('e')[0]!
              .slice(prec + 2),
          );
          if (!tie) expect(ours).toBe(js);
        },
      ),
    );
  });
});

describe('goSprintf', () => {
  it("formats as Go's fmt, with Go's marks for a wrong verb or count", () => {
    expect(goSprintf('%s=%d %.1f%% %q %5.2f|%-4s|', ['a', 3n, 99.5, 'x', 3.14159, 'ab'])).toBe(
      'a=3 99.5% "x"  3.14|ab  |',
    );
    expect(goSprintf('%d', [1.5])).toBe('%!d(float64=1.5)');
    expect(goSprintf('%s %s', ['a'])).toBe('a %!s(MISSING)');
    expect(goSprintf('%s', ['a', 2n])).toBe('a%!(EXTRA int=2)');
    expect(goSprintf('%v %v', [1e6, true])).toBe('1e+06 true');
  });
});
