import { describe, expect, it } from 'vitest';
import { clamp01, correlation, linearFit, mean, round, standardDeviation } from './statistics.js';

describe('statistics', () => {
  it('computes mean and population standard deviation', () => {
    expect(mean([2, 4, 4, 4, 5, 5, 7, 9])).toBe(5);
    expect(standardDeviation([2, 4, 4, 4, 5, 5, 7, 9])).toBe(2);
    expect(mean([])).toBe(0);
    expect(standardDeviation([3])).toBe(0);
  });

  it('fits an exact line with r2 1 and a flat series with r2 0', () => {
    const xs = [0, 1, 2, 3, 4];
    expect(linearFit(xs, [1, 3, 5, 7, 9])).toEqual({ slope: 2, intercept: 1, r2: 1 });
    expect(linearFit(xs, [4, 4, 4, 4, 4]).r2).toBe(0);
  });

  it('correlates perfectly, inversely and not at all', () => {
    expect(correlation([1, 2, 3, 4], [10, 20, 30, 40])).toBeCloseTo(1);
    expect(correlation([1, 2, 3, 4], [40, 30, 20, 10])).toBeCloseTo(-1);
    expect(correlation([1, 2, 3, 4], [5, 5, 5, 5])).toBe(0);
  });

  it('clamps to 0..1 and rounds to 4 significant digits', () => {
    expect(clamp01(1.5)).toBe(1);
    expect(clamp01(-2)).toBe(0);
    expect(clamp01(Number.NaN)).toBe(0);
    expect(round(3.14159)).toBe(3.142);
    expect(round(12)).toBe(12);
  });
});
