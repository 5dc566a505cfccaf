import { describe, expect, it } from 'vitest';
import { metricQuery, metricRanges } from './metric-range.js';

describe('metricQuery', () => {
  const now = Date.parse('2026-11-23T12:00:00.000Z');

  it.each([
    ['1h', '2026-11-23T11:00:00.000Z', '1m'],
    ['6h', '2026-11-23T06:00:00.000Z', '1m'],
    ['24h', '2026-11-22T12:00:00.000Z', '1h'],
    ['7d', '2026-11-16T12:00:00.000Z', '1h'],
  ] as const)('reads %s from %s at step %s', (range, from, step) => {
    expect(metricQuery(range, now)).toEqual({ from, to: '2026-11-23T12:00:00.000Z', step });
  });

  it('never asks for more than 1 440 points', () => {
    for (const range of metricRanges) {
      const query = metricQuery(range, now);
      const points =
        (Date.parse(query.to) - Date.parse(query.from)) /
        (query.step === '1m' ? 60_000 : 3_600_000);
      expect(points).toBeLessThanOrEqual(1440);
    }
  });
});
