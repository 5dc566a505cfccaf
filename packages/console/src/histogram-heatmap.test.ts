import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  heatmapCellAt,
  heatmapColour,
  heatmapY,
  histogramHeatmap,
  logTicks,
} from './histogram-heatmap.js';
import type { Histogram, HistogramBucket } from './parse-histogram.js';

const bucket = (lower: number, upper: number, count: number): HistogramBucket => ({
  lower,
  upper,
  lowerInclusive: false,
  upperInclusive: true,
  count,
});
const histogram = (...buckets: HistogramBucket[]): Histogram => ({
  count: buckets.reduce((sum, b) => sum + b.count, 0),
  sum: 0,
  buckets,
});

describe('histogramHeatmap', () => {
  it('draws a cell per populated bucket per time on a log scale, the largest value darkest', () => {
    const heatmap = histogramHeatmap(
      [
        [100, histogram(bucket(0.5, 1, 2), bucket(1, 2, 6))],
        [115, histogram(bucket(1, 2, 1), bucket(2, 4, 0), bucket(4, 8, 3))],
      ],
      15,
    );
    expect(heatmap).toMatchObject({
      stepSeconds: 15,
      yScale: 'log',
      // One row (of the lowest bucket's ratio) under it: where a zero bucket would go.
      yMin: 0.25,
      yMax: 8,
      maxValue: 6,
    });
    expect(heatmap.cells.map(({ t, lower, upper, value }) => [t, lower, upper, value])).toEqual([
      [100, 0.5, 1, 2],
      [100, 1, 2, 6],
      [115, 1, 2, 1],
      [115, 4, 8, 3],
    ]);
  });

  it('puts the zero bucket on a log scale in the row under the lowest bucket above 0', () => {
    const zero = { ...bucket(-0.001, 0.001, 4), lowerInclusive: true };
    const heatmap = histogramHeatmap([[100, histogram(zero, bucket(0.5, 1, 2))]], 15);
    expect(heatmap).toMatchObject({ yScale: 'log', yMin: 0.25, yMax: 1 });
    expect(heatmap.cells[0]).toMatchObject({ lower: 0.25, upper: 0.5, value: 4, bucket: zero });
    expect(heatmapY(heatmap, 0.0004)).toBe(0.25);
    expect(heatmapY(heatmap, 0)).toBe(0.25);
    expect(heatmapY(heatmap, 0.7)).toBe(0.7);
  });

  it('turns to a linear scale for buckets below 0, and draws the zero bucket as it is', () => {
    const heatmap = histogramHeatmap(
      [[100, histogram(bucket(-2, -1, 1), bucket(-0.5, 0.5, 2), bucket(1, 2, 3))]],
      15,
    );
    expect(heatmap).toMatchObject({ yScale: 'linear', yMin: -2, yMax: 2 });
    expect(heatmap.cells.map(({ lower, upper }) => [lower, upper])).toEqual([
      [-2, -1],
      [-0.5, 0.5],
      [1, 2],
    ]);
    expect(heatmapY(heatmap, -1.5)).toBe(-1.5);
  });

  it('draws a bucket up to +Inf one doubling past the finite bounds', () => {
    const heatmap = histogramHeatmap(
      [[100, histogram(bucket(1, 2, 1), bucket(2, Infinity, 1))]],
      15,
    );
    expect(heatmap).toMatchObject({ yScale: 'log', yMax: 4 });
    expect(heatmap.cells[1]).toMatchObject({ lower: 2, upper: 4 });
  });

  it('has no cells, and a range still, without buckets', () => {
    const heatmap = histogramHeatmap([[100, histogram()]], 15);
    expect(heatmap).toMatchObject({ cells: [], yScale: 'linear', yMin: 0, yMax: 1, maxValue: 0 });
  });
});

describe('heatmapCellAt', () => {
  it('finds the cell of the step and the bucket under a point, none elsewhere', () => {
    const heatmap = histogramHeatmap(
      [
        [100, histogram(bucket(0.5, 1, 2), bucket(1, 2, 6))],
        [115, histogram(bucket(1, 2, 1))],
      ],
      15,
    );
    expect(heatmapCellAt(heatmap, 96, 1.5)).toMatchObject({ t: 100, value: 6 });
    expect(heatmapCellAt(heatmap, 108, 1.2)).toMatchObject({ t: 115, value: 1 });
    expect(heatmapCellAt(heatmap, 108, 1)).toBeUndefined();
    expect(heatmapCellAt(heatmap, 130, 1.5)).toBeUndefined();
  });
});

describe('heatmapColour', () => {
  const luminance = (colour: string) => {
    const [r, g, b] = (colour.match(/\d+/g) ?? []).map(Number);
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  };

  it('runs from the palest colour at 0 to the darkest at the largest value', () => {
    expect(heatmapColour(0, 10)).toBe('rgb(254, 230, 206)');
    expect(heatmapColour(10, 10)).toBe('rgb(127, 39, 4)');
    expect(heatmapColour(20, 10)).toBe('rgb(127, 39, 4)');
    expect(heatmapColour(1, 0)).toBe('rgb(254, 230, 206)');
  });

  it('darkens as the value grows', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        (a, b) => {
          const [low, high] = a <= b ? [a, b] : [b, a];
          expect(luminance(heatmapColour(high, 100))).toBeLessThanOrEqual(
            luminance(heatmapColour(low, 100)) + 1,
          );
        },
      ),
    );
  });
});

describe('logTicks', () => {
  it('ticks 1, 2 and 5 times the powers of ten, then the powers alone when too many', () => {
    expect(logTicks(0.004, 2.5, 10)).toEqual([0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2]);
    expect(logTicks(0.004, 2.5, 8)).toEqual([0.01, 0.1, 1]);
    expect(logTicks(1e-9, 1e9, 5)).toEqual([1e-8, 1e-4, 1, 1e4, 1e8]);
    expect(logTicks(0, 1, 5)).toEqual([]);
  });

  it('answers at most maxTicks ticks within the range, in order', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1e-12, max: 1e12, noNaN: true }),
        fc.double({ min: 1, max: 1e6, noNaN: true }),
        fc.integer({ min: 1, max: 12 }),
        (min, ratio, maxTicks) => {
          const ticks = logTicks(min, min * ratio, maxTicks);
          expect(ticks.length).toBeLessThanOrEqual(maxTicks);
          for (const tick of ticks) {
            expect(tick).toBeGreaterThanOrEqual(min);
            expect(tick).toBeLessThanOrEqual(min * ratio);
          }
          expect([...ticks].sort((a, b) => a - b)).toEqual(ticks);
        },
      ),
    );
  });
});
