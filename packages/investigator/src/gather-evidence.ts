import type { ConsumerChange, Resource } from './consumer-changes.js';
import { consumerChanges } from './consumer-changes.js';
import { containerEvents, recentStarts } from './container-events.js';
import type { ConsumerLevel } from './current-consumers.js';
import { currentConsumers } from './current-consumers.js';
import { snapshotThinness } from './current-hypotheses.js';
import type {
  FocusMetric,
  IncidentEvidence,
  Observation,
  PeerGroup,
  PeerStatus,
  RuleHistorySummary,
} from './incident-evidence.js';
import type { AlertCondition } from '@monitor/schemas';
import type { IncidentInput, TimeRange } from './incident-input.js';
import type { MetricDeviation } from './metric-deviation.js';
import { deviationSigmas, effectiveSpread, measureDeviation } from './metric-deviation.js';
import { mean } from './statistics.js';

// The first job of an analysis: read the incident's input into evidence. Which metric to
// follow, how it deviated, which processes and containers grew or use the resource now, what
// changed, how peers and the rule's history behave. No judgement yet.

function directionOf(condition: AlertCondition | null): 1 | -1 | undefined {
  if (condition === 'greater_than' || condition === 'greater_than_or_equal') return 1;
  if (condition === 'less_than' || condition === 'less_than_or_equal') return -1;
  return undefined;
}

/** Which consumers can explain a metric, judged by its name. */
function resourceWeightsOf(metric: string): Partial<Record<Resource, number>> {
  if (/cpu|load/i.test(metric)) return { cpu: 1 };
  if (/mem|rss|swap|heap|oom/i.test(metric)) return { memory: 1 };
  // Disk, network, application metrics: a consumer may still be behind them, less surely.
  return { cpu: 0.6, memory: 0.6 };
}

function pointsOf(input: { series: IncidentInput['series'] }, metric: string) {
  return input.series.find((s) => s.metric === metric)?.points ?? [];
}

/** Deviation of a metric in whichever direction it moved. */
function deviationEitherWay(
  metric: string,
  input: { series: IncidentInput['series'] },
  windows: IncidentInput['windows'],
): MetricDeviation | undefined {
  const points = pointsOf(input, metric);
  const rising = measureDeviation(metric, points, windows, 1);
  return rising !== undefined && rising.z < 0
    ? measureDeviation(metric, points, windows, -1)
    : rising;
}

/** What choosing the focus metric reads: the host's own series and the alert. */
type FocusInput = Pick<IncidentInput, 'alert' | 'windows' | 'series'>;

/**
 * The metric an analysis of `input` investigates: the alert's, or on demand the one that moved
 * most. The only metric of the peers the analysis reads.
 */
export function focusMetricOf(input: FocusInput): string {
  return chooseFocus(input).metric;
}

function chooseFocus(input: FocusInput): FocusMetric {
  const { windows } = input;
  // A rule file's alert is named after its rule, which is no series of the host: unless the
  // host has a series of that name, the analysis looks for what moved, as on demand.
  const alert =
    input.alert?.condition === null && pointsOf(input, input.alert.metric).length === 0
      ? undefined
      : input.alert;
  if (alert !== undefined) {
    const either = deviationEitherWay(alert.metric, input, windows);
    const direction =
      directionOf(alert.condition) ?? (either !== undefined && either.z < 0 ? -1 : 1);
    return {
      metric: alert.metric,
      direction,
      deviation: measureDeviation(alert.metric, pointsOf(input, alert.metric), windows, direction),
      resourceWeights: resourceWeightsOf(alert.metric),
    };
  }
  let focus: MetricDeviation | undefined;
  for (const { metric } of input.series) {
    const deviation = deviationEitherWay(metric, input, windows);
    if (deviation === undefined) continue;
    if (focus === undefined || Math.abs(deviation.z) > Math.abs(focus.z)) focus = deviation;
  }
  const metric = focus?.metric ?? input.series[0]?.metric ?? 'none';
  return {
    metric,
    direction: focus !== undefined && focus.z < 0 ? -1 : 1,
    deviation: focus,
    resourceWeights: resourceWeightsOf(metric),
  };
}

