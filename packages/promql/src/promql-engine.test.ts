import { describe, expect, it } from 'vitest';
import { createMemorySeriesSource } from './memory-series-source.js';
import { PromqlError } from './promql-error.js';
import { createPromqlEngine } from './promql-engine.js';
import type { SeriesSource } from './series-source.js';
import { engineOver, everyInterval, matrixOf, vectorOf } from './testing/engine-fixture.js';

const staleNaN = NaN;

describe('createPromqlEngine', () => {
  it('tells a staleness marker from a NaN value when the source flags its markers', async () => {
    // Samples at 0 s (NaN, a value), 15 s (a marker), 30 s (+Inf), 45 s (a marker), 60 s (−Inf).
    const series = {
      labels: [{ name: '__name__', value: 'g' }],
      timestampsMs: [0, 15_000, 30_000, 45_000, 60_000],
      values: [NaN, NaN, Infinity, NaN, -Infinity],
      stale: Uint8Array.from([0, 1, 0, 1, 0]),
    };
    const source: SeriesSource = {
      select: () => Promise.resolve([series]),
      series: () => Promise.resolve([]),
      labelNames: () => Promise.resolve([]),
      labelValues: () => Promise.resolve([]),
    };
    const engine = createPromqlEngine({
      source,
      lookbackDeltaMs: 300_000,
      maxSamples: 50_000_000,
      timeoutMs: 10_000,
      maxSeries: 10_000,
      maxPointsPerSeries: 11_000,
    });
    const at = async (expr: string, timeMs: number) =>
      vectorOf(await engine.instantQuery(expr, timeMs)).map(([, v]) => v);
    expect(await at('g', 10_000)).toEqual([NaN]);
    expect(await at('g', 20_000)).toEqual([]);
    expect(await at('g', 40_000)).toEqual([Infinity]);
    expect(await at('g', 50_000)).toEqual([]);
    expect(await at('g', 70_000)).toEqual([-Infinity]);
    // Range functions see the three values, never the markers.
    expect(await at('count_over_time(g[2m])', 70_000)).toEqual([3]);
    expect(await at('max_over_time(g[2m])', 70_000)).toEqual([Infinity]);
  });

  it('sees a sample for 5 minutes, bounds included, and not after a staleness marker', async () => {
    const engine = engineOver([
      { labels: { __name__: 'g', host: 'a' }, samples: [[0, 1]] },
      {
        labels: { __name__: 'g', host: 'b' },
        samples: [
          [0, 2],
          [60_000, staleNaN],
        ],
      },
    ]);
    expect(vectorOf(await engine.instantQuery('g', 300_000))).toEqual([
      [{ __name__: 'g', host: 'a' }, 1],
    ]);
    expect(vectorOf(await engine.instantQuery('g', 300_001))).toEqual([]);
    expect(vectorOf(await engine.instantQuery('g', 30_000))).toHaveLength(2);
  });

  it('aligns range query steps to start + n × step', async () => {
    const engine = engineOver([everyInterval(15_000, { __name__: 'g' }, 100, (i) => i)]);
    expect(matrixOf(await engine.rangeQuery('g', 10_000, 70_000, 30_000))).toEqual([
      [
        { __name__: 'g' },
        [
          [10_000, 0],
          [40_000, 2],
          [70_000, 4],
        ],
      ],
    ]);
  });

  it('refuses an unknown function by name, as bad_data', async () => {
    const engine = engineOver([]);
    await expect(engine.instantQuery('holt_winterz(x[5m], 0.5, 0.5)', 0)).rejects.toMatchObject({
      type: 'bad_data',
      message: expect.stringContaining('"holt_winterz"'),
    });
  });

  it('refuses more series than its limit, as bad_data', async () => {
    const engine = engineOver(
      [1, 2, 3].map((i) => everyInterval(15_000, { __name__: 'g', host: `h${i}` }, 2, () => i)),
      { maxSeries: 2 },
    );
    await expect(engine.instantQuery('g', 15_000)).rejects.toMatchObject({ type: 'bad_data' });
  });

  it('stops evaluating once past its deadline', async () => {
    const engine = createPromqlEngine({
      source: createMemorySeriesSource([everyInterval(15_000, { __name__: 'g' }, 10, (i) => i)]),
      lookbackDeltaMs: 300_000,
      maxSamples: 50_000_000,
      timeoutMs: 1,
      maxSeries: 10,
      maxPointsPerSeries: 11_000,
      // Each reading of the clock moves it on by 1 ms: the deadline passes mid-evaluation.
      now: (() => {
        let t = 0;
        return () => (t += 1);
      })(),
    });
    const error = await engine.rangeQuery('sum(g)', 0, 100_000, 1_000).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(PromqlError);
    expect((error as PromqlError).type).toBe('timeout');
  });
});
