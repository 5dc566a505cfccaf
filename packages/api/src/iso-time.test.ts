import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTime } from './iso-time.js';

describe('isoTime', () => {
  const firstMs = Date.parse('0000-01-01T00:00:00.000Z');
  const lastMs = Date.parse('9999-12-31T23:59:59.999Z');

  it('formats every integer millisecond of years 0000–9999 as toISOString does', () => {
    fc.assert(
      fc.property(fc.integer({ min: firstMs, max: lastMs }), (ms) => {
        expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 20_000 },
    );
  });

  it('gets the edges of days, months, leap years and centuries right', () => {
    const edges = [
      '0000-01-01T00:00:00.000Z',
      '0000-02-29T23:59:59.999Z',
      '1900-02-28T23:59:59.999Z',
      '1900-03-01T00:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
      '1970-01-01T00:00:00.000Z',
      '2000-02-29T12:00:00.000Z',
      '2026-11-27T13:59:00.000Z',
      '2100-03-01T00:00:00.000Z',
      '9999-12-31T23:59:59.999Z',
    ];
    for (const edge of edges) {
      for (const delta of [-1, 0, 1]) {
        const ms = Date.parse(edge) + delta;
        expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      }
    }
  });

  it('leaves other years and fractions to toISOString, errors included', () => {
    for (const ms of [firstMs - 1, lastMs + 1, 1.5, -0.5, 8.64e15]) {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
  });
});
