import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatPrometheusDuration, parsePrometheusDuration } from './index.js';

describe('parsePrometheusDuration', () => {
  it('reads units largest first', () => {
    expect(parsePrometheusDuration('1h30m')).toBe(5_400_000);
    expect(parsePrometheusDuration('5m')).toBe(300_000);
    expect(parsePrometheusDuration('1y2w3d4h5m6s7ms')).toBe(
      365 * 86_400_000 + 14 * 86_400_000 + 3 * 86_400_000 + 4 * 3_600_000 + 5 * 60_000 + 6_000 + 7,
    );
    expect(parsePrometheusDuration('0')).toBe(0);
  });

  it("refuses what Prometheus refuses, with Prometheus' text", () => {
    for (const text of ['', '5m1h', '-1m', '1.5m', '300', '1h 30m', 'm']) {
      expect(() => parsePrometheusDuration(text)).toThrow(`not a valid duration string: "${text}"`);
    }
  });

  it('reads back what it formats', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 * 365 * 86_400_000 }), (ms) => {
        expect(parsePrometheusDuration(formatPrometheusDuration(ms))).toBe(ms);
      }),
    );
  });
});
