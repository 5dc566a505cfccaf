import { describe, expect, it } from 'vitest';
import { histogramOf, histogramSince, summarizeHistogram } from './metrics-histogram.js';

const page = (counts: [string, number][], sum: number, count: number) =>
  [
    '# HELP lag_seconds How late.',
    '# TYPE lag_seconds histogram',
    ...counts.map(([le, n]) => `lag_seconds_bucket{le="${le}"} ${n}`),
    `lag_seconds_sum ${sum}`,
    `lag_seconds_count ${count}`,
    'other_metric 7',
  ].join('\n');

describe('metrics histograms', () => {
  it('reads a histogram, subtracts an earlier reading and finds the buckets of its quantiles', () => {
    const before = histogramOf(
      page(
        [
          ['0.1', 5],
          ['1', 5],
          ['+Inf', 5],
        ],
        0.2,
        5,
      ),
      'lag_seconds',
    );
    const after = histogramOf(
      page(
        [
          ['0.1', 103],
          ['1', 105],
          ['+Inf', 106],
        ],
        12.2,
        106,
      ),
      'lag_seconds',
    );
    const since = histogramSince(after, before);
    expect(since).toEqual({
      buckets: [
        [0.1, 98],
        [1, 100],
        [Number.POSITIVE_INFINITY, 101],
      ],
      sum: 12,
      count: 101,
    });
    expect(summarizeHistogram(since)).toEqual({
      count: 101,
      mean: 12 / 101,
      p50AtMost: 0.1,
      p99AtMost: 1,
      maxAtMost: Number.POSITIVE_INFINITY,
    });
  });

  it('sums label sets and summarizes an empty histogram as zeros', () => {
    const text = [
      'h_bucket{role="a",le="1"} 1',
      'h_bucket{role="b",le="1"} 2',
      'h_bucket{role="a",le="+Inf"} 1',
      'h_bucket{role="b",le="+Inf"} 2',
      'h_sum{role="a"} 0.5',
      'h_sum{role="b"} 1',
      'h_count{role="a"} 1',
      'h_count{role="b"} 2',
    ].join('\n');
    expect(histogramOf(text, 'h')).toEqual({
      buckets: [
        [1, 3],
        [Number.POSITIVE_INFINITY, 3],
      ],
      sum: 1.5,
      count: 3,
    });
    expect(summarizeHistogram(histogramOf('', 'h'))).toEqual({
      count: 0,
      mean: 0,
      p50AtMost: 0,
      p99AtMost: 0,
      maxAtMost: 0,
    });
  });
});
