import { describe, expect, it } from 'vitest';
import type { TimescaleSizes } from './storage-report.js';
import { compareStorage, countBytes, historyEndMs, relationBytes } from './storage-report.js';

const hourMs = 3_600_000;
const dayMs = 24 * hourMs;

describe('compareStorage', () => {
  it('divides each side by the samples and ours by theirs', () => {
    const c = compareStorage({ samples: 1_000, ourBytes: 3_000, victoriaMetricsBytes: 2_000 });
    expect(c.ourBytesPerSample).toBe(3);
    expect(c.victoriaMetricsBytesPerSample).toBe(2);
    expect(c.ratio).toBe(1.5);
    expect(c.met).toBe(true);
  });

  it('meets the target at exactly twice and misses it above', () => {
    expect(compareStorage({ samples: 10, ourBytes: 40, victoriaMetricsBytes: 20 }).met).toBe(true);
    expect(compareStorage({ samples: 10, ourBytes: 41, victoriaMetricsBytes: 20 }).met).toBe(false);
  });

  it('refuses a comparison without samples', () => {
    expect(() => compareStorage({ samples: 0, ourBytes: 1, victoriaMetricsBytes: 1 })).toThrow(
      RangeError,
    );
  });
});

describe('countBytes', () => {
  const sizes: TimescaleSizes = {
    relations: [
      { name: 'samples', kind: 'hypertable', tableBytes: 100, indexBytes: 10, toastBytes: 1 },
      { name: 'samples_1m', kind: 'aggregate', tableBytes: 50, indexBytes: 5, toastBytes: 0 },
      { name: 'series', kind: 'dictionary', tableBytes: 8, indexBytes: 8, toastBytes: 0 },
    ],
    compression: [],
    databaseBytes: 10_000,
  };

  it('counts table, indexes and toast of every relation accepted', () => {
    expect(relationBytes(sizes.relations[0]!)).toBe(111);
    expect(countBytes(sizes, () => true)).toBe(111 + 55 + 16);
    expect(countBytes(sizes, (r) => r.kind !== 'aggregate')).toBe(111 + 16);
  });
});

describe('historyEndMs', () => {
  it('ends the history one hour past the last chunk boundary at least an hour ago', () => {
    const now = Date.UTC(2026, 10, 24, 7, 40);
    expect(historyEndMs(now, dayMs, hourMs)).toBe(Date.UTC(2026, 10, 24, 1));
  });

  it('goes back a day when the boundary plus an hour is still ahead', () => {
    const now = Date.UTC(2026, 10, 24, 0, 30);
    expect(historyEndMs(now, dayMs, hourMs)).toBe(Date.UTC(2026, 10, 23, 1));
  });

  it('is never after now', () => {
    for (let minute = 0; minute < 48 * 60; minute += 7) {
      const now = Date.UTC(2026, 10, 24) + minute * 60_000;
      const end = historyEndMs(now, dayMs, hourMs);
      expect(end).toBeLessThanOrEqual(now);
      expect(now - end).toBeLessThan(dayMs);
      expect((end - hourMs) % dayMs).toBe(0);
    }
  });
});
