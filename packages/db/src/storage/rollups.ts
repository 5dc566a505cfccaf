import type { StorageMode } from './storage-mode.js';

export type Rollup = 'samples_1m' | 'samples_1h';

/** A half-open time window `[from, to)`; `from` null means from the beginning. */
export type RollupWindow = { rollup: Rollup; from: Date | null; to: Date };

/**
 * One organization's part of a rollup window that could not be computed (its statement failed
 * on its data) and was set aside so every other organization's rollups moved on. Its buckets
 * in the window keep what they held; the watermark moves past them.
 */
export type RollupChunkSetAside = RollupWindow & {
  orgId: string;
  /** The SQLSTATE of the failure, e.g. `22003` (numeric value out of range). */
  sqlState: string | undefined;
  message: string;
};

export type RefreshRollupsResult = {
  mode: StorageMode;
  /** The windows recomputed, in order (a rollup without a new complete bucket is skipped). */
  refreshed: RollupWindow[];
  /** What was set aside (plain PostgreSQL), normally nothing. */
  setAside: RollupChunkSetAside[];
};

/**
 * The magnitude sample values are clamped to in the rollups and in metrics reads: the input
 * policy's bound (`maxMetricMagnitude` of @monitor/schemas, ±1e100, which this package cannot
 * import). Larger values never reach `samples` (/ingest refuses them, the agents' go to
 * unaggregated_samples: `isAggregatable`); samples stored before that, up to ±1.8e308,
 * count as ±1e100 in avg, min, max and sum, so no sum can overflow double precision: a minute
 * holds at most 60 000 samples of a series (time is unique per millisecond), an hour 3.6 million,
 * and 3.6e6 · 1e100 is far below 1.8e308. Averages are sum / count, never PostgreSQL's
 * avg(float8), whose sum of squares overflows far sooner.
 */
export const rollupValueBound = 1e100;

export const minuteMs = 60_000;
export const hourMs = 60 * minuteMs;

/** The start of the bucket of `bucketMs` that contains `time`. */
export function bucketStart(time: Date, bucketMs: number): Date {
  return new Date(Math.floor(time.getTime() / bucketMs) * bucketMs);
}
