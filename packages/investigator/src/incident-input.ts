import type { AlertCondition, Container, Process } from '@monitor/schemas';

/** A time range in epoch milliseconds, both ends included. */
export type TimeRange = { fromMs: number; toMs: number };

export type TimedValue = { timeMs: number; value: number };

/** One metric of one host, in time order. */
export type MetricSeries = { metric: string; points: TimedValue[] };

/** The containers and processes a host reported with one sample (the ingest wire shapes). */
export type HostSnapshot = { timeMs: number; containers: Container[]; processes: Process[] };

/** The alert an investigation explains. */
export type AlertFacts = {
  id: string;
  ruleId: string;
  ruleName: string;
  /** The rule's metric; for an alert of a rule file, its rule's name (no series of the host). */
  metric: string;
  /** Null for an alert of a rule file: its rule is a PromQL expression. */
  condition: AlertCondition | null;
  threshold: number | null;
  severity: string;
  /** The sample value that fired; null for a no-data alert. */
  value: number | null;
  /** `no_data`: fired because the metric stopped arriving (default `threshold`). */
  reason?: 'threshold' | 'no_data';
  startedAtMs: number;
  firedAtMs: number;
};

/** An earlier firing of the same rule on the same host. */
export type RuleFiring = { alertId: string; firedAtMs: number; resolvedAtMs: number | null };

export type PeerAlert = {
  ruleName: string;
  metric: string;
  severity: string;
  firedAtMs: number;
  resolvedAtMs: number | null;
};

/** A service sharing a tag value (service, region, environment…) with the investigated one. */
type PeerService = {
  id: string;
  name: string;
  tags: Record<string, string>;
  series: MetricSeries[];
  alerts: PeerAlert[];
};

/**
 * The windows an analysis compares: `baseline` ends where `incident` begins, and `history` is
 * the span (24 h) over which the rule's earlier firings count.
 */
export type IncidentWindows = { baseline: TimeRange; incident: TimeRange; history: TimeRange };

/** Everything the engine reasons about, all drawn from stored data. */
export type IncidentInput = {
  service: { id: string; name: string; tags: Record<string, string> };
  /** Absent for an on-demand investigation of a service and time range. */
  alert?: AlertFacts;
  windows: IncidentWindows;
  /** Every metric of the host over baseline + incident. */
  series: MetricSeries[];
  /** The host's snapshots over baseline + incident, in time order. */
  snapshots: HostSnapshot[];
  peers: PeerService[];
  /** Earlier firings of the alert's rule on this host within `windows.history` (not the alert). */
  ruleHistory: RuleFiring[];
};

export type IncidentWindowOptions = {
  /** Length of the baseline window before the incident (default 60). */
  baselineMinutes?: number;
  /** How far before the first breaching sample the incident window opens (default 10): causes
   * such as a deploy precede the symptom. */
  leadMinutes?: number;
};

const minuteMs = 60_000;
const historyMs = 24 * 60 * minuteMs;

/** The windows for an investigation of `fromMs..toMs` (for an alert: started_at..fired_at). */
export function incidentWindows(
  fromMs: number,
  toMs: number,
  options: IncidentWindowOptions = {},
): IncidentWindows {
  const incidentFromMs = fromMs - (options.leadMinutes ?? 10) * minuteMs;
  const baselineFromMs = incidentFromMs - (options.baselineMinutes ?? 60) * minuteMs;
  return {
    baseline: { fromMs: baselineFromMs, toMs: incidentFromMs - 1 },
    incident: { fromMs: incidentFromMs, toMs },
    history: { fromMs: toMs - historyMs, toMs },
  };
}
