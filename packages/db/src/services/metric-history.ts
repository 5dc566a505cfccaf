import type { Sql } from '../core/database.js';
import { createFloat64Slabs } from '../series/binary-arrays.js';
import { readKeptTierBuckets } from '../series/read-kept-tier-buckets.js';
import type { KeptTier } from '../storage/kept-tiers.js';
import { keptTiers, readFilledToMs } from '../storage/kept-tiers.js';
import { rollupRetiredAtMs } from '../storage/retired-rollups.js';
import type { Rollup } from '../storage/rollups.js';
import { rollupValueBound } from '../storage/rollups.js';

/** A bucket of a metric's history; `timeMs` its start in epoch milliseconds. */
export type MetricBucketRow = {
  timeMs: number;
  avg: number;
  min: number;
  max: number;
  count: number;
};

/** A bucket as read: its start as epoch milliseconds (a number parses cheaper than a date). */
type BucketDbRow = { time_ms: number; avg: number; min: number; max: number; count: string };

/** Each step's rollup, and the tier that answers where the raw samples are gone. */
const stepSources: Record<'1m' | '1h', { rollup: Rollup; tier: KeptTier }> = {
  '1m': { rollup: 'samples_1m', tier: keptTiers.find((tier) => tier.name === '5m')! },
  '1h': { rollup: 'samples_1h', tier: keptTiers.find((tier) => tier.name === '1h')! },
};

/**
 * A metric's history in `[fromMs, toMs)` at `step`, oldest first, its stored series taken
 * together: per bucket the average weighted by each series' count, the least minimum, the
 * greatest maximum, the counts added, so every sample of the metric counts once.
 *
 * `1m` reads samples_1m and `1h` samples_1h, real-time on both engines (the buckets a refresh
 * has not reached are computed as they are read). Since migrations 36 and 37 retired them
 * (storage/retired-rollups.ts), in three parts that never overlap: the buckets the rollup had
 * materialized, up to where it stopped; then, where the raw samples are gone, the buckets of
 * its tier (5 minutes for `1m`, an hour for `1h`), each a point at its start whose bucket is
 * `(time, time + width]` as PromQL's ranges are; then the buckets of the raw samples, computed
 * as they are read.
 */
export async function readMetricHistory(
  sql: Sql,
  query: { step: '1m' | '1h'; fromMs: number; toMs: number },
  seriesIds: readonly string[],
): Promise<MetricBucketRow[]> {
  const { fromMs, toMs } = query;
  const { rollup, tier } = stepSources[query.step];
  const retiredAtMs = await rollupRetiredAtMs(sql, rollup);
  if (retiredAtMs === undefined) {
    return toRows(await readRollup(sql, rollup, fromMs, toMs, seriesIds));
  }
  const filledToMs = await readFilledToMs(sql, tier);
  const tierFromMs = Math.max(fromMs, retiredAtMs);
  const tierToMs = Math.min(toMs, filledToMs);
  const rawFromMs = Math.max(fromMs, retiredAtMs, filledToMs);
  const [materialized, tiered, computed] = await Promise.all([
    fromMs < Math.min(toMs, retiredAtMs)
      ? readRollup(sql, rollup, fromMs, Math.min(toMs, retiredAtMs), seriesIds)
      : [],
    tierFromMs < tierToMs ? readTier(sql, tier, tierFromMs, tierToMs, seriesIds) : [],
    rawFromMs < toMs ? readRollup(sql, rollup, rawFromMs, toMs, seriesIds) : [],
  ]);
  return [...toRows(materialized), ...tiered, ...toRows(computed)];
}

function readRollup(
  sql: Sql,
  rollup: Rollup,
  fromMs: number,
  toMs: number,
  seriesIds: readonly string[],
): Promise<BucketDbRow[]> {
  const buckets = sql`${sql(`${rollup}_buckets`)}(${seriesIds}::bigint[], ${fromMs}::bigint,
    ${toMs}::bigint)`;
  if (seriesIds.length === 1) {
    return sql<BucketDbRow[]>`
      select bucket_ms::float8 as time_ms, avg, min, max, count
      from ${buckets}
      order by bucket_ms
    `;
  }
  return sql<BucketDbRow[]>`
    select bucket_ms::float8 as time_ms, sum(sum) / sum(count)::float8 as avg, min(min) as min,
      max(max) as max, sum(count)::bigint as count
    from ${buckets}
    group by bucket_ms
    order by bucket_ms
  `;
}

/**
 * A tier's buckets that start in `[fromMs, toMs)` (both within what it stored), each as a point
 * at its start.
 */
async function readTier(
  sql: Sql,
  tier: KeptTier,
  fromMs: number,
  toMs: number,
  seriesIds: readonly string[],
): Promise<MetricBucketRow[]> {
  const width = tier.widthMs;
  const firstStartMs = Math.ceil(fromMs / width) * width;
  const [stored] = await readKeptTierBuckets(
    sql,
    tier,
    { fromMs: firstStartMs, toMs: Math.ceil(toMs / width) * width },
    [seriesIds],
    ['sum', 'min', 'max'],
    createFloat64Slabs(),
    new AbortController().signal,
  );
  const byStart = new Map<number, MetricBucketRow>();
  const clamp = (value: number) => Math.min(rollupValueBound, Math.max(-rollupValueBound, value));
  for (const b of stored!) {
    for (let i = 0; i < b.length; i++) {
      const timeMs = b.bucketMs[i]! - width;
      const count = b.count[i]!;
      if (count === 0 || timeMs >= toMs) continue;
      const sum = Math.min(
        rollupValueBound * count,
        Math.max(-rollupValueBound * count, b.sum[i]!),
      );
      const row = byStart.get(timeMs);
      if (row === undefined) {
        // avg holds the sum until every series is in.
        byStart.set(timeMs, {
          timeMs,
          avg: sum,
          min: clamp(b.min[i]!),
          max: clamp(b.max[i]!),
          count,
        });
        continue;
      }
      row.avg += sum;
      row.min = Math.min(row.min, clamp(b.min[i]!));
      row.max = Math.max(row.max, clamp(b.max[i]!));
      row.count += count;
    }
  }
  return [...byStart.values()]
    .sort((a, b) => a.timeMs - b.timeMs)
    .map((row) => ({ ...row, avg: row.avg / row.count }));
}

function toRows(rows: readonly BucketDbRow[]): MetricBucketRow[] {
  return rows.map((row) => ({
    timeMs: row.time_ms,
    avg: row.avg,
    min: row.min,
    max: row.max,
    count: Number(row.count),
  }));
}
