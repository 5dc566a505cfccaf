import type { HttpReceiver } from '@monitor/testkit';

// The comparisons of the rule files' differential test (prometheus-rules-oracle.int.test.ts):
// what two sides (ours, Prometheus 2.42) sent to their Alertmanagers, answered and stored.

/** An RFC 3339 time of either side (Prometheus writes nanoseconds) in epoch milliseconds. */
export function epochMs(text: string): number {
  return Date.parse(text.replace(/(\.\d{3})\d+/, '$1'));
}

export function labelsKey(labels: Record<string, string>): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** An alert as posted to Alertmanager's /api/v2/alerts. */
export type SentAlert = {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
};
/** An alert of /api/v1/alerts. */
export type ApiAlert = {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: string;
  activeAt: string;
  value: string;
};
/** A series of a matrix: its floats, or its native histograms (recorded ones). */
export type StoredSeries = {
  metric: Record<string, string>;
  values?: [number, string][];
  histograms?: [number, unknown][];
};
export type Matrix = StoredSeries[];

/** Per alert, its first firing message and its resolution (`endsAt` already past at `nowMs`). */
export function lifecycles(receiver: HttpReceiver, nowMs: number) {
  const byKey = new Map<string, { firing?: SentAlert; resolved?: SentAlert }>();
  for (const request of receiver.accepted()) {
    for (const alert of JSON.parse(request.body.toString()) as SentAlert[]) {
      const entry = byKey.get(labelsKey(alert.labels)) ?? {};
      if (epochMs(alert.endsAt) <= nowMs) entry.resolved = alert;
      else entry.firing ??= alert;
      byKey.set(labelsKey(alert.labels), entry);
    }
  }
  return byKey;
}

/** What differs between the two sides' maps, keys first; `compare` names what else differs. */
export function differences<T>(
  what: string,
  ours: Map<string, T>,
  theirs: Map<string, T>,
  compare: (ours: T, theirs: T) => string[],
): string[] {
  const found: string[] = [];
  for (const key of new Set([...ours.keys(), ...theirs.keys()])) {
    const a = ours.get(key);
    const b = theirs.get(key);
    if (a === undefined || b === undefined) {
      found.push(`${what} ${key}: only ${a === undefined ? 'Prometheus' : 'ours'} has it`);
      continue;
    }
    found.push(...compare(a, b).map((difference) => `${what} ${key}: ${difference}`));
  }
  return found;
}

export function within(what: string, ours: number, theirs: number, toleranceMs: number): string[] {
  return Math.abs(ours - theirs) < toleranceMs ? [] : [`${what} ${ours} against ${theirs}`];
}

/** JSON with every object's keys sorted: an order is no difference. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

export function same(what: string, ours: unknown, theirs: unknown): string[] {
  return canonical(ours) === canonical(theirs)
    ? []
    : [`${what} ${JSON.stringify(ours)} against ${JSON.stringify(theirs)}`];
}

/**
 * How two sides' stored series of a rule differ: ALERTS by its first and last sample,
 * ALERTS_FOR_STATE by its values (`activeAt` in seconds), a recorded series by its values in
 * each phase of the scenario (`phaseOf` a sample time in ms; phase 0 is the warm-up), times
 * within one evaluation interval.
 */
export function storedDifferences(phaseOf: (timeMs: number) => number, intervalMs: number) {
  return (a: StoredSeries, b: StoredSeries): string[] => {
    const times = (s: StoredSeries) => (s.values ?? []).map(([t]) => t * 1000);
    const name = a.metric['__name__'];
    if (name === 'ALERTS') {
      return [
        ...within('first sample', Math.min(...times(a)), Math.min(...times(b)), intervalMs),
        ...within('last sample', Math.max(...times(a)), Math.max(...times(b)), intervalMs),
      ];
    }
    const distinct = (s: StoredSeries) =>
      [...new Set((s.values ?? []).map(([, v]) => Number(v)))].sort();
    if (name === 'ALERTS_FOR_STATE') {
      const [ours, theirs] = [distinct(a), distinct(b)];
      if (ours.length !== theirs.length) return same('activeAt seconds', ours, theirs);
      // Whole seconds, each floored: a second more than the interval apart at most.
      return ours.flatMap((v, i) =>
        within('activeAt', v * 1000, (theirs[i] ?? 0) * 1000, intervalMs + 1000),
      );
    }
    // A recorded histogram by its JSON (count, sum, buckets): equal or not.
    const byPhase = (s: StoredSeries) => {
      const phases = new Map<number, Set<number | string>>();
      const all: [number, number | string][] = [
        ...(s.values ?? []).map(([t, v]): [number, number] => [t, Number(v)]),
        ...(s.histograms ?? []).map(([t, h]): [number, string] => [t, JSON.stringify(h)]),
      ];
      for (const [t, v] of all) {
        const phase = phaseOf(t * 1000);
        if (phase === 0) continue;
        phases.set(phase, (phases.get(phase) ?? new Set()).add(v));
      }
      return [...phases].sort(([x], [y]) => x - y).map(([phase, values]) => [phase, [...values]]);
    };
    return same('values by phase', byPhase(a), byPhase(b));
  };
}
