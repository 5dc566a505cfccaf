import type { HostSnapshot, IncidentWindows, TimedValue } from './incident-input.js';
import { deviationSigmas, effectiveSpread, onsetOf } from './metric-deviation.js';
import { correlation, mean, standardDeviation } from './statistics.js';

/** What a process or container consumes, as the agents report it. */
export type Resource = 'cpu' | 'memory';

export type ConsumerKind = 'process' | 'container';

/** How one process (all pids of one name) or container changed between baseline and firing. */
export type ConsumerChange = {
  kind: ConsumerKind;
  name: string;
  resource: Resource;
  /** pids at firing (processes only). */
  pids: number[];
  /** Image at firing (containers only). */
  image: string | undefined;
  /** Mean over the baseline snapshots (0 where it was absent). */
  baseline: number;
  /** Mean over the last three snapshots of the incident window. */
  firing: number;
  growth: number;
  /**
   * Growth relative to the baseline mean or, when larger, to the baseline's first readings (with
   * a floor, so 0 → 5% is not infinite).
   */
  relativeGrowth: number;
  /** Correlation of its consumption with the investigated metric over baseline + incident. */
  correlation: number;
  /** When it began to exceed its baseline for good. */
  onsetMs: number | undefined;
  /** Absent from every baseline snapshot, present at firing. */
  appeared: boolean;
};

/** Floors of the relative growth: 5 CPU points, 100 MiB. */
export const growthFloor: Record<Resource, number> = { cpu: 5, memory: 100 * 1024 * 1024 };

type Reading = { value: number; pids: number[]; image: string | undefined };

export function readingsOf(
  snapshot: HostSnapshot,
  kind: ConsumerKind,
  resource: Resource,
): Map<string, Reading> {
  const readings = new Map<string, Reading>();
  if (kind === 'process') {
    for (const process of snapshot.processes) {
      const value = (resource === 'cpu' ? process.cpu_percent : process.memory_rss) ?? 0;
      const reading = readings.get(process.name) ?? { value: 0, pids: [], image: undefined };
      reading.value += value;
      reading.pids.push(process.pid);
      readings.set(process.name, reading);
    }
  } else {
    for (const container of snapshot.containers) {
      const value = (resource === 'cpu' ? container.cpu_percent : container.memory_usage) ?? 0;
      const reading = readings.get(container.name) ?? { value: 0, pids: [], image: undefined };
      reading.value += value;
      reading.image = container.image ?? reading.image;
      readings.set(container.name, reading);
    }
  }
  return readings;
}

/** The value of `series` nearest to `timeMs`, if one lies within `toleranceMs`. */
export function valueNear(
  series: readonly TimedValue[],
  timeMs: number,
  toleranceMs: number,
): number | undefined {
  let lo = 0;
  let hi = series.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((series[mid]?.timeMs ?? 0) < timeMs) lo = mid + 1;
    else hi = mid;
  }
  let best: TimedValue | undefined;
  for (const candidate of [series[lo - 1], series[lo]]) {
    if (candidate === undefined) continue;
    if (best === undefined || Math.abs(candidate.timeMs - timeMs) < Math.abs(best.timeMs - timeMs))
      best = candidate;
  }
  return best !== undefined && Math.abs(best.timeMs - timeMs) <= toleranceMs
    ? best.value
    : undefined;
}

/**
 * Every process (or container) seen over baseline + incident and how its consumption of
 * `resource` changed, by growth, largest first. `metricPoints` is the investigated metric, for
 * the correlation. Empty when there are no snapshots in either window.
 */
export function consumerChanges(
  snapshots: readonly HostSnapshot[],
  windows: IncidentWindows,
  kind: ConsumerKind,
  resource: Resource,
  metricPoints: readonly TimedValue[],
): ConsumerChange[] {
  const span = snapshots.filter(
    (s) => s.timeMs >= windows.baseline.fromMs && s.timeMs <= windows.incident.toMs,
  );
  const baselineCount = span.filter((s) => s.timeMs <= windows.baseline.toMs).length;
  const incidentCount = span.length - baselineCount;
  if (baselineCount === 0 || incidentCount === 0) return [];
  const readings = span.map((s) => readingsOf(s, kind, resource));
  const names = new Set<string>();
  for (const reading of readings) for (const name of reading.keys()) names.add(name);
  const toleranceMs = medianGapMs(metricPoints) * 1.5;
  const changes: ConsumerChange[] = [];
  for (const name of names) {
    const values = readings.map((r) => r.get(name)?.value ?? 0);
    const baseValues = values.slice(0, baselineCount);
    const baseline = mean(baseValues);
    const firing = mean(values.slice(-Math.min(3, incidentCount)));
    const growth = firing - baseline;
    // A steady climb (a leak) lifts the baseline mean itself: the growth since the baseline's
    // start shows it better.
    const earliest = mean(baseValues.slice(0, 3));
    const paired: [number, number][] = [];
    span.forEach((snapshot, i) => {
      const metric = valueNear(metricPoints, snapshot.timeMs, toleranceMs);
      if (metric !== undefined) paired.push([values[i] ?? 0, metric]);
    });
    const spread = effectiveSpread(standardDeviation(baseValues), baseline);
    const last = readings[readings.length - 1]?.get(name);
    changes.push({
      kind,
      name,
      resource,
      pids: last?.pids ?? [],
      image: last?.image,
      baseline,
      firing,
      growth,
      relativeGrowth: Math.max(
        growth / Math.max(baseline, growthFloor[resource]),
        (firing - earliest) / Math.max(earliest, growthFloor[resource]),
      ),
      correlation: correlation(
        paired.map(([x]) => x),
        paired.map(([, y]) => y),
      ),
      onsetMs: onsetOf(
        span.map((s, i) => ({ timeMs: s.timeMs, value: values[i] ?? 0 })),
        (value) => value - baseline > deviationSigmas * spread,
      ),
      appeared: readings.slice(0, baselineCount).every((r) => !r.has(name)) && last !== undefined,
    });
  }
  return changes.sort((a, b) => b.growth - a.growth || a.name.localeCompare(b.name));
}

/** The typical interval between points (60 s when unknown). */
export function medianGapMs(points: readonly TimedValue[]): number {
  const gaps: number[] = [];
  for (let i = 1; i < points.length; i++) {
    gaps.push((points[i]?.timeMs ?? 0) - (points[i - 1]?.timeMs ?? 0));
  }
  if (gaps.length === 0) return 60_000;
  gaps.sort((a, b) => a - b);
  return Math.max(1000, gaps[gaps.length >> 1] ?? 60_000);
}
