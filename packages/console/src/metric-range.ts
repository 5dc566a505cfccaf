import type { MetricStep } from './api-types.js';

export const metricRanges = ['1h', '6h', '24h', '7d'] as const;
export type MetricRange = (typeof metricRanges)[number];

const hourMs = 3_600_000;
const rangeMs: Record<MetricRange, number> = {
  '1h': hourMs,
  '6h': 6 * hourMs,
  '24h': 24 * hourMs,
  '7d': 7 * 24 * hourMs,
};

/**
 * The query of a chart over `range` ending at `nowMs`: minutes up to 6 hours (at most 360
 * points), hours above (24 and 168 points), as the API's own default step does; never raw
 * samples.
 */
export function metricQuery(
  range: MetricRange,
  nowMs: number,
): { from: string; to: string; step: MetricStep } {
  const span = rangeMs[range];
  return {
    from: new Date(nowMs - span).toISOString(),
    to: new Date(nowMs).toISOString(),
    step: span <= 6 * hourMs ? '1m' : '1h',
  };
}

/** The range's span, ms. */
export function metricRangeMs(range: MetricRange): number {
  return rangeMs[range];
}

export function isMetricRange(value: string | null): value is MetricRange {
  return value !== null && (metricRanges as readonly string[]).includes(value);
}
