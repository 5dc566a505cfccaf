import { describe, expect, it } from 'vitest';
import { labelsFrom } from '@monitor/promql';
import { prometheusExemplars } from './prometheus-exemplars.js';

describe('prometheusExemplars', () => {
  it('writes series and exemplars as Prometheus does: labels by name, values as text, seconds', () => {
    const data = prometheusExemplars([
      {
        seriesLabels: labelsFrom({ route: '/pay', __name__: 'requests_total', job: 'shop' }),
        exemplars: [
          // As jsonb hands them back: shorter keys first.
          { timeMs: 1_600_096_945_479, value: 6, labels: { span_id: '12', trace_id: 'abc' } },
          { timeMs: 1_600_096_946_000, value: 0.125, labels: { b: '2', aa: '1' } },
          { timeMs: 1_600_096_947_010, value: NaN, labels: {} },
        ],
      },
    ]);
    expect(JSON.stringify(data)).toBe(
      JSON.stringify([
        {
          seriesLabels: { __name__: 'requests_total', job: 'shop', route: '/pay' },
          exemplars: [
            { labels: { span_id: '12', trace_id: 'abc' }, value: '6', timestamp: 1600096945.479 },
            { labels: { aa: '1', b: '2' }, value: '0.125', timestamp: 1600096946 },
            { labels: {}, value: 'NaN', timestamp: 1600096947.01 },
          ],
        },
      ]),
    );
  });

  it('answers an empty list for no series', () => {
    expect(prometheusExemplars([])).toEqual([]);
  });
});
