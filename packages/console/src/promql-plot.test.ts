import { describe, expect, it } from 'vitest';
import { matrixToPlot, promqlStepSeconds, seriesLabel } from './promql-plot.js';

describe('seriesLabel', () => {
  it('writes the labels as PromQL does, the name outside the braces', () => {
    expect(seriesLabel({ __name__: 'up', job: 'node', host: 'a' })).toBe(
      'up{host="a", job="node"}',
    );
    expect(seriesLabel({ region: 'eu' })).toBe('{region="eu"}');
    expect(seriesLabel({ __name__: 'up' })).toBe('up');
    expect(seriesLabel({})).toBe('{}');
  });
});

describe('promqlStepSeconds', () => {
  it('aims at about 240 points, never under 15 s', () => {
    expect(promqlStepSeconds(3_600_000)).toBe(15);
    expect(promqlStepSeconds(6 * 3_600_000)).toBe(90);
    expect(promqlStepSeconds(7 * 24 * 3_600_000)).toBe(2520);
  });
});

describe('matrixToPlot', () => {
  it('puts every series on the step grid, gaps and non-finite values as null', () => {
    const plot = matrixToPlot(
      [
        {
          metric: { host: 'a' },
          values: [
            [100, '1'],
            [160, '2.5'],
          ],
        },
        {
          metric: { host: 'b' },
          values: [
            [130, 'NaN'],
            [160, '+Inf'],
          ],
        },
        { metric: { host: 'c' }, values: [[100, '3']] },
      ],
      { startSeconds: 100, endSeconds: 160, stepSeconds: 30 },
      2,
    );
    expect(plot).toEqual({
      xs: [100, 130, 160],
      series: [
        { label: '{host="a"}', values: [1, null, 2.5] },
        { label: '{host="b"}', values: [null, null, null] },
      ],
      omitted: 1,
    });
  });
});
