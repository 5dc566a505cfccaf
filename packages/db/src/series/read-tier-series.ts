import type { Labels, SourceSeries, TimeRange } from '@monitor/promql';
import type { Sql } from '../core/database.js';
import { cancelable } from './cancelable.js';
import type { SampleTierRow } from '../storage/sample-tiers.js';
import { computeSampleTierRows } from '../storage/sample-tiers.js';
import { decodeScaled, unscaled } from '../storage/scaled-value.js';

/**
 * The selected series as a rollup tier of `widthMs` holds them (promql's series-buckets.ts):
 * every bucket that overlaps `range`, computed from the raw samples as it is read, each series'
 * stored ids counted as one. Its points are the buckets' last samples at their own times, and
 * a staleness marker that ends a bucket.
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
  const rows = await cancelable(
    computeSampleTierRows(
      sql,
      widthMs,
      { fromMs, toMs },
      selected.map((s) => s.ids),
    ),
    signal,
  );
  const bySeries: SampleTierRow[][] = selected.map(() => []);
  for (const row of rows) bySeries[row.series]?.push(row);
  return selected.map((s, i) => tierSeries(s.labels, bySeries[i]!, widthMs));
}

function tierSeries(labels: Labels, rows: SampleTierRow[], widthMs: number): SourceSeries {
  rows.sort((a, b) => Number(a.bucket_ms) - Number(b.bucket_ms));
  const timestampsMs: number[] = [];
  const values: number[] = [];
  const stale: number[] = [];
  const count: number[] = [];
  const sum: number[] = [];
  const min: number[] = [];
  const max: number[] = [];
  const resetSum: number[] = [];
  for (const row of rows) {
    if (row.count > 0) {
      const exact = row.scale !== unscaled;
      const value = (mantissa: string | null, float: number | null): number =>
        exact ? decodeScaled(Number(mantissa), row.scale) : (float ?? Number.NaN);
      timestampsMs.push(Number(row.last_ms));
      values.push(value(row.last, row.last_f));
      stale.push(0);
      count.push(row.count);
      sum.push(value(row.sum, row.sum_f));
      min.push(value(row.min, row.min_f));
      max.push(value(row.max, row.max_f));
      resetSum.push(value(row.reset_sum, row.reset_sum_f));
    }
    if (row.stale_ms !== null) {
      timestampsMs.push(Number(row.stale_ms));
      values.push(Number.NaN);
      stale.push(1);
    }
  }
  return {
    labels,
    timestampsMs,
    values,
    stale,
    buckets: { widthMs, exactTimes: true, count, sum, min, max, resetSum },
  };
}