function overlaps(range: TimeRange, fromMs: number, toMs: number | null): boolean {
  return fromMs <= range.toMs && (toMs ?? Number.POSITIVE_INFINITY) >= range.fromMs;
}

function peerGroups(
  input: IncidentInput,
  focus: FocusMetric,
  peerTagKeys: readonly string[],
): PeerGroup[] {
  const statuses = new Map<string, PeerStatus>();
  for (const peer of input.peers) {
    const deviation = measureDeviation(
      focus.metric,
      pointsOf(peer, focus.metric),
      input.windows,
      focus.direction,
    );
    const alerts = peer.alerts.filter(
      (a) =>
        a.metric === focus.metric && overlaps(input.windows.incident, a.firedAtMs, a.resolvedAtMs),
    );
    const z = deviation?.z;
    statuses.set(peer.id, {
      id: peer.id,
      name: peer.name,
      z,
      alerts,
      deviating: (z !== undefined && focus.direction * z >= deviationSigmas) || alerts.length > 0,
    });
  }
  const groups: PeerGroup[] = [];
  for (const key of peerTagKeys) {
    const value = input.service.tags[key];
    if (value === undefined) continue;
    const members = input.peers
      .filter((peer) => peer.tags[key] === value)
      .map((peer) => statuses.get(peer.id))
      .filter((status): status is PeerStatus => status !== undefined);
    if (members.length === 0) continue;
    const deviatingCount = members.filter((m) => m.deviating).length;
    groups.push({
      key,
      value,
      members,
      deviatingCount,
      strength: (deviatingCount / members.length) * Math.min(1, members.length / 2),
    });
  }
  return groups;
}

function ruleHistory(input: IncidentInput, focus: FocusMetric): RuleHistorySummary | undefined {
  const { alert } = input;
  if (alert === undefined) return undefined;
  const deviation = focus.deviation;
  return {
    ruleName: alert.ruleName,
    threshold: alert.threshold,
    priorFirings: input.ruleHistory.filter(
      (f) =>
        f.alertId !== alert.id &&
        f.firedAtMs < alert.firedAtMs &&
        f.firedAtMs >= input.windows.history.fromMs,
    ),
    thresholdGapSpreads:
      deviation === undefined || alert.threshold === null
        ? undefined
        : Math.abs(alert.threshold - deviation.baseline.mean) /
          effectiveSpread(deviation.baseline.stddev, deviation.baseline.mean),
  };
}

/** Fewer baseline points than this is no baseline: a z-score over 1..4 points means little. */
export const minBaselinePoints = 5;

