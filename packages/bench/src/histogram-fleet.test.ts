import { describe, expect, it } from 'vitest';
import { histogramFleet } from './histogram-fleet.js';

describe('histogramFleet', () => {
  const fleet = histogramFleet({
    series: 20,
    count: 200,
    startMs: 1_700_000_000_000,
    intervalMs: 15_000,
  });

  it('makes sound histograms: spans cover the buckets, and the buckets hold the count', () => {
    for (const { samples } of fleet) {
      for (const { histogram } of samples) {
        const covered = histogram.positiveSpans.reduce((sum, span) => sum + span.length, 0);
        expect(covered).toBe(histogram.positiveBuckets.length);
        expect(histogram.positiveSpans.slice(1).every((span) => span.offset >= 0)).toBe(true);
        const observed = histogram.positiveBuckets.reduce((sum, count) => sum + count, 0);
        expect(observed).toBe(histogram.count);
      }
    }
  });

  it('grows each series but where it restarts, and a tenth of them restart', () => {
    let restarts = 0;
    for (const { samples } of fleet) {
      for (let i = 1; i < samples.length; i++) {
        expect(samples[i]!.timeMs).toBeGreaterThan(samples[i - 1]!.timeMs);
        if (samples[i]!.histogram.count < samples[i - 1]!.histogram.count) restarts += 1;
      }
    }
    expect(restarts).toBe(2);
  });
});
