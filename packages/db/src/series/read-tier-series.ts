import type { Labels, SourceSeries, TimeRange } from '@monitor/promql';
import { bucketAggregatesRead } from '@monitor/promql';
import type { Sql } from '../core/database.js';
import { allSettled, cancelable } from './cancelable.js';
import { keptTierOf, readFilledToMs } from '../storage/kept-tiers.js';
import type { SampleTierRow } from '../storage/sample-tiers.js';
import { computeSampleTierRows } from '../storage/sample-tiers.js';
import { decodeScaled, unscaled } from '../storage/scaled-value.js';
import type { Float64Allocator, Float64SlabLease } from './binary-arrays.js';
import { createConstantArrays, unpooledReader } from './binary-arrays.js';
import type { TierBuckets } from './read-kept-tier-buckets.js';
import { allocateTierBuckets, readKeptTierBuckets } from './read-kept-tier-buckets.js';

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
  func: string | null,
  signal: AbortSignal,
  slabs?: Float64SlabLease,
): Promise<SourceSeries[]> {
  const reader = slabs?.reader() ?? unpooledReader();
  try {
    return await readTierSeriesInto(sql, selected, range, widthMs, func, signal, reader.allocate);
  } finally {
    // Settled: no bucket is decoded into the slabs any more.
    reader.end();
  }
}

async function readTierSeriesInto(
  sql: Sql,
  selected: readonly { labels: Labels; ids: readonly string[] }[],
  range: TimeRange,
  widthMs: number,
  func: string | null,
  signal: AbortSignal,
  allocate: Float64Allocator,
): Promise<SourceSeries[]> {
  // Buckets (e − w, e] that overlap [start, end]: e from the first at or after start to the
  // first at or after end.
  const fromMs = Math.ceil(range.startMs / widthMs) * widthMs - widthMs;
  const toMs = Math.ceil(range.endMs / widthMs) * widthMs;
  const groups = selected.map((s) => s.ids);
  const tier = keptTierOf(widthMs);
  const filledToMs = tier === undefined ? fromMs : await readFilledToMs(sql, tier);
  const keptToMs = Math.max(fromMs, Math.min(toMs, filledToMs));
  const [kept, computed] = await allSettled([
    tier === undefined || keptToMs === fromMs
      ? undefined
      : readKeptTierBuckets(
          sql,
          tier,
          { fromMs, toMs: keptToMs },
          groups,
          bucketAggregatesRead(func),
          allocate,
          signal,
        ),
    keptToMs === toMs
      ? []
      : cancelable(computeSampleTierRows(sql, widthMs, { fromMs: keptToMs, toMs }, groups), signal),
  ]);
  const exactTimes = tier?.exactTimes ?? true;
  const parts: TierBuckets[][] = kept ?? selected.map(() => []);
  computedColumns(computed, exactTimes, allocate).forEach((buckets, i) => {
    parts[i]?.push(buckets);
  });
  const zeros = createConstantArrays(0);
  return selected.map((s, i) =>
    tierSeries(s.labels, combined(parts[i]!, allocate), widthMs, exactTimes, { allocate, zeros }),
  );
}

/** Computed rows as columns per series, their values as doubles, times as the tier's. */
function computedColumns(
  rows: readonly SampleTierRow[],
  exactTimes: boolean,
  allocate: Float64Allocator,
): Map<number, TierBuckets> {
  const counts = new Map<number, number>();
  for (const row of rows) counts.set(row.series, (counts.get(row.series) ?? 0) + 1);
  const out = new Map<number, TierBuckets>();
  for (const [series, length] of counts) {
    out.set(series, { ...allocateTierBuckets(length, allocate), length: 0 });
  }
  for (const row of rows) {
    const b = out.get(row.series)!;
    const i = b.length++;
    const bucketMs = Number(row.bucket_ms);
    const value = (mantissa: string | null, float: number | null): number => {
      if (row.scale !== unscaled) return decodeScaled(Number(mantissa), row.scale);
      return float ?? Number.NaN;
    };
    const lastMs = row.last_ms === null ? Number.NaN : Number(row.last_ms);
    b.bucketMs[i] = bucketMs;
    b.count[i] = row.count;
    b.sum[i] = value(row.sum, row.sum_f);
    b.min[i] = value(row.min, row.min_f);
    b.max[i] = value(row.max, row.max_f);
    b.last[i] = value(row.last, row.last_f);
    b.resetSum[i] = value(row.reset_sum, row.reset_sum_f);
    b.lastMs[i] = exactTimes || lastMs === bucketMs ? lastMs : bucketMs - 1;
    b.staleMs[i] =
      row.stale_ms === null ? Number.NaN : exactTimes ? Number(row.stale_ms) : bucketMs;
  }
  return out;
}

const columnNames = [
  'bucketMs',
  'count',
  'sum',
  'min',
  'max',
  'last',
  'resetSum',
  'lastMs',
  'staleMs',
] as const;

