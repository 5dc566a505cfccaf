import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { labelsFrom } from './labels.js';
import type { MemorySeries } from './memory-series-source.js';
import { createMemorySeriesSource } from './memory-series-source.js';
import { createMergedSeriesSource, mergeSeries } from './merged-series-source.js';
import { createPromqlEngine } from './promql-engine.js';
import type { SeriesSource } from './series-source.js';

const engineOn = (source: SeriesSource) =>
  createPromqlEngine({
    source,
    lookbackDeltaMs: 300_000,
    maxSamples: 50_000_000,
    timeoutMs: 10_000,
    maxSeries: 10_000,
    maxPointsPerSeries: 11_000,
  });

const queries = [
  'm',
  'sum by (job) (rate(m[2m]))',
  'max_over_time(m[5m])',
  'count(m) by (instance)',
  'm offset 1m > 0.5',
];

/**
 * Series of one fleet, each sample kept by one or both of three parts: a partition on one shard,
 * or copied to a second while it moves (both copies the same points, the copy partial).
 */
const fleet = fc
  .array(
    fc.record({
      instance: fc.constantFrom('a:9100', 'b:9100', 'c:9100', 'd:9100'),
      job: fc.constantFrom('node', 'app'),
      owner: fc.integer({ min: 0, max: 2 }),
      copy: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
      points: fc.array(
        fc.record({
          jitterMs: fc.integer({ min: -2_000, max: 2_000 }),
          value: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constant(Number.NaN)),
          copied: fc.boolean(),
        }),
        { minLength: 1, maxLength: 40 },
      ),
    }),
    { minLength: 1, maxLength: 8 },
  )
  .map((drafts) => {
    const seen = new Set<string>();
    return drafts.filter((draft) => {
      const key = `${draft.instance}/${draft.job}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  });

describe('createMergedSeriesSource', () => {
  it('answers every query as one source holding every sample does', async () => {
    await fc.assert(
      fc.asyncProperty(fleet, async (drafts) => {
        const whole: MemorySeries[] = [];
        const parts: MemorySeries[][] = [[], [], []];
        for (const draft of drafts) {
          const labels = { __name__: 'm', instance: draft.instance, job: draft.job };
          // A scrape every 15 s with its jitter; a NaN is a staleness marker, as Prometheus writes.
          const samples = draft.points.map(({ jitterMs, value }, i): [number, number] => [
            i * 15_000 + 5_000 + jitterMs,
            value,
          ]);
          whole.push({ labels, samples });
          parts[draft.owner]!.push({ labels, samples });
          if (draft.copy !== undefined && draft.copy !== draft.owner) {
            const copied = samples.filter((_, i) => draft.points[i]!.copied);
            if (copied.length > 0) parts[draft.copy]!.push({ labels, samples: copied });
          }
        }
        const single = engineOn(createMemorySeriesSource(whole));
        const merged = engineOn(
          createMergedSeriesSource(
            parts.map((series, i) => ({ name: `s${i}`, source: createMemorySeriesSource(series) })),
          ),
        );
        for (const query of queries) {
          expect(await merged.rangeQuery(query, 0, 600_000, 30_000), query).toEqual(
            await single.rangeQuery(query, 0, 600_000, 30_000),
          );
          expect(await merged.instantQuery(query, 320_000), query).toEqual(
            await single.instantQuery(query, 320_000),
          );
        }
      }),
      { numRuns: 60 },
    );
  });

  it('lists series, names and values once each, sorted, within the limit', async () => {
    const source = createMergedSeriesSource([
      {
        name: 's0',
        source: createMemorySeriesSource([
          { labels: { __name__: 'm', instance: 'b' }, samples: [[1_000, 1]] },
          { labels: { __name__: 'm', instance: 'a' }, samples: [[1_000, 1]] },
        ]),
      },
      {
        name: 's1',
        source: createMemorySeriesSource([
          { labels: { __name__: 'm', instance: 'a' }, samples: [[2_000, 1]] },
          { labels: { __name__: 'up', zone: 'z' }, samples: [[2_000, 1]] },
        ]),
      },
    ]);
    const range = { startMs: 0, endMs: 10_000 };
    const signal = new AbortController().signal;
    expect(await source.labelNames([], range, signal)).toEqual(['__name__', 'instance', 'zone']);
    expect(await source.labelValues('__name__', [], range, signal)).toEqual(['m', 'up']);
    const series = await source.series([[]], range, 2, signal);
    expect(series).toEqual([
      labelsFrom({ __name__: 'm', instance: 'a' }),
      labelsFrom({ __name__: 'm', instance: 'b' }),
    ]);
  });

  it("fails when one part fails, and aborts the others' reads", async () => {
    let abortedReason: unknown;
    const failing: SeriesSource = {
      ...createMemorySeriesSource([]),
      select: () => Promise.reject(new Error('shard s1 is away')),
    };
    const slow: SeriesSource = {
      ...createMemorySeriesSource([]),
      select: (_matchers, _range, _hints, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            abortedReason = signal.reason;
            reject(new Error('aborted'));
          });
        }),
    };
    const source = createMergedSeriesSource([
      { name: 's0', source: slow },
      { name: 's1', source: failing },
    ]);
    await expect(
      source.select(
        [],
        { startMs: 0, endMs: 1 },
        { stepMs: 0, rangeMs: 0, func: null, maxSeries: 10 },
        new AbortController().signal,
      ),
    ).rejects.toThrow('shard s1 is away');
    expect(abortedReason).toMatchObject({ message: 'shard s1 is away' });
  });

  it('leaves out a part that is away when partial answers are asked for, and says so', async () => {
    const away = new Error('shard s1 is away');
    const refused = new Error('shard s2 refused the query');
    const part = (name: string, fails?: Error) => ({
      name,
      source: {
        ...createMemorySeriesSource([
          { labels: { __name__: 'm', shard: name }, samples: [[1_000, 1]] },
        ]),
        ...(fails === undefined ? {} : { select: () => Promise.reject(fails) }),
      } satisfies SeriesSource,
    });
    const leftOut: string[] = [];
    const partial = {
      skips: (err: unknown) => err === away,
      leftOut: (name: string, err: unknown) => leftOut.push(`${name}: ${String(err)}`),
    };
    const ask = (parts: ReturnType<typeof part>[]) =>
      createMergedSeriesSource(parts, { partial }).select(
        [],
        { startMs: 0, endMs: 2_000 },
        { stepMs: 0, rangeMs: 0, func: null, maxSeries: 10 },
        new AbortController().signal,
      );
    const answered = await ask([part('s0'), part('s1', away)]);
    expect(answered.map((series) => series.labels)).toEqual([
      labelsFrom({ __name__: 'm', shard: 's0' }),
    ]);
    expect(leftOut).toEqual(['s1: Error: shard s1 is away']);
    // A failure partial answers do not cover, or no part answering, still fails.
    await expect(ask([part('s0'), part('s1', away), part('s2', refused)])).rejects.toBe(refused);
    await expect(ask([part('s1', away), part('s3', away)])).rejects.toBe(away);
    expect(leftOut).toHaveLength(1);
  });

  it('refuses to merge a rollup tier with raw samples of the same series', () => {
    const labels = labelsFrom({ __name__: 'm' });
    const buckets = {
      widthMs: 300_000,
      exactTimes: true,
      count: [1],
      sum: [1],
      min: [1],
      max: [1],
      resetSum: [0],
    };
    expect(() =>
      mergeSeries(
        { labels, timestampsMs: [1], values: [1], buckets },
        { labels, timestampsMs: [2], values: [1] },
      ),
    ).toThrow(/different resolutions/);
  });
});