/** What the analysis can compare, and how much a ranking without a baseline is worth. */
function observe(input: IncidentInput, focus: FocusMetric): Observation {
  const { windows } = input;
  const inSpan = (timeMs: number) =>
    timeMs >= windows.baseline.fromMs && timeMs <= windows.incident.toMs;
  const listing = input.snapshots.filter(
    (s) => inSpan(s.timeMs) && s.processes.length + s.containers.length > 0,
  );
  const snapshots = listing.length;
  const baselineSnapshots = listing.filter((s) => s.timeMs <= windows.baseline.toMs).length;
  const focusPoints = pointsOf(input, focus.metric);
  const baselinePoints = focusPoints.filter(
    (p) => p.timeMs >= windows.baseline.fromMs && p.timeMs <= windows.baseline.toMs,
  ).length;
  const incidentValues = focusPoints
    .filter((p) => p.timeMs >= windows.incident.fromMs && p.timeMs <= windows.incident.toMs)
    .map((p) => p.value);
  const seen = [
    ...input.series.flatMap((s) => s.points.map((p) => p.timeMs)),
    ...input.snapshots.map((s) => s.timeMs),
  ].filter(inSpan);
  // What consumes the host now does not explain a metric that stopped arriving.
  const noData = input.alert?.reason === 'no_data';
  const basis =
    baselinePoints >= minBaselinePoints
      ? 'baseline'
      : input.alert !== undefined && !noData && snapshots > 0
        ? 'current_snapshots'
        : 'none';
  const consumerBasis =
    basis !== 'baseline'
      ? basis
      : baselineSnapshots > 0
        ? 'baseline'
        : snapshots > 0
          ? 'current_snapshots'
          : 'none';
  return {
    basis,
    consumerBasis,
    baselinePoints,
    snapshots,
    firstSeenMs: seen.length === 0 ? undefined : Math.min(...seen),
    firstSnapshotMs: listing.length === 0 ? undefined : Math.min(...listing.map((s) => s.timeMs)),
    recentLevel:
      incidentValues.length === 0
        ? (input.alert?.value ?? undefined)
        : mean(incidentValues.slice(-3)),
    thinness:
      consumerBasis === 'current_snapshots'
        ? snapshotThinness(snapshots)
        : basis === 'baseline'
          ? 1
          : 0,
  };
}

export function gatherEvidence(
  input: IncidentInput,
  peerTagKeys: readonly string[],
): IncidentEvidence {
  const { windows } = input;
  const focus = chooseFocus(input);
  const focusPoints = pointsOf(input, focus.metric);
  const observation = observe(input, focus);
  const consumers: ConsumerChange[] = [];
  const current: ConsumerLevel[] = [];
  const span = input.snapshots.filter(
    (s) => s.timeMs >= windows.baseline.fromMs && s.timeMs <= windows.incident.toMs,
  );
  // Without a baseline, the first snapshot's uptimes still date the containers' starts.
  const firstWithContainers =
    observation.basis === 'current_snapshots'
      ? span.find((s) => s.containers.length > 0)
      : undefined;
  for (const resource of Object.keys(focus.resourceWeights) as Resource[]) {
    for (const kind of ['process', 'container'] as const) {
      if (observation.consumerBasis === 'baseline') {
        consumers.push(...consumerChanges(input.snapshots, windows, kind, resource, focusPoints));
      } else if (observation.consumerBasis === 'current_snapshots') {
        current.push(...currentConsumers(span, kind, resource, focusPoints));
      }
    }
  }
  // Without a baseline of their own, other metrics' z-scores mean nothing.
  const movedMetrics = input.series
    .filter((s) => observation.basis === 'baseline' && s.metric !== focus.metric)
    .map((s) => deviationEitherWay(s.metric, input, windows))
    .filter((d): d is MetricDeviation => d !== undefined && Math.abs(d.z) >= deviationSigmas)
    .sort((a, b) => Math.abs(b.z) - Math.abs(a.z) || a.metric.localeCompare(b.metric))
    .slice(0, 10);
  return {
    host: input.service.name,
    alert: input.alert,
    windows,
    focus,
    observation,
    consumers: consumers.sort((a, b) => b.growth - a.growth || a.name.localeCompare(b.name)),
    current: current.sort((a, b) => b.level - a.level || a.name.localeCompare(b.name)),
    containerEvents: containerEvents(input.snapshots, {
      fromMs: windows.baseline.fromMs,
      toMs: windows.incident.toMs,
    }),
    recentStarts:
      firstWithContainers === undefined
        ? []
        : recentStarts(firstWithContainers, windows.incident.fromMs - 30 * 60_000, 60 * 60_000),
    movedMetrics,
    peerGroups: peerGroups(input, focus, peerTagKeys),
    history: ruleHistory(input, focus),
    // Without a baseline the deviation's onset is measured against a handful of points at best.
    referenceMs:
      (observation.basis === 'baseline' ? focus.deviation?.onsetMs : undefined) ??
      input.alert?.startedAtMs ??
      windows.incident.fromMs,
  };
}
