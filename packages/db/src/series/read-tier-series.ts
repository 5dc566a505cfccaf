import type { Labels, SourceSeries, TimeRange } from '@monitor/promql';
import type { Sql } from '../core/database.js';
import { cancelable } from './cancelable.js';
import { keptTierOf, readFilledToMs } from '../storage/kept-tiers.js';
import type { SampleTierRow } from '../storage/sample-tiers.js';
import { computeSampleTierRows } from '../storage/sample-tiers.js';
import { decodeScaled, unscaled } from '../storage/scaled-value.js';
import type { TierBucket } from './read-kept-tier-buckets.js';
import { readKeptTierBuckets } from './read-kept-tier-buckets.js';

/**
 * The selected series as a rollup tier of `widthMs` holds them (promql's series-buckets.ts):
 * every bucket that overlaps `range`, each series' stored ids counted as one. Buckets the tier
 * keeps (storage/kept-tiers.ts) are read from it, the others computed from the raw samples as
 * they are read, in the same shape: an answer does not change when its buckets are stored. Its
 * points are the buckets' last samples and a staleness marker that ends a bucket, at their own
 * times, or at the bucket's end or the millisecond before where the tier keeps no more.
 */
export async function readTierSeries(
  sql: Sql,
  selected: readonly { labels: Labels; ids: readonly string[] }[],
  range: TimeRange,
  widthMs: number,
  signal: AbortSignal,
): Promise<SourceSeries[]> {
  // Buckets (e − w, e] that overlap [start, end]: e from the first at or after start to the
  // first at or after end.
  const fromMs = Math.ceil(range.startMs / widthMs) * widthMs - widthMs;
  const toMs = Math.ceil(range.endMs / widthMs) * widthMs;
  const groups = selected.map((s) => s.ids);
  const tier = keptTierOf(widthMs);
  const filledToMs = tier === undefined ? fromMs : await readFilledToMs(sql, tier);
  const keptToMs = Math.max(fromMs, Math.min(toMs, filledToMs));
  const [kept, computed] = await Promise.all([
    tier === undefined || keptToMs === fromMs
      ? undefined
      : readKeptTierBuckets(sql, tier, { fromMs, toMs: keptToMs }, groups, signal),
    keptToMs === toMs
      ? []
      : cancelable(computeSampleTierRows(sql, widthMs, { fromMs: keptToMs, toMs }, groups), signal),
  ]);
  const exactTimes = tier?.exactTimes ?? true;
  const bySeries: TierBucket[][] = kept ?? selected.map(() => []);
  for (const row of computed) bySeries[row.series]?.push(decodeRow(row, exactTimes));
  return selected.map((s, i) => tierSeries(s.labels, bySeries[i]!, widthMs, exactTimes));
}

/** A computed row's values as doubles, its times as the tier presents them. */
function decodeRow(row: SampleTierRow, exactTimes: boolean): TierBucket {
  const bucketMs = Number(row.bucket_ms);
  const value = (mantissa: string | null, float: number | null): number => {
    if (row.scale !== unscaled) return decodeScaled(Number(mantissa), row.scale);
    return float ?? Number.NaN;
  };
  const lastMs = row.last_ms === null ? Number.NaN : Number(row.last_ms);
  return {
    bucketMs,
    count: row.count,
    sum: value(row.sum, row.sum_f),
    min: value(row.min, row.min_f),
    max: value(row.max, row.max_f),
    last: value(row.last, row.last_f),
    resetSum: value(row.reset_sum, row.reset_sum_f),
    lastMs: exactTimes || lastMs === bucketMs ? lastMs : bucketMs - 1,
    staleMs: row.stale_ms === null ? null : exactTimes ? Number(row.stale_ms) : bucketMs,
  };
}

/**
 * The buckets of one series, those of its several stored ids combined: counts, sums and reset
 * sums added, the last sample the latest one.
 */
function combined(buckets: TierBucket[]): TierBucket[] {
  // Usually one stored id, its buckets in order: nothing to combine.
  let ordered = true;
  for (let i = 1; i < buckets.length && ordered; i++) {
    ordered = buckets[i]!.bucketMs > buckets[i - 1]!.bucketMs;
  }
  if (ordered) return buckets;
  buckets.sort((a, b) => a.bucketMs - b.bucketMs || a.lastMs - b.lastMs);
  const out: TierBucket[] = [];
  for (const b of buckets) {
    const previous = out.at(-1);
    if (previous?.bucketMs !== b.bucketMs) {
      out.push({ ...b });
      continue;
    }
    if (b.count > 0 && previous.count > 0) {
      previous.sum += b.sum;
      previous.min = Math.min(previous.min, b.min);
      previous.max = Math.max(previous.max, b.max);
      previous.resetSum += b.resetSum;
    } else if (b.count > 0) {
      Object.assign(previous, { sum: b.sum, min: b.min, max: b.max, resetSum: b.resetSum });
    }
    if (b.count > 0) Object.assign(previous, { last: b.last, lastMs: b.lastMs });
    previous.count += b.count;
    if (b.staleMs !== null) previous.staleMs = Math.max(previous.staleMs ?? b.staleMs, b.staleMs);
  }
  // A marker before the bucket's last sample no longer ends it.
  for (const b of out)
    if (b.staleMs !== null && b.count > 0 && b.staleMs <= b.lastMs) b.staleMs = null;
  return out;
}

function tierSeries(
  labels: Labels,
  rows: TierBucket[],
  widthMs: number,
  exactTimes: boolean,
): SourceSeries {
  const timestampsMs: number[] = [];
  const values: number[] = [];
  const stale: number[] = [];
  const count: number[] = [];
  const sum: number[] = [];
  const min: number[] = [];
  const max: number[] = [];
  const resetSum: number[] = [];
  for (const row of combined(rows)) {
    if (row.count > 0) {
      timestampsMs.push(row.lastMs);
      values.push(row.last);
      stale.push(0);
      count.push(row.count);
      sum.push(row.sum);
      min.push(row.min);
      max.push(row.max);
      resetSum.push(row.resetSum);
    }
    if (row.staleMs !== null) {
      timestampsMs.push(row.staleMs);
      values.push(Number.NaN);
      stale.push(1);
    }
  }
  return {
    labels,
    timestampsMs,
    values,
    stale,
    buckets: { widthMs, exactTimes, count, sum, min, max, resetSum },
  };
}
