import { describe, expect, it } from 'vitest';
import { formatKeptTiers, keptTierFigures } from './storage-kept-tiers.js';

const fiveMinutes = {
  name: '5m' as const,
  table: 'sample_tier_5m' as const,
  widthMs: 300_000,
  chunkMs: 7 * 86_400_000,
};

describe('keptTierFigures', () => {
  it('weighs a tier per row and per raw sample it summarizes, against a quarter of a raw sample', () => {
    const figures = keptTierFigures({
      tier: fiveMinutes,
      rows: 1_000,
      samples: 20_000,
      duplicateRows: 0,
      bytes: 16_000,
      uncompressedBytes: 145_000,
      rawBytesPerSample: 3.6,
    });
    expect(figures.bytesPerRow).toBe(16);
    expect(figures.uncompressedBytesPerRow).toBe(145);
    expect(figures.bytesPerSample).toBe(0.8);
    expect(figures.ratio).toBeCloseTo(0.8 / 3.6, 12);
    expect(figures.met).toBe(true);
    expect(figures.chunkDays).toBe(7);
    expect(figures.widthMinutes).toBe(5);
  });

  it('says when a tier costs more than a quarter of a raw sample', () => {
    const figures = keptTierFigures({
      tier: fiveMinutes,
      rows: 1_000,
      samples: 10_000,
      duplicateRows: 0,
      bytes: 16_000,
      uncompressedBytes: 145_000,
      rawBytesPerSample: 3.6,
    });
    expect(figures.met).toBe(false);
    expect(formatKeptTiers([figures]).join('\n')).toMatch(/sample_tier_5m .* NOT MET/);
  });

  it('refuses a chunk that holds nothing', () => {
    expect(() =>
      keptTierFigures({
        tier: fiveMinutes,
        rows: 0,
        samples: 0,
        duplicateRows: 0,
        bytes: 8_192,
        uncompressedBytes: 8_192,
        rawBytesPerSample: 3.6,
      }),
    ).toThrow(/nothing measured of sample_tier_5m/);
  });
});