function isOrdered(b: TierBuckets): boolean {
  for (let i = 1; i < b.length; i++) if (!(b.bucketMs[i]! > b.bucketMs[i - 1]!)) return false;
  return true;
}

/**
 * The buckets of one series, those of its several stored ids (and of the stored and computed
 * parts) combined: counts, sums and reset sums added, the last sample the latest one.
 */
function combined(parts: readonly TierBuckets[], allocate: Float64Allocator): TierBuckets {
  // Usually one stored id, its buckets in order: nothing to combine.
  if (parts.length === 1 && isOrdered(parts[0]!)) return parts[0]!;
  const all = allocateTierBuckets(
    parts.reduce((n, part) => n + part.length, 0),
    allocate,
  );
  let at = 0;
  for (const part of parts) {
    for (const name of columnNames) all[name].set(part[name].subarray(0, part.length), at);
    at += part.length;
  }
  if (isOrdered(all)) return all;
  const order = Array.from({ length: all.length }, (_, i) => i).sort(
    (a, b) => all.bucketMs[a]! - all.bucketMs[b]! || all.lastMs[a]! - all.lastMs[b]!,
  );
  const out = allocateTierBuckets(all.length, allocate);
  let n = 0;
  for (const i of order) {
    const p = n - 1;
    if (n === 0 || out.bucketMs[p] !== all.bucketMs[i]) {
      for (const name of columnNames) out[name][n] = all[name][i]!;
      n++;
      continue;
    }
    const count = all.count[i]!;
    if (count > 0 && out.count[p]! > 0) {
      out.sum[p] = out.sum[p]! + all.sum[i]!;
      out.min[p] = Math.min(out.min[p]!, all.min[i]!);
      out.max[p] = Math.max(out.max[p]!, all.max[i]!);
      out.resetSum[p] = out.resetSum[p]! + all.resetSum[i]!;
    } else if (count > 0) {
      out.sum[p] = all.sum[i]!;
      out.min[p] = all.min[i]!;
      out.max[p] = all.max[i]!;
      out.resetSum[p] = all.resetSum[i]!;
    }
    if (count > 0) {
      out.last[p] = all.last[i]!;
      out.lastMs[p] = all.lastMs[i]!;
    }
    out.count[p] = out.count[p]! + count;
    const staleMs = all.staleMs[i]!;
    if (!Number.isNaN(staleMs)) {
      out.staleMs[p] = Number.isNaN(out.staleMs[p]!) ? staleMs : Math.max(out.staleMs[p]!, staleMs);
    }
  }
  out.length = n;
  // A marker before the bucket's last sample no longer ends it.
  for (let p = 0; p < n; p++) {
    if (out.count[p]! > 0 && out.staleMs[p]! <= out.lastMs[p]!) out.staleMs[p] = Number.NaN;
  }
  return out;
}

function tierSeries(
  labels: Labels,
  b: TierBuckets,
  widthMs: number,
  exactTimes: boolean,
  arrays: { allocate: Float64Allocator; zeros: Float64Allocator },
): SourceSeries {
  let filled = 0;
  let markers = 0;
  for (let i = 0; i < b.length; i++) {
    if (b.count[i]! > 0) filled++;
    if (!Number.isNaN(b.staleMs[i]!)) markers++;
  }
  const buckets = { widthMs, exactTimes };
  if (filled === b.length && markers === 0) {
    // Every bucket a point and none a marker (the usual series): its columns as they are.
    const column = (values: Float64Array) => values.subarray(0, b.length);
    return {
      labels,
      timestampsMs: column(b.lastMs),
      values: column(b.last),
      stale: arrays.zeros(b.length),
      markers,
      buckets: {
        ...buckets,
        count: column(b.count),
        sum: column(b.sum),
        min: column(b.min),
        max: column(b.max),
        resetSum: column(b.resetSum),
      },
    };
  }
  const { allocate } = arrays;
  const timestampsMs = allocate(filled + markers);
  const values = allocate(filled + markers);
  const stale = allocate(filled + markers);
  const count = allocate(filled);
  const sum = allocate(filled);
  const min = allocate(filled);
  const max = allocate(filled);
  const resetSum = allocate(filled);
  let point = 0;
  let bucket = 0;
  for (let i = 0; i < b.length; i++) {
    if (b.count[i]! > 0) {
      timestampsMs[point] = b.lastMs[i]!;
      values[point++] = b.last[i]!;
      count[bucket] = b.count[i]!;
      sum[bucket] = b.sum[i]!;
      min[bucket] = b.min[i]!;
      max[bucket] = b.max[i]!;
      resetSum[bucket++] = b.resetSum[i]!;
    }
    const staleMs = b.staleMs[i]!;
    if (!Number.isNaN(staleMs)) {
      timestampsMs[point] = staleMs;
      values[point] = Number.NaN;
      stale[point++] = 1;
    }
  }
  return {
    labels,
    timestampsMs,
    values,
    stale,
    markers,
    buckets: { ...buckets, count, sum, min, max, resetSum },
  };
}
