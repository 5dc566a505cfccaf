import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { labelsKey } from './labels.js';
import type { MemorySeries } from './memory-series-source.js';
import { bucketSeries } from './series-buckets.js';
import type { TierTimes } from './memory-series-source.js';
import { engineOver, matrixOf, vectorOf } from './testing/engine-fixture.js';
import type { QueryValue } from './values.js';

const widthMs = 300_000;
/** A multiple of the width, so that the grid of every series starts on a bucket's end. */
const t0 = 1_800_000_000_000;

/** What a query passes to read the 5-minute tier. */
const tier = { resolutionMs: widthMs };

describe('bucketSeries', () => {
  it('keeps per bucket what the range functions need, a staleness marker as a point', () => {
    const times = [t0 - 10_000, t0, t0 + 100_000, t0 + 200_000, t0 + 250_000, t0 + 300_000];
    const values = [5, 7, 2, 4, 0, 0];
    const stale = [0, 0, 0, 0, 0, 1];
    const tiered = bucketSeries(times, values, stale, widthMs);
    // (t0 − 5m, t0] holds two samples; (t0, t0 + 5m] three and the marker.
    expect(tiered.timestampsMs).toEqual([t0, t0 + 250_000, t0 + 300_000]);
    expect(tiered.values).toEqual([7, 0, Number.NaN]);
    expect(tiered.stale).toEqual([0, 0, 1]);
    expect(tiered.buckets.count).toEqual([2, 3]);
    expect(tiered.buckets.sum).toEqual([12, 6]);
    expect(tiered.buckets.min).toEqual([5, 0]);
    expect(tiered.buckets.max).toEqual([7, 4]);
    // 7 → 2 across the buckets' boundary, then 4 → 0: drops from 7 and from 4.
    expect(tiered.buckets.resetSum).toEqual([0, 11]);
  });

  it('compares the first sample of a bucket with the last of the bucket just before only', () => {
    const times = [t0, t0 + 2 * widthMs];
    const tiered = bucketSeries(times, [9, 1], [0, 0], widthMs);
    expect(tiered.buckets.resetSum).toEqual([0, 0]);
  });

  it('counts the sample at the very start of a window once, as Prometheus 2 does', async () => {
    const series: MemorySeries[] = [
      {
        labels: { __name__: 'm' },
        samples: [
          [t0 - 60_000, 1],
          [t0, 2],
          [t0 + 120_000, 3],
          [t0 + 300_000, 4],
        ],
      },
    ];
    const query = 'count_over_time(m[5m])';
    const raw = await engineOver(series).instantQuery(query, t0 + widthMs);
    const fromTier = await engineOver(series).instantQuery(query, t0 + widthMs, undefined, tier);
    expect(raw.resultType === 'vector' && raw.result[0]?.v).toBe(3);
    expect(fromTier).toEqual(raw);
  });

  it('answers the increase of a counter across resets, from the last sample before the window', async () => {
    // One more every 15 s, back to 1 after 100: every step adds exactly one.
    const counter: MemorySeries[] = [
      {
        labels: { __name__: 'requests_total' },
        samples: Array.from({ length: 1000 }, (_, k) => [t0 + k * 15_000 + 7, (k % 100) + 1]),
      },
    ];
    const atMs = t0 + 3 * 3_600_000;
    const engine = engineOver(counter);
    const increase = await engine.instantQuery(
      'increase(requests_total[1h])',
      atMs,
      undefined,
      tier,
    );
    expect(increase.resultType === 'vector' && increase.result[0]?.v).toBe(240);
    const rate = await engine.instantQuery('rate(requests_total[1h])', atMs, undefined, tier);
    expect(rate.resultType === 'vector' && rate.result[0]?.v).toBe(240 / 3600);
    expect(rate.warnings).toEqual([expect.stringMatching(/^approximate: read from 5m rollups/)]);
    // A window that starts inside a bucket (Grafana's $__rate_interval): the first sample is a
    // bucket before it, and the change is per second of the time it took, not of the range.
    const unaligned = await engine.instantQuery(
      'increase(requests_total[61m])',
      atMs,
      undefined,
      tier,
    );
    expect(unaligned.resultType === 'vector' && unaligned.result[0]?.v).toBeCloseTo(244, 9);
    const unalignedRate = await engine.instantQuery(
      'rate(requests_total[61m])',
      atMs,
      undefined,
      tier,
    );
    expect(unalignedRate.resultType === 'vector' && unalignedRate.result[0]?.v).toBeCloseTo(
      4 / 60,
      12,
    );
  });

  it('counts a counter that stopped inside the window only while it was there, as Prometheus does, from hourly buckets', async () => {
    const atMs = t0 + 3 * 3_600_000;
    // One more every 15 s, until 20 minutes before the query's time: inside the hourly bucket
    // that ends there, so only the missing later point says it stopped.
    const stopped: MemorySeries[] = [
      {
        labels: { __name__: 'requests_total' },
        samples: Array.from(
          { length: 1000 },
          (_, k) => [t0 + k * 15_000 + 7, k] as [number, number],
        ).filter(([t]) => t <= atMs - 20 * 60_000),
      },
    ];
    const engine = engineOver(stopped);
    const query = 'increase(requests_total[61m])';
    const raw = await engine.instantQuery(query, atMs);
    const fromTier = await engine.instantQuery(query, atMs, undefined, {
      resolutionMs: 3_600_000,
    });
    const rawValue = raw.resultType === 'vector' ? raw.result[0]!.v : Number.NaN;
    const tierValue = fromTier.resultType === 'vector' ? fromTier.result[0]!.v : Number.NaN;
    // About 41 minutes of it, not the whole window's 61.
    expect(rawValue).toBeGreaterThan(160);
    expect(rawValue).toBeLessThan(170);
    expect(Math.abs(tierValue - rawValue) / rawValue).toBeLessThan(0.02);
  });
});

