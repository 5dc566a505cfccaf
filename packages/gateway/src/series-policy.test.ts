import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildSampleMessage } from '@monitor/testkit/builders';
import type { SampleMessage } from '@monitor/schemas';
import type { SeriesLimits } from './series-policy.js';
import { createSeriesPolicy } from './series-policy.js';

const limits: SeriesLimits = {
  maxLabels: 2,
  maxLabelNameLength: 5,
  maxLabelValueLength: 5,
  maxNewSeriesPerMinute: 3,
  maxTrackedSeries: 1000,
};

function sample(host: string, metrics: string[], tags: Record<string, string> = {}): SampleMessage {
  return buildSampleMessage({
    org_id: 'org_1',
    host,
    time_ms: 0,
    metrics: Object.fromEntries(metrics.map((name) => [name, 1])),
    tags,
  });
}

describe('createSeriesPolicy', () => {
  it('refuses every point of a sample whose labels break a limit, by reason', () => {
    const policy = createSeriesPolicy(limits, () => 0);
    const result = policy.apply('org_1', [
      sample('a', ['m1', 'm2'], { a: '1', b: '2', c: '3' }),
      sample('b', ['m1'], { toolong: '1' }),
      sample('c', ['m1'], { a: 'toolong' }),
      sample('d', ['m1'], { a: '1', b: '2' }),
    ]);
    expect(result.refused).toEqual({
      too_many_labels: 2,
      label_name_too_long: 1,
      label_value_too_long: 1,
    });
    expect(result.kept.map((each) => each.host)).toEqual(['d']);
  });

  it('lets each organization start a budget of new series per minute; known series always pass', () => {
    let now = 0;
    const policy = createSeriesPolicy(limits, () => now);
    const first = policy.apply('org_1', [sample('a', ['m1', 'm2', 'm3', 'm4'])]);
    expect(first.kept[0]?.metrics).toEqual({ m1: 1, m2: 1, m3: 1 });
    expect(first.refused).toEqual({ new_series_limit: 1 });
    expect(first.retryAfterSeconds).toBe(60);

    now = 30_000;
    const known = policy.apply('org_1', [sample('a', ['m1', 'm2', 'm3'])]);
    expect(known.refused).toEqual({});
    expect(policy.apply('org_2', [sample('a', ['m4'])]).refused).toEqual({});
    const full = policy.apply('org_1', [sample('b', ['m1'])]);
    expect(full.kept).toEqual([]);
    expect(full.retryAfterSeconds).toBe(30);

    now = 60_000;
    expect(policy.apply('org_1', [sample('a', ['m4'])]).refused).toEqual({});
  });

  it('never admits more new series in a minute than the budget, and never refuses a known one', () => {
    const write = fc.record({
      atMs: fc.integer({ min: 0, max: 5_000 }),
      org: fc.constantFrom('o1', 'o2'),
      host: fc.constantFrom('h1', 'h2', 'h3'),
      metrics: fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { minLength: 1 }),
    });
    fc.assert(
      fc.property(fc.array(write, { maxLength: 60 }), (writes) => {
        let now = 0;
        const policy = createSeriesPolicy({ ...limits, maxNewSeriesPerMinute: 4 }, () => now);
        const seen = new Set<string>();
        const started = new Map<string, { startMs: number; count: number }>();
        for (const each of writes) {
          now += each.atMs;
          const result = policy.apply(each.org, [sample(each.host, each.metrics)]);
          const kept = new Set(Object.keys(result.kept[0]?.metrics ?? {}));
          let window = started.get(each.org);
          if (window === undefined || now - window.startMs >= 60_000) {
            window = { startMs: now, count: 0 };
            started.set(each.org, window);
          }
          for (const metric of each.metrics) {
            const key = `${each.org}/${each.host}/${metric}`;
            if (seen.has(key)) expect(kept.has(metric)).toBe(true);
            else if (kept.has(metric)) window.count++;
            if (kept.has(metric)) seen.add(key);
          }
          expect(window.count).toBeLessThanOrEqual(4);
        }
      }),
    );
  });

  it('counts each tag set of a metric as a series when the tags label series, and passes markers', () => {
    const policy = createSeriesPolicy({ ...limits, maxNewSeriesPerMinute: 2 }, () => 0);
    const labelled = (cpu: string, metrics: string[]): SampleMessage => ({
      ...sample('a', metrics, { cpu }),
      tags_label_series: true,
    });
    // /ingest's tags belong to the host: another tag set is the same series.
    expect(policy.apply('org_1', [sample('a', ['m1'], { cpu: '0' })]).refused).toEqual({});
    expect(policy.apply('org_1', [sample('a', ['m1'], { cpu: '1' })]).refused).toEqual({});
    expect(policy.apply('org_1', [labelled('0', ['m1'])]).refused).toEqual({});
    const full = policy.apply('org_1', [
      labelled('1', ['m1']),
      { ...labelled('2', ['m1']), stale_metrics: ['m2'] },
    ]);
    expect(full.refused).toEqual({ new_series_limit: 2 });
    expect(full.kept).toEqual([{ ...labelled('2', []), stale_metrics: ['m2'] }]);
  });

  it('forgets the least recently seen series beyond its bound', () => {
    const policy = createSeriesPolicy(
      { ...limits, maxTrackedSeries: 2, maxNewSeriesPerMinute: 3 },
      () => 0,
    );
    policy.apply('org_1', [sample('a', ['m1', 'm2'])]);
    policy.apply('org_1', [sample('a', ['m1'])]); // m1 is now the most recent
    policy.apply('org_1', [sample('a', ['m3'])]); // forgets m2
    const again = policy.apply('org_1', [sample('a', ['m1', 'm2'])]);
    expect(again.refused).toEqual({ new_series_limit: 1 });
    expect(again.kept[0]?.metrics).toEqual({ m1: 1 });
  });
});
