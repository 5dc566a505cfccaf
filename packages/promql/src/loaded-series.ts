import type { FloatHistogram } from './float-histogram.js';
import type { Labels } from './labels.js';
import type { SeriesBuckets } from './series-buckets.js';
import type { Point } from './values.js';

/** A selector's series as loaded for one query. */
export type LoadedSeries = {
  metric: Labels;
  timestamps: ArrayLike<number>;
  values: ArrayLike<number>;
  /** 1 at a staleness marker; undefined when the source flags none (every NaN is one). */
  stale: ArrayLike<number> | undefined;
  /** The samples that are no staleness markers, for range selectors: times and values. */
  pointTimes: ArrayLike<number>;
  pointValues: ArrayLike<number>;
  /**
   * The native histograms among `timestamps` (undefined at floats, whose value there is 0), and
   * among `pointTimes`; undefined when the series has none.
   */
  histograms: readonly (FloatHistogram | undefined)[] | undefined;
  pointHistograms: readonly (FloatHistogram | undefined)[] | undefined;
  /** The aggregates of `pointTimes`' buckets when the series comes from a rollup tier. */
  buckets: SeriesBuckets | undefined;
  /** The same samples as points (made on first use). */
  readonly points: Point[];
};