type GeneratedSample = {
  jitterMs: number;
  onGrid: boolean;
  increment: number;
  gauge: number;
  marker: boolean;
  missing: boolean;
};

const sampleArbitrary: fc.Arbitrary<GeneratedSample> = fc.record({
  jitterMs: fc.integer({ min: -200, max: 200 }),
  onGrid: fc.boolean(),
  // -1: a counter reset.
  increment: fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 0, max: 60 }) },
    { weight: 1, arbitrary: fc.constant(-1) },
  ),
  gauge: fc.integer({ min: -1000, max: 1000 }),
  marker: fc.integer({ min: 0, max: 30 }).map((n) => n === 0),
  missing: fc.integer({ min: 0, max: 15 }).map((n) => n === 0),
});

type GeneratedSeries = {
  counter: boolean;
  intervalMs: number;
  decimals: number;
  samples: GeneratedSample[];
};

const seriesArbitrary: fc.Arbitrary<GeneratedSeries> = fc.record({
  counter: fc.boolean(),
  intervalMs: fc.constantFrom(10_000, 15_000, 30_000, 60_000),
  decimals: fc.constantFrom(0, 1, 3),
  samples: fc.array(sampleArbitrary, { maxLength: 160 }),
});

/** Series as agents send them: a grid with scrape jitter, gaps, resets and staleness markers. */
function toMemorySeries(generated: GeneratedSeries[]): MemorySeries[] {
  return generated.map((g, i) => {
    const samples: [number, number][] = [];
    const stale: number[] = [];
    let counter = 0;
    g.samples.forEach((s, k) => {
      counter = s.increment === -1 ? 3 : counter + s.increment;
      if (s.missing) return;
      samples.push([
        t0 + k * g.intervalMs + (s.onGrid ? 0 : s.jitterMs),
        s.marker ? Number.NaN : (g.counter ? counter : s.gauge) / 10 ** g.decimals,
      ]);
      stale.push(s.marker ? 1 : 0);
    });
    return {
      labels: { __name__: 'm', i: String(i), group: i % 2 === 0 ? 'a' : 'b' },
      samples,
      stale,
    };
  });
}

const ranges = ['5m', '10m', '15m', '1h'];
const exactQueries = [
  'm',
  'max by (group) (m)',
  'absent_over_time(m{i="9"}[R])',
  'sum by (group) (sum_over_time(m[R]))',
  'count_over_time(m[R] offset 5m)',
  ...[
    'count_over_time',
    'sum_over_time',
    'avg_over_time',
    'min_over_time',
    'max_over_time',
    'last_over_time',
    'present_over_time',
  ].map((f) => `${f}(m[R])`),
];

const queryArbitrary = fc
  .tuple(fc.constantFrom(...exactQueries), fc.constantFrom(...ranges))
  .map(([template, range]) => template.replace('R', range));

/**
 * A value as the raw samples' answer may differ from the tier's: sums added in another order,
 * so in the last bits of a double (relative 1e-9 is far above that, far below any real difference).
 */
function about(v: number): unknown {
  if (!Number.isFinite(v)) return v;
  return expect.closeTo(v, Math.max(0, 9 - Math.ceil(Math.log10(Math.max(1, Math.abs(v))))));
}

/** The answer's series and points, in one order; with `close`, values as `about` matches them. */
function comparable(value: QueryValue, close = false): unknown {
  const v = (x: number): unknown => (close ? about(x) : x);
  switch (value.resultType) {
    case 'vector':
      return value.result
        .map((s) => [labelsKey(s.metric), s.t, v(s.v)] as const)
        .sort(([a], [b]) => (a < b ? -1 : 1));
    case 'matrix':
      return value.result.map((s) => [labelsKey(s.metric), s.points.map((p) => [p.t, v(p.v)])]);
    default:
      return value;
  }
}

