// @services postgres timescale
import fc from 'fast-check';
import { bucketSeries } from '@monitor/promql';
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import type { PositionedSample } from '@monitor/schemas';
import { createSampleStore } from '../samples/sample-store.js';
import { migratedDatabase } from '../testing/clean-database.js';
import type { SampleTierRow } from './sample-tiers.js';
import { computeSampleTierRows } from './sample-tiers.js';
import { decodeScaled, unscaled } from './scaled-value.js';

const widthMs = 300_000;
const metrics = ['m0', 'm1', 'm2'];

/** One series' samples as written: [time, value] or [time, null] for a staleness marker. */
type Written = [number, number | null][];

/** A bucket of a tier row, its values decoded, as the reference computes it. */
type DecodedBucket = {
  bucketMs: number;
  count: number;
  sum: number;
  min: number;
  max: number;
  lastMs: number;
  last: number;
  resetSum: number;
};

function decodeRow(row: SampleTierRow): DecodedBucket & { exact: boolean; staleMs: number | null } {
  const exact = row.scale !== unscaled;
  const value = (mantissa: string | null, float: number | null): number =>
    exact ? decodeScaled(Number(mantissa), row.scale) : (float as number);
  return {
    bucketMs: Number(row.bucket_ms),
    count: row.count,
    sum: value(row.sum, row.sum_f),
    min: value(row.min, row.min_f),
    max: value(row.max, row.max_f),
    lastMs: Number(row.last_ms),
    last: value(row.last, row.last_f),
    resetSum: value(row.reset_sum, row.reset_sum_f),
    exact,
    staleMs: row.stale_ms === null ? null : Number(row.stale_ms),
  };
}

/** What promql's reference (bucketSeries) keeps of the same samples, bucket by bucket. */
function referenceBuckets(written: Written): { buckets: DecodedBucket[]; staleMs: number[] } {
  const tier = bucketSeries(
    written.map(([t]) => t),
    written.map(([, v]) => v ?? Number.NaN),
    written.map(([, v]) => (v === null ? 1 : 0)),
    widthMs,
  );
  const b = tier.buckets;
  const buckets: DecodedBucket[] = [];
  const staleMs: number[] = [];
  let k = 0;
  tier.timestampsMs.forEach((t, i) => {
    if (tier.stale[i] === 1) {
      staleMs.push(t);
      return;
    }
    buckets.push({
      bucketMs: Math.ceil(t / widthMs) * widthMs,
      count: b.count[k]!,
      sum: b.sum[k]!,
      min: b.min[k]!,
      max: b.max[k]!,
      lastMs: t,
      last: tier.values[i]!,
      resetSum: b.resetSum[k]!,
    });
    k++;
  });
  return { buckets, staleMs };
}

/**
 * A sum as the reference's may differ from ours: added in another order, so in the last bits
 * of a double (relative 1e-9 is far above that and far below any real difference).
 */
const aboutSum = (v: number): unknown =>
  expect.closeTo(v, Math.max(0, 9 - Math.ceil(Math.log10(Math.max(1, Math.abs(v))))));

const valueArbitrary = fc.oneof(
  // Decimals of a few scales, as gauges and ratios are sent.
  fc
    .tuple(fc.integer({ min: -100_000, max: 100_000 }), fc.constantFrom(0, 1, 2, 3))
    .map(([m, d]) => m / 10 ** d),
  // Whole 4 KiB pages: stored with a binary shift.
  fc.integer({ min: 0, max: 1_000_000 }).map((pages) => pages * 4096),
  // Noise no decimal scale holds exactly: stored as float8.
  fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }),
);

const seriesArbitrary = fc.array(
  fc.record({
    value: valueArbitrary,
    counterStep: fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0, max: 40 }) },
      { weight: 1, arbitrary: fc.constant(-1) },
    ),
    counter: fc.boolean(),
    jitterMs: fc.integer({ min: -150, max: 150 }),
    marker: fc.integer({ min: 0, max: 25 }).map((n) => n === 0),
  }),
  { maxLength: 90 },
);

