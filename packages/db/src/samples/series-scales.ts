import { unscaled } from '../storage/scaled-value.js';

/**
 * Each series' scale so far (the largest `encodeScale` chose for it: the finest), so that its
 * next values are scaled alike: a gauge reported with one or two decimals (12.3, 12.25) keeps 2,
 * a byte count of whole pages that is now and then a multiple of 8 KiB keeps −12, and its
 * mantissas stay comparable from sample to sample. Only a compression hint: a writer that
 * forgot a series (another process, a restart, the bound below) still stores exact values.
 */
export type SeriesScales = {
  /** The series' scale so far, or `unscaled` when none is known. */
  scaleOf(seriesId: number): number;
  /** Records that a value of the series was stored at `scale`. */
  saw(seriesId: number, scale: number): void;
};

/** Series scales, forgotten all at once past `maxEntries` series (default 1,000,000). */
export function createSeriesScales(maxEntries = 1_000_000): SeriesScales {
  let scales = new Map<number, number>();
  return {
    scaleOf: (seriesId) => scales.get(seriesId) ?? unscaled,
    saw(seriesId, scale) {
      const known = scales.get(seriesId);
      if (known !== undefined && known >= scale) return;
      if (known === undefined && scales.size >= maxEntries) scales = new Map();
      scales.set(seriesId, scale);
    },
  };
}
