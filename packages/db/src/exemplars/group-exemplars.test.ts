import { describe, expect, it } from 'vitest';
import { labelsFrom } from '@monitor/promql';
import type { ExemplarRow } from './group-exemplars.js';
import { groupExemplarsBySeries } from './group-exemplars.js';

const series = (ids: string[], labels: Record<string, string>) => ({
  ids,
  labels: labelsFrom(labels),
});

const row = (seriesId: string, timeMs: number, trace: string): ExemplarRow => ({
  seriesId,
  timeMs,
  value: timeMs / 10,
  labels: { trace_id: trace },
});

/** The answer as plain data: each series' labels as a record, its exemplars' times and traces. */
const plain = (grouped: ReturnType<typeof groupExemplarsBySeries>) =>
  grouped.map((s) => ({
    labels: Object.fromEntries(s.seriesLabels.map((l) => [l.name, l.value])),
    exemplars: s.exemplars.map((e) => [e.timeMs, e.labels.trace_id]),
  }));

describe('groupExemplarsBySeries', () => {
  it('orders series by their labels and exemplars by time, leaving out series without any', () => {
    const chosen = [
      series(['1'], { __name__: 'b' }),
      series(['2'], { __name__: 'a', job: 'y' }),
      series(['3'], { __name__: 'a' }),
      series(['4'], { __name__: 'a', job: 'x' }),
    ];
    const rows = [row('2', 30, 'c'), row('1', 10, 'a'), row('2', 20, 'b'), row('3', 5, 'd')];
    expect(plain(groupExemplarsBySeries(chosen, rows))).toEqual([
      { labels: { __name__: 'a' }, exemplars: [[5, 'd']] },
      {
        labels: { __name__: 'a', job: 'y' },
        exemplars: [
          [20, 'b'],
          [30, 'c'],
        ],
      },
      { labels: { __name__: 'b' }, exemplars: [[10, 'a']] },
    ]);
  });

  it("merges a series' stored ids, keeping the oldest id's exemplar of a time", () => {
    const chosen = [series(['7', '9'], { __name__: 'up' })];
    const rows = [row('9', 10, 'newer'), row('9', 20, 'only'), row('7', 10, 'older')];
    expect(plain(groupExemplarsBySeries(chosen, rows))).toEqual([
      {
        labels: { __name__: 'up' },
        exemplars: [
          [10, 'older'],
          [20, 'only'],
        ],
      },
    ]);
  });

  it('ignores rows of series not chosen, and answers none without rows', () => {
    const chosen = [series(['1'], { __name__: 'a' })];
    expect(groupExemplarsBySeries(chosen, [row('2', 10, 'x')])).toEqual([]);
    expect(groupExemplarsBySeries([], [])).toEqual([]);
  });
});