describe('PromQL over a rollup tier', () => {
  it('answers as the raw samples do at steps and ranges of whole buckets, without a warning', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(seriesArbitrary, { minLength: 1, maxLength: 4 }),
        queryArbitrary,
        fc.constantFrom<TierTimes>('samples', 'bucketEnds'),
        fc.record({
          startBuckets: fc.integer({ min: 0, max: 12 }),
          spanBuckets: fc.integer({ min: 0, max: 30 }),
          stepBuckets: fc.integer({ min: 1, max: 3 }),
        }),
        async (generated, query, times, window) => {
          const series = toMemorySeries(generated);
          const raw = engineOver(series);
          const engine = engineOver(series, { tierTimes: times });
          const startMs = t0 + window.startBuckets * widthMs;
          const endMs = startMs + window.spanBuckets * widthMs;
          const stepMs = window.stepBuckets * widthMs;
          const range = await engine.rangeQuery(query, startMs, endMs, stepMs, undefined, tier);
          expect(range.warnings).toBeUndefined();
          expect(comparable(range)).toEqual(
            comparable(await raw.rangeQuery(query, startMs, endMs, stepMs), true),
          );
          const instant = await engine.instantQuery(query, endMs, undefined, tier);
          expect(instant.warnings).toBeUndefined();
          expect(comparable(instant)).toEqual(
            comparable(await raw.instantQuery(query, endMs), true),
          );
        },
      ),
      { numRuns: 400 },
    );
  });

  /** Samples every 15 s for two hours: every bucket holds several. */
  const dense: MemorySeries[] = [
    {
      labels: { __name__: 'm' },
      samples: Array.from({ length: 480 }, (_, k) => [t0 + k * 15_000, k] as [number, number]),
    },
  ];
  const denseEngine = engineOver(dense);
  const hour = t0 + 3_600_000;

  it.each([
    ['a step between bucket ends', 'sum_over_time(m[5m])', hour + 60_000],
    ['a window that starts inside a bucket', 'sum_over_time(m[7m])', hour],
    ['a window that ends inside a bucket', 'count_over_time(m[7m])', hour + 120_000],
    ['an instant selector between bucket ends', 'm', hour + 120_000],
    ['a function that needs every sample', 'quantile_over_time(0.5, m[10m])', hour],
    ['a rate, which extrapolates from the first sample', 'rate(m[10m])', hour],
    ['changes, which compares every sample', 'changes(m[10m])', hour],
    ['a function that needs the last two samples', 'irate(m[10m])', hour],
    ['a range selector', 'm[10m]', hour],
  ])('says it is approximate at %s', async (_case, query, timeMs) => {
    const value = await denseEngine.instantQuery(query, timeMs, undefined, tier);
    expect(value.warnings).toEqual([expect.stringMatching(/^approximate: read from 5m rollups/)]);
  });

  describe('max_source_resolution=auto', () => {
    // Raw samples kept from the first hour's end; the 5m tier holds the first hour and before.
    const tiers = {
      rawFromMs: hour,
      tiers: [
        { widthMs, fromMs: t0 - 3_600_000 },
        { widthMs: 3_600_000, fromMs: t0 - 86_400_000 },
      ],
    };
    const autoTierWarning = expect.stringMatching(/^read from 5m rollups: the query reaches back/);

    it('reads raw samples where they are kept, without a warning', async () => {
      const query = 'sum_over_time(m[10m])';
      const value = await denseEngine.instantQuery(query, hour + 3_600_000, undefined, { tiers });
      expect(value.warnings).toBeUndefined();
      expect(vectorOf(value)).toEqual(
        vectorOf(await denseEngine.instantQuery(query, hour + 3_600_000)),
      );
    });

    it('reads the finest tier that reaches back as far, and says so', async () => {
      const query = 'sum_over_time(m[10m])';
      const value = await denseEngine.instantQuery(query, hour, undefined, { tiers });
      expect(value.warnings).toEqual([autoTierWarning]);
      // Aligned: the tier answers as the raw samples would.
      expect(vectorOf(value)).toEqual(vectorOf(await denseEngine.instantQuery(query, hour)));
    });

    it('reads the finest tier at any step, as the contract asks, exact where aligned', async () => {
      const query = 'sum_over_time(m[1h])';
      const value = await denseEngine.rangeQuery(query, t0, t0 + 7_200_000, 3_600_000, undefined, {
        tiers,
      });
      expect(value.warnings).toEqual([autoTierWarning]);
      expect(matrixOf(value)).toEqual(
        matrixOf(await denseEngine.rangeQuery(query, t0, t0 + 7_200_000, 3_600_000)),
      );
    });

    it('reads the tier that reaches furthest when none reaches as far', async () => {
      const query = 'count_over_time(m[2d])';
      const value = await denseEngine.instantQuery(query, hour, undefined, { tiers });
      expect(value.warnings).toEqual([
        expect.stringMatching(/^read from 1h rollups: the query reaches back/),
      ]);
      expect(vectorOf(value)).toEqual(vectorOf(await denseEngine.instantQuery(query, hour)));
    });

    it('reads raw samples where no tier holds anything of the range', async () => {
      const old = { rawFromMs: hour, tiers: [{ widthMs, fromMs: hour * 2 }] };
      const value = await denseEngine.instantQuery('m', hour - 60_000, undefined, { tiers: old });
      expect(value.warnings).toBeUndefined();
    });
  });
});