describe.each(['postgres', 'timescale'] as const)('rollup tier rows on %s', (engine) => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase(engine, 'sample_tiers'));
  });

  afterAll(async () => {
    await dispose?.();
  });

  /** Writes `series` (metric → samples) for host h of a new organization; its series ids. */
  async function write(startMs: number, series: Written[]): Promise<Map<string, number>> {
    const orgId = uniqueOrgId();
    const byTime = new Map<number, PositionedSample>();
    series.forEach((written, i) => {
      for (const [timeMs, value] of written) {
        const sample = byTime.get(timeMs) ?? buildHostSample({ orgId, host: 'h', timeMs });
        if (value === null) sample.staleMetrics = [...(sample.staleMetrics ?? []), metrics[i]!];
        else sample.metrics[metrics[i]!] = value;
        byTime.set(timeMs, sample);
      }
    });
    const store = createSampleStore(db);
    const samples = [...byTime.values()].sort((a, b) => a.timeMs - b.timeMs);
    await store.writeBatch({ samples });
    const rows = await db.sql<{ id: string; metric: string }[]>`
      select r.id::text as id, r.metric from series r join services v on v.id = r.service_id
      where v.org_id = ${orgId}`;
    expect(startMs).toBeGreaterThan(0);
    return new Map(rows.map((r) => [r.id, metrics.indexOf(r.metric)]));
  }

  it('keeps per bucket what the reference does, for every kind of stored value', async () => {
    const t0 = Math.floor(Date.now() / widthMs) * widthMs - 6 * 3_600_000;
    await fc.assert(
      fc.asyncProperty(
        fc.array(seriesArbitrary, { minLength: 1, maxLength: 3 }),
        async (generated) => {
          const series: Written[] = generated.map((samples) => {
            let counter = 0;
            return samples.map((s, k): [number, number | null] => {
              counter = s.counterStep === -1 ? 1.5 : counter + s.counterStep / 4;
              // Every 20th sample exactly on a bucket's end: a window's first sample.
              const timeMs = t0 + k * 15_000 + (k % 20 === 0 ? 0 : s.jitterMs);
              return [timeMs, s.marker ? null : s.counter ? counter : s.value];
            });
          });
          const ids = await write(t0, series);
          const stored = [...ids];
          const rows = await computeSampleTierRows(
            db.sql,
            widthMs,
            { fromMs: t0 - widthMs, toMs: t0 + 24 * widthMs },
            stored.map(([id]) => [id]),
          );
          for (const [k, [, index]] of stored.entries()) {
            const reference = referenceBuckets(series[index]!);
            const mine = rows.filter((r) => r.series === k).map(decodeRow);
            mine.sort((a, b) => a.bucketMs - b.bucketMs);
            const withSamples = mine.filter((r) => r.count > 0);
            expect(
              withSamples.map(({ exact: _exact, staleMs: _staleMs, ...rest }) => rest),
            ).toEqual(
              reference.buckets.map((b) => ({
                ...b,
                sum: aboutSum(b.sum),
                resetSum: aboutSum(b.resetSum),
              })),
            );
            expect(mine.flatMap((r) => (r.staleMs === null ? [] : [r.staleMs]))).toEqual(
              reference.staleMs,
            );
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('stores decimals and whole pages exactly, noise as doubles', async () => {
    const t0 = Math.floor(Date.now() / widthMs) * widthMs - 12 * 3_600_000;
    const ids = await write(t0, [
      [
        [t0 + 1_000, 0.1],
        [t0 + 16_000, 0.25],
        [t0 + 31_000, 1234.5],
      ],
      [
        [t0 + 1_000, 4096],
        [t0 + 16_000, 8192 * 3],
      ],
      [
        [t0 + 1_000, 0.1],
        [t0 + 16_000, 0.1 + 0.2],
      ],
    ]);
    const stored = [...ids];
    const rows = await computeSampleTierRows(
      db.sql,
      widthMs,
      { fromMs: t0, toMs: t0 + widthMs },
      stored.map(([id]) => [id]),
    );
    const byMetric = new Map(rows.map((r) => [stored[r.series]![1], r]));
    // 0.1 + 0.25 + 1234.5 at two decimals: 123485 hundredths, exactly.
    expect(byMetric.get(0)).toMatchObject({ scale: 2, sum: '123485', min: '10', max: '123450' });
    expect(decodeRow(byMetric.get(1)!)).toMatchObject({ exact: true, sum: 4096 * 7 });
    expect(byMetric.get(2)).toMatchObject({ scale: unscaled, sum: null, min_f: 0.1 });
  });
});
