import type { ConsumerKind, Resource } from './consumer-changes.js';
import { medianGapMs, readingsOf, valueNear } from './consumer-changes.js';
import type { HostSnapshot, TimedValue } from './incident-input.js';
import { correlation, mean } from './statistics.js';

/**
 * What one process (all pids of one name) or container consumes at firing, read from the
 * host's current snapshots alone: what an analysis without a baseline can see.
 */
export type ConsumerLevel = {
  kind: ConsumerKind;
  name: string;
  resource: Resource;
  /** pids at firing (processes only). */
  pids: number[];
  /** Image at firing (containers only). */
  image: string | undefined;
  /** Mean over the last three snapshots (0 where it was absent). */
  level: number;
  /** Mean over the first three snapshots observed. */
  first: number;
  /** Its share of what the listed processes or containers (whichever list holds more) use. */
  share: number;
  /** Correlation of its consumption with the investigated metric over the snapshots observed. */
  correlation: number;
  /** Absent from the first snapshot observed, present in the last one. */
  appeared: boolean;
  /** The first snapshot it was in. */
  firstSeenMs: number;
};

/**
 * The processes (or containers) of `snapshots` by what they use of `resource` at the last
 * snapshot, largest first, with no baseline to compare against. `metricPoints` is the
 * investigated metric, for the correlation. Empty without snapshots.
 */
export function currentConsumers(
  snapshots: readonly HostSnapshot[],
  kind: ConsumerKind,
  resource: Resource,
  metricPoints: readonly TimedValue[],
): ConsumerLevel[] {
  if (snapshots.length === 0) return [];
  const readings = snapshots.map((s) => readingsOf(s, kind, resource));
  const firing = Math.min(3, snapshots.length);
  // The denominator of every share: whichever list accounts for more, since a container's
  // processes are listed as processes too.
  const listedTotal = Math.max(
    ...(['process', 'container'] as const).map((k) =>
      mean(
        snapshots
          .slice(-firing)
          .map((s) => [...readingsOf(s, k, resource).values()].reduce((a, r) => a + r.value, 0)),
      ),
    ),
  );
  const names = new Set<string>();
  for (const reading of readings) for (const name of reading.keys()) names.add(name);
  const toleranceMs = medianGapMs(metricPoints) * 1.5;
  const levels: ConsumerLevel[] = [];
  for (const name of names) {
    const values = readings.map((r) => r.get(name)?.value ?? 0);
    const level = mean(values.slice(-firing));
    const paired: [number, number][] = [];
    snapshots.forEach((snapshot, i) => {
      const metric = valueNear(metricPoints, snapshot.timeMs, toleranceMs);
      if (metric !== undefined) paired.push([values[i] ?? 0, metric]);
    });
    const last = readings[readings.length - 1]?.get(name);
    const firstIndex = readings.findIndex((r) => r.has(name));
    levels.push({
      kind,
      name,
      resource,
      pids: last?.pids ?? [],
      image: last?.image,
      level,
      first: mean(values.slice(0, firing)),
      share: listedTotal > 0 ? Math.min(1, level / listedTotal) : 0,
      correlation: correlation(
        paired.map(([x]) => x),
        paired.map(([, y]) => y),
      ),
      appeared: !(readings[0]?.has(name) ?? false) && last !== undefined,
      firstSeenMs: snapshots[Math.max(0, firstIndex)]?.timeMs ?? 0,
    });
  }
  return levels.sort((a, b) => b.level - a.level || a.name.localeCompare(b.name));
}
