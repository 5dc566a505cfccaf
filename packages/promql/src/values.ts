import type { FloatHistogram } from './float-histogram.js';
import type { Labels } from './labels.js';

/**
 * A value at a time: a float `v`, or a native histogram `h` (then `v` is 0, which functions
 * that read only floats see, as in Prometheus 2.42).
 */
export type Point = { t: number; v: number; h?: FloatHistogram };

/** One series over time: points in time order, ms. */
export type Series = { metric: Labels; points: Point[] };
export type Matrix = Series[];

/** One series at one instant. */
export type Sample = { metric: Labels; t: number; v: number; h?: FloatHistogram };
export type Vector = Sample[];

/**
 * What a query answers, as Prometheus' API types it, with the warnings its answer carries
 * (approximate reads of rollup tiers) when there are any.
 */
export type QueryValue = (
  | { resultType: 'matrix'; result: Matrix }
  | { resultType: 'vector'; result: Vector }
  | { resultType: 'scalar'; result: { t: number; v: number } }
  | { resultType: 'string'; result: { t: number; v: string } }
) & { warnings?: string[] };
