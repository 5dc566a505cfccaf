import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { labelsToRecord } from './labels.js';
import type { MemorySeries } from './memory-series-source.js';
import { createMemorySeriesSource } from './memory-series-source.js';
import { PromqlError } from './promql-error.js';
import { createPromqlEngine } from './promql-engine.js';
import type { SeriesSource } from './series-source.js';
import type { QueryValue } from './values.js';

const staleNaN = NaN;

function engineOver(
  series: MemorySeries[],
  overrides: { timeoutMs?: number; maxSeries?: number } = {},
) {
  return createPromqlEngine({
    source: createMemorySeriesSource(series),
    lookbackDeltaMs: 300_000,
    maxSamples: 50_000_000,
    timeoutMs: overrides.timeoutMs ?? 10_000,
    maxSeries: overrides.maxSeries ?? 10_000,
    maxPointsPerSeries: 11_000,
  });
}

function every15s(
  labels: Record<string, string>,
  count: number,
  f: (i: number) => number,
): MemorySeries {
  return { labels, samples: Array.from({ length: count }, (_, i) => [i * 15_000, f(i)]) };
}

function vectorOf(value: QueryValue): [Record<string, string>, number][] {
  if (value.resultType !== 'vector') throw new Error(`not a vector: ${value.resultType}`);
  return value.result.map((s) => [labelsToRecord(s.metric), s.v]);
}

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

  it('extrapolates rate to the range boundaries as Prometheus does', async () => {
    // Samples 0, 15 s … 300 s, counter going up by 15 per sample (1/s).
    const engine = engineOver([every15s({ __name__: 'c', host: 'a' }, 21, (i) => 100 + i * 15)]);
    // Window [0, 300 s]: 21 samples cover it exactly: no extrapolation, 300/300.
    expect(vectorOf(await engine.instantQuery('rate(c[5m])', 300_000))).toEqual([
      [{ host: 'a' }, 1],
    ]);
    // Window [10 s, 310 s]: samples 15 s … 300 s (sampled 285 s, 19 intervals of 15 s); both
    // gaps (5 s, 10 s) are under 1.1 × 15 s, so the increase 285 extrapolates to 300 s.
    const [[, rate]] = vectorOf(await engine.instantQuery('rate(c[5m])', 310_000)) as [
      [unknown, number],
    ];
    expect(rate).toBeCloseTo(1, 12);
  });

  it('leaves staleness markers out of the windows of rate, increase and delta', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.integer({ min: 1, max: 40_000 }),
            fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.constant(staleNaN)),
          ),
          { minLength: 0, maxLength: 60 },
        ),
        async (gaps) => {
          let t = 0;
          const samples: [number, number][] = gaps.map(([gap, v]) => [(t += gap), v]);
          const engine = engineOver([{ labels: { __name__: 'c', host: 'a' }, samples }]);
          // The same series without its markers: for range functions they are not samples.
          const plain = engineOver([
            {
              labels: { __name__: 'c', host: 'a' },
              samples: samples.filter(([, v]) => !Number.isNaN(v)),
            },
          ]);
          for (const f of ['rate', 'increase', 'delta']) {
            const query = `${f}(c[2m])`;
            const got = await engine.rangeQuery(query, 0, t + 60_000, 7_000);
            expect(got).toEqual(await plain.rangeQuery(query, 0, t + 60_000, 7_000));
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('adds the value before a counter reset to increase', async () => {
    const values = [0, 10, 20, 5, 15];
    const engine = engineOver([
      { labels: { __name__: 'c' }, samples: values.map((v, i) => [i * 60_000, v]) },
    ]);
    // Raw increase 15 - 0 + 20 (the reset) = 35 over 240 s sampled, in a [0, 240 s] window.
    expect(vectorOf(await engine.instantQuery('increase(c[4m])', 240_000))).toEqual([[{}, 35]]);
    expect(vectorOf(await engine.instantQuery('resets(c[4m])', 240_000))).toEqual([[{}, 1]]);
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
    const engine = engineOver([every15s({ __name__: 'g' }, 100, (i) => i)]);
    const value = await engine.rangeQuery('g', 10_000, 70_000, 30_000);
    expect(value.resultType).toBe('matrix');
    if (value.resultType !== 'matrix') return;
    expect(value.result[0]!.points).toEqual([
      { t: 10_000, v: 0 },
      { t: 40_000, v: 2 },
      { t: 70_000, v: 4 },
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
      [1, 2, 3].map((i) => every15s({ __name__: 'g', host: `h${i}` }, 2, () => i)),
      { maxSeries: 2 },
    );
    await expect(engine.instantQuery('g', 15_000)).rejects.toMatchObject({ type: 'bad_data' });
  });

  it('stops evaluating once past its deadline', async () => {
    const engine = createPromqlEngine({
      source: createMemorySeriesSource([every15s({ __name__: 'g' }, 10, (i) => i)]),
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

  it('keeps the k largest values in topk, whatever the order of the series', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: -5, max: 5 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 6 }),
        async (values, k) => {
          const engine = engineOver(
            values.map((v, i) => ({ labels: { __name__: 'g', i: String(i) }, samples: [[0, v]] })),
          );
          const got = vectorOf(await engine.instantQuery(`topk(${k}, g)`, 0)).map(([, v]) => v);
          const want = [...values].sort((a, b) => b - a).slice(0, k);
          expect([...got].sort((a, b) => b - a)).toEqual(want);
        },
      ),
    );
  });

  it('answers sum by the same as adding each group by hand', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            region: fc.constantFrom('eu', 'us', 'ap'),
            v: fc.integer({ min: -100, max: 100 }),
          }),
          {
            minLength: 1,
            maxLength: 10,
          },
        ),
        async (rows) => {
          const engine = engineOver(
            rows.map((r, i) => ({
              labels: { __name__: 'g', region: r.region, i: String(i) },
              samples: [[0, r.v]],
            })),
          );
          const got = Object.fromEntries(
            vectorOf(await engine.instantQuery('sum by (region) (g)', 0)).map(([l, v]) => [
              l.region,
              v,
            ]),
          );
          const want: Record<string, number> = {};
          for (const r of rows) want[r.region] = (want[r.region] ?? 0) + r.v;
          expect(got).toEqual(want);
        },
      ),
    );
  });
});
