import type { FloatHistogram } from './float-histogram.js';
import type { LabelMatcher } from './label-matcher.js';
import type { Labels } from './labels.js';
import type { SeriesBuckets } from './series-buckets.js';

/** What the evaluator will do with a selection: lets a source choose how to read. */
type SelectHints = {
  /** The evaluation step, ms (0 for an instant query). */
  stepMs: number;
  /** The range of a range selector, ms (0 for an instant selector, which uses the lookback). */
  rangeMs: number;
  /** The function the selection feeds, when it is a function's argument. */
  func: string | null;
  /**
   * The query's series limit: a source may stop after maxSeries + 1 series (leaving out their
   * samples), since more than maxSeries fails the query anyway.
   */
  maxSeries: number;
  /**
   * The width of the rollup tier to read instead of raw samples (series-buckets.ts); absent or
   * 0 for raw samples. A source without that tier reads raw samples.
   */
  resolutionMs?: number;
};

/**
 * One series as a source returns it: samples in ascending time order, at most one per
 * millisecond. A staleness marker ends the series there until its next sample: the points that
 * `stale` flags (1), their values NaN. Without `stale`, every NaN value is a staleness marker
 * (for sources that hold no other NaN); with it, a NaN it does not flag is a value like any
 * other, as Prometheus tells its StaleNaN from other NaNs by their bits.
 */
export type SourceSeries = {
  labels: Labels;
  timestampsMs: ArrayLike<number>;
  values: ArrayLike<number>;
  stale?: ArrayLike<number>;
  /**
   * How many points are staleness markers, when the source knows without a pass over them (0
   * for samples it decoded and found no NaN in): the evaluator then skips its own count.
   */
  markers?: number;
  /**
   * The series' native histograms, in ascending time order, beside its floats: a float and a
   * histogram at the same time read as the histogram. Staleness markers are floats.
   */
  histograms?: { timestampsMs: ArrayLike<number>; values: readonly FloatHistogram[] };
  /**
   * Set when the series comes from a rollup tier: its points are the buckets' last samples,
   * and these their aggregates (series-buckets.ts), one per point that is no staleness marker.
   */
  buckets?: SeriesBuckets;
};

/** A time range, ms, both ends inclusive (Prometheus' selection semantics). */
export type TimeRange = { startMs: number; endMs: number };

/**
 * The port PromQL reads through. Implementations scope every call to one tenant. They reject
 * with a PromqlError (`canceled` when `signal` aborted) or with their store's own typed errors,
 * which pass through the engine unchanged for the caller to map.
 */
export type SeriesSource = {
  /** Every series matching all `matchers` with its samples within `range`. */
  select(
    matchers: readonly LabelMatcher[],
    range: TimeRange,
    hints: SelectHints,
    signal: AbortSignal,
  ): Promise<SourceSeries[]>;
  /**
   * Label sets of the series that match any of the matcher lists and have a sample within
   * `range`, at most `limit` of them (a caller checks for more by asking one more).
   */
  series(
    matcherSets: readonly (readonly LabelMatcher[])[],
    range: TimeRange,
    limit: number,
    signal: AbortSignal,
  ): Promise<Labels[]>;
  /** Sorted, distinct label names of those series (of every series when `matcherSets` is empty). */
  labelNames(
    matcherSets: readonly (readonly LabelMatcher[])[],
    range: TimeRange,
    signal: AbortSignal,
  ): Promise<string[]>;
  /** Sorted, distinct values of one label over those series. */
  labelValues(
    name: string,
    matcherSets: readonly (readonly LabelMatcher[])[],
    range: TimeRange,
    signal: AbortSignal,
  ): Promise<string[]>;
};
