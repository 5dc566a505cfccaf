import { describe, expect, it } from 'vitest';
import { unscaled } from '../storage/scaled-value.js';
import { createSeriesScales } from './series-scales.js';

describe('createSeriesScales', () => {
  it('remembers the largest scale a series was stored at', () => {
    const scales = createSeriesScales();
    expect(scales.scaleOf(1)).toBe(unscaled);
    scales.saw(1, 1);
    scales.saw(1, 2);
    scales.saw(1, 0);
    expect(scales.scaleOf(1)).toBe(2);
    expect(scales.scaleOf(2)).toBe(unscaled);
  });

  it('forgets every series once it holds too many', () => {
    const scales = createSeriesScales(2);
    scales.saw(1, 1);
    scales.saw(2, 1);
    scales.saw(3, 1);
    expect([scales.scaleOf(1), scales.scaleOf(2), scales.scaleOf(3)]).toEqual([
      unscaled,
      unscaled,
      1,
    ]);
  });
});
