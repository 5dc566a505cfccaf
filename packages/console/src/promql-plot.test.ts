import { describe, expect, it } from 'vitest';
import type { MatrixSeries } from './promql-plot.js';
import {
  describeMatrix,
  matrixHistogramPlots,
  matrixToPlot,
  promqlStepSeconds,
  quantileName,
  seriesLabel,
} from './promql-plot.js';

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

/** A series of latency histograms at 100 and 160 (none at 130), and a float series beside it. */
const mixed: MatrixSeries[] = [
  {
    metric: { __name__: 'checkout_latency_seconds', route: '/pay' },
    histograms: [
      [
        100,
        {
          count: '10',
          sum: '1.2',
          buckets: [
            [0, '0.0625', '0.125', '5'],
            [0, '0.125', '0.25', '5'],
          ],
        },
      ],
      [160, { count: '4', sum: '1', buckets: [[0, '0.25', '0.5', '4']] }],
    ],
  },
  { metric: { __name__: 'up', route: '/pay' }, values: [[130, '1']] },
];
const grid = { startSeconds: 100, endSeconds: 160, stepSeconds: 30 };

describe('matrixToPlot with native histograms', () => {
  it('plots the float series only, counting only them as left out', () => {
    expect(matrixToPlot(mixed, grid, 1)).toEqual({
      xs: [100, 130, 160],
      series: [{ label: 'up{route="/pay"}', values: [null, 1, null] }],
      omitted: 0,
    });
  });
});

describe('quantileName', () => {
  it('names a quantile as a percentile', () => {
    expect([0.5, 0.9, 0.99, 0.999].map(quantileName)).toEqual(['p50', 'p90', 'p99', 'p99.9']);
  });
});

describe('matrixHistogramPlots', () => {
  it('gives each histogram series its heatmap and its p50, p90 and p99 on the step grid', () => {
    const { plots, omitted } = matrixHistogramPlots(mixed, grid, 4);
    expect(omitted).toBe(0);
    expect(plots).toHaveLength(1);
    const [plot] = plots;
    expect(plot!.label).toBe('checkout_latency_seconds{route="/pay"}');
    expect(plot!.xs).toEqual([100, 130, 160]);
    expect(plot!.quantiles).toEqual([
      { q: 0.5, label: 'p50 checkout_latency_seconds{route="/pay"}', values: [0.125, null, 0.375] },
      { q: 0.9, label: 'p90 checkout_latency_seconds{route="/pay"}', values: [0.225, null, 0.475] },
      {
        q: 0.99,
        label: 'p99 checkout_latency_seconds{route="/pay"}',
        values: [expect.closeTo(0.2475, 12), null, expect.closeTo(0.4975, 12)],
      },
    ]);
    expect(plot!.heatmap.cells.map(({ t, lower, value }) => [t, lower, value])).toEqual([
      [100, 0.0625, 5],
      [100, 0.125, 5],
      [160, 0.25, 4],
    ]);
  });

  it('draws the first series only past the limit, and says how many it left out', () => {
    const three = [mixed[0]!, mixed[0]!, mixed[0]!];
    const { plots, omitted } = matrixHistogramPlots(three, grid, 2);
    expect([plots.length, omitted]).toEqual([2, 1]);
  });

  it('leaves a gap where a histogram is empty', () => {
    const empty: MatrixSeries = { metric: {}, histograms: [[100, { count: '0', sum: '0' }]] };
    const [plot] = matrixHistogramPlots([empty], grid, 1).plots;
    expect(plot!.quantiles.map((each) => each.values)).toEqual([
      [null, null, null],
      [null, null, null],
      [null, null, null],
    ]);
  });
});

describe('describeMatrix', () => {
  const limits = { maxFloats: 1, maxHistograms: 1 };
  const floats: MatrixSeries = { metric: {}, values: [[100, '1']] };
  const histograms = mixed[0]!;

  it('says how many series and the step, and what it left out', () => {
    expect(describeMatrix([floats], 15, limits)).toBe('1 series, 15 s step');
    expect(describeMatrix([floats, floats], 15, limits)).toBe(
      '2 series, 15 s step: the first 1 drawn',
    );
  });

  it('tells series of floats from series of native histograms', () => {
    expect(describeMatrix([histograms], 15, limits)).toBe(
      '1 series, 15 s step: 1 of native histograms',
    );
    expect(describeMatrix([floats, histograms, histograms], 15, limits)).toBe(
      '3 series, 15 s step: 1 of floats, 2 of native histograms (the first 1 drawn)',
    );
  });
});
