import { describe, expect, it } from 'vitest';
import { evidenceBuckets } from './investigation-store.js';

const minuteMs = 60_000;
const dayMs = 24 * 60 * minuteMs;

/** How many buckets of `widthMs`, binned from `fromMs`, the times fromMs..lastMs fall in. */
function bucketCount(fromMs: number, lastMs: number, widthMs: number): number {
  return Math.floor((lastMs - fromMs) / widthMs) + 1;
}

describe('evidenceBuckets', () => {
  it('keeps an alert window raw: buckets narrower than 10 s samples', () => {
    const fromMs = 0;
    const incidentFromMs = 60 * minuteMs;
    const toMs = 75 * minuteMs;
    const { baselineMs, incidentMs } = evidenceBuckets({ fromMs, incidentFromMs, toMs }, 1500);
    expect(baselineMs).toBeLessThanOrEqual(10_000);
    expect(incidentMs).toBeLessThanOrEqual(10_000);
  });

  it('splits the cap by length, each part getting a third to two thirds', () => {
    const window = { fromMs: 0, incidentFromMs: 70 * minuteMs, toMs: 70 * minuteMs + 7 * dayMs };
    const { baselineMs, incidentMs } = evidenceBuckets(window, 1500);
    // The short baseline still gets a third of the points; the week gets the rest.
    expect(bucketCount(0, window.incidentFromMs - 1, baselineMs)).toBe(500);
    expect(bucketCount(window.incidentFromMs, window.toMs, incidentMs)).toBe(1000);
  });

  it('never yields more buckets than the cap, whatever the lengths', () => {
    for (const [baselineSpanMs, incidentSpanMs, maxPoints] of [
      [60 * minuteMs, 7 * dayMs, 1500],
      [7 * dayMs, 60 * minuteMs, 600],
      [3 * dayMs, 3 * dayMs, 7],
      [1000 * 3, 1000 * 3, 3],
      [0, 7 * dayMs + 1, 600],
      [0, 0, 600],
    ] as const) {
      const window = {
        fromMs: 1_000,
        incidentFromMs: 1_000 + baselineSpanMs,
        toMs: 1_000 + baselineSpanMs + incidentSpanMs,
      };
      const { baselineMs, incidentMs } = evidenceBuckets(window, maxPoints);
      const baseline =
        baselineSpanMs === 0
          ? 0
          : bucketCount(window.fromMs, window.incidentFromMs - 1, baselineMs);
      const incident = bucketCount(window.incidentFromMs, window.toMs, incidentMs);
      expect(baseline + incident).toBeLessThanOrEqual(maxPoints);
    }
  });

  it('clamps an incident start outside the window to its ends', () => {
    expect(evidenceBuckets({ fromMs: 0, incidentFromMs: -5000, toMs: 3000 }, 3)).toEqual(
      evidenceBuckets({ fromMs: 0, incidentFromMs: 0, toMs: 3000 }, 3),
    );
  });
});
