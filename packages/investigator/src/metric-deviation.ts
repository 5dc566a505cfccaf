import type { IncidentWindows, TimeRange, TimedValue } from './incident-input.js';
import { clamp01, linearFit, mean, standardDeviation } from './statistics.js';

const minuteMs = 60_000;

/** How one metric's incident window compares with its baseline window. */
export type MetricDeviation = {
  metric: string;
  baseline: TimeRange & { mean: number; stddev: number; count: number };
  incident: TimeRange & { mean: number; min: number; max: number; last: number; count: number };
  /**
   * Where the metric stood at the incident window's end: the mean of its last three points, each
   * a bucket's average. Not the value that fired an alert (the alert's `value`).
   */
  recentLevel: number;
  /** (recentLevel - baseline mean) / the baseline's spread. */
  z: number;
  /** Least-squares slope over the incident window, per minute. */
  incidentSlopePerMinute: number;
  /** Line fitted over baseline + incident: a steady trend has r2 near 1. */
  spanSlopePerMinute: number;
  spanR2: number;
  baselineR2: number;
  /** The first point of the run of deviating points that reaches the end, if it does. */
  onsetMs: number | undefined;
  /** 0..1: how clearly the metric moved, as a jump (z) or as a steady trend. */
  significance: number;
};

/**
 * The spread a z-score divides by: never below 1% of the level (nor 0.001), so a flat baseline
 * does not turn the smallest wobble into a huge z.
 */
export function effectiveSpread(stddev: number, level: number): number {
  return Math.max(stddev, Math.abs(level) * 0.01, 0.001);
}

/** A deviation of at least this many spreads counts as real (three-sigma rule). */
export const deviationSigmas = 3;

function within(points: readonly TimedValue[], range: TimeRange): TimedValue[] {
  return points.filter((p) => p.timeMs >= range.fromMs && p.timeMs <= range.toMs);
}

/**
 * Compares the incident window of a series with its baseline. `direction` is +1 when a rise is
 * the problem, -1 for a fall. Undefined when either window has no points.
 */
export function measureDeviation(
  metric: string,
  points: readonly TimedValue[],
  windows: IncidentWindows,
  direction: 1 | -1,
): MetricDeviation | undefined {
  const base = within(points, windows.baseline);
  const incident = within(points, windows.incident);
  if (base.length === 0 || incident.length === 0) return undefined;
  const baseValues = base.map((p) => p.value);
  const incidentValues = incident.map((p) => p.value);
  const baseMean = mean(baseValues);
  const baseStddev = standardDeviation(baseValues);
  const spread = effectiveSpread(baseStddev, baseMean);
  const recentLevel = mean(incidentValues.slice(-3));
  const z = (recentLevel - baseMean) / spread;
  const span = [...base, ...incident];
  const minutes = (list: readonly TimedValue[]) => list.map((p) => p.timeMs / minuteMs);
  const spanFit = linearFit(
    minutes(span),
    span.map((p) => p.value),
  );
  const baseFit = linearFit(minutes(base), baseValues);
  const incidentFit = linearFit(minutes(incident), incidentValues);
  const deviates = (value: number) => direction * (value - baseMean) > deviationSigmas * spread;
  const jump = clamp01((direction * z - 1) / 3);
  const trend = direction * spanFit.slope > 0 ? clamp01((spanFit.r2 - 0.5) / 0.4) : 0;
  return {
    metric,
    baseline: { ...windows.baseline, mean: baseMean, stddev: baseStddev, count: base.length },
    incident: {
      ...windows.incident,
      mean: mean(incidentValues),
      min: Math.min(...incidentValues),
      max: Math.max(...incidentValues),
      last: incidentValues[incidentValues.length - 1] ?? recentLevel,
      count: incident.length,
    },
    recentLevel,
    z,
    incidentSlopePerMinute: incidentFit.slope,
    spanSlopePerMinute: spanFit.slope,
    spanR2: spanFit.r2,
    baselineR2: baseFit.r2,
    onsetMs: onsetOf(span, deviates),
    significance: Math.max(jump, trend),
  };
}

/**
 * Walks back from the last point while points deviate, tolerating two calm points in a row
 * (noise), and returns the earliest deviating point of that run.
 */
export function onsetOf(
  points: readonly TimedValue[],
  deviates: (value: number) => boolean,
): number | undefined {
  let onset: number | undefined;
  let calm = 0;
  for (let i = points.length - 1; i >= 0; i--) {
    const point = points[i];
    if (point === undefined) continue;
    if (deviates(point.value)) {
      onset = point.timeMs;
      calm = 0;
    } else if (onset === undefined || ++calm > 2) {
      break;
    }
  }
  return onset;
}
