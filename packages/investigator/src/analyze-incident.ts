import type {
  InvestigationFinding,
  InvestigationRecommendation,
  InvestigationReport,
  InvestigationTimelineEntry,
} from '@monitor/db';
import type { ConsumerChange, Resource } from './consumer-changes.js';
import { consumerChanges } from './consumer-changes.js';
import { containerEvents, recentStarts } from './container-events.js';
import type { ConsumerLevel } from './current-consumers.js';
import { currentConsumers } from './current-consumers.js';
import { snapshotConfidenceCap, snapshotThinness } from './current-hypotheses.js';
import { clockTime, formatResource, iso, resourceWord } from './format.js';
import type {
  CauseKind,
  FocusMetric,
  Hypothesis,
  IncidentEvidence,
  Observation,
  PeerGroup,
  PeerStatus,
  RuleHistorySummary,
} from './incident-evidence.js';
import type { AlertCondition } from '@monitor/schemas';
import type { AlertFacts, IncidentInput, TimeRange } from './incident-input.js';
import type { MetricDeviation } from './metric-deviation.js';
import { deviationSigmas, effectiveSpread, measureDeviation } from './metric-deviation.js';
import { rankHypotheses } from './rank-hypotheses.js';
import { clamp01, mean, round } from './statistics.js';

export type AnalyzeOptions = {
  /** Tags whose shared value makes another service a peer (default service, region, environment, env). */
  peerTagKeys?: readonly string[];
  /** Below this confidence the verdict is `inconclusive` (default 0.4). */
  inconclusiveBelow?: number;
};

/** The machine-checkable outcome: what was named, or inconclusive. */
export type Verdict = {
  kind: CauseKind | 'inconclusive';
  /** The named process, container, `tag=value`, rule or metric; null when inconclusive. */
  subject: string | null;
  confidence: number;
};

export type IncidentAnalysis = {
  /** What is stored, in the contract's shapes. */
  report: InvestigationReport;
  verdict: Verdict;
  /** Every hypothesis considered, strongest first. */
  hypotheses: Hypothesis[];
};

export const defaultPeerTagKeys: readonly string[] = ['service', 'region', 'environment', 'env'];
const defaultInconclusiveBelow = 0.4;
/** The method of a purely computed analysis (the narrator may extend it). */
const statisticalMethod = 'statistical';

/**
 * Explains an incident from stored evidence: how the metric deviated, which processes and
 * containers grew, what changed (deploys, restarts), whether peers move too, whether the rule
 * flaps; ranks the hypotheses and names one only when its evidence is strong enough.
 * Deterministic: no I/O, no clock.
 */
export function analyzeIncident(
  input: IncidentInput,
  options: AnalyzeOptions = {},
): IncidentAnalysis {
  const evidence = gatherEvidence(input, options.peerTagKeys ?? defaultPeerTagKeys);
  const hypotheses = rankHypotheses(evidence);
  const [top, second] = hypotheses;
  const confidence =
    top === undefined ? 0 : clamp01(top.score * (1 - 0.5 * ((second?.score ?? 0) / top.score)));
  const named =
    top !== undefined && confidence >= (options.inconclusiveBelow ?? defaultInconclusiveBelow);
  const verdict: Verdict = named
    ? { kind: top.kind, subject: top.subject, confidence: round(confidence) }
    : { kind: 'inconclusive', subject: null, confidence: round(confidence) };
  return {
    report: {
      findings: buildFindings(evidence, hypotheses, verdict),
      analysis: {
        summary: buildSummary(evidence, hypotheses, verdict),
        root_cause: named ? top.statement : 'inconclusive',
        confidence: verdict.confidence,
        method: statisticalMethod,
      },
      timeline: buildTimeline(evidence, hypotheses),
      recommendations: buildRecommendations(evidence, hypotheses, verdict),
    },
    verdict,
    hypotheses,
  };
}

function directionOf(condition: AlertCondition): 1 | -1 | undefined {
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
  const { alert, windows } = input;
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
      deviation === undefined
        ? undefined
        : Math.abs(alert.threshold - deviation.baseline.mean) /
          effectiveSpread(deviation.baseline.stddev, deviation.baseline.mean),
  };
}

/** Fewer baseline points than this is no baseline: a z-score over 1..4 points means little. */
const minBaselinePoints = 5;

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

function gatherEvidence(input: IncidentInput, peerTagKeys: readonly string[]): IncidentEvidence {
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

function windowOf(range: TimeRange): { from: string; to: string } {
  return { from: iso(range.fromMs), to: iso(range.toMs) };
}

function deviationEvidence(d: MetricDeviation): Record<string, unknown> {
  return {
    metric: d.metric,
    baseline: {
      ...windowOf(d.baseline),
      mean: round(d.baseline.mean),
      stddev: round(d.baseline.stddev),
      samples: d.baseline.count,
    },
    incident: {
      ...windowOf(d.incident),
      mean: round(d.incident.mean),
      min: round(d.incident.min),
      max: round(d.incident.max),
      last: round(d.incident.last),
      samples: d.incident.count,
    },
    recent_average: round(d.recentLevel),
    z: round(d.z),
    incident_slope_per_minute: round(d.incidentSlopePerMinute),
    onset: d.onsetMs === undefined ? null : iso(d.onsetMs),
  };
}

function describeDeviation(d: MetricDeviation, host: string, alert?: AlertFacts): string {
  const moved = d.recentLevel >= d.baseline.mean ? 'rose' : 'fell';
  const onset = d.onsetMs === undefined ? '' : `, deviating since ${clockTime(d.onsetMs)}`;
  const fired =
    alert?.value === null || alert === undefined
      ? ''
      : `; the alert fired on ${formatValue(alert.value)}`;
  return (
    `${d.metric} on ${host} ${moved} from ${round(d.baseline.mean)} (baseline mean, ` +
    `${clockTime(d.baseline.fromMs)}–${clockTime(d.baseline.toMs)}) to an average of ` +
    `${round(d.recentLevel)} by ${clockTime(d.incident.toMs)}, ${round(Math.abs(d.z))} baseline ` +
    `spreads${onset}${fired}`
  );
}

/** An alert's value as stored: exact, not rounded like the averages. */
function formatValue(value: number): string {
  return String(value);
}

/**
 * The moment the levels are read at: an alert's firing, or, for an investigation of a service and
 * a time range, the end of that range (no alert fired).
 */
function atMoment(evidence: IncidentEvidence): string {
  return evidence.alert === undefined ? 'at the end of the range' : 'at firing';
}

/** Why there is no baseline, with the numbers. */
function describeMissingBaseline(evidence: IncidentEvidence): string {
  const { observation, focus, host, alert } = evidence;
  const average =
    observation.recentLevel === undefined
      ? ''
      : `averaged ${round(observation.recentLevel)} over the last minutes ${
          evidence.alert === undefined ? 'of the range' : 'before firing'
        }`;
  const level =
    alert?.value === null || alert === undefined
      ? average === ''
        ? ''
        : `${focus.metric} on ${host} ${average}. `
      : `${focus.metric} on ${host} was ${formatValue(alert.value)} at firing (threshold ` +
        `${alert.threshold})${average === '' ? '' : `, and ${average}`}. `;
  const seen =
    observation.firstSeenMs === undefined
      ? `${host} has no samples or snapshots in the windows read`
      : `${host} was first seen at ${clockTime(observation.firstSeenMs)} in the windows read`;
  return (
    `${level}No baseline: ${observation.baselinePoints} sample${observation.baselinePoints === 1 ? '' : 's'} ` +
    `of ${focus.metric} before the incident window (${minBaselinePoints} needed); ${seen}.`
  );
}

function buildSummary(
  evidence: IncidentEvidence,
  hypotheses: Hypothesis[],
  verdict: Verdict,
): string {
  const { deviation, metric } = evidence.focus;
  const { observation } = evidence;
  const top = hypotheses[0];
  if (observation.basis === 'none') {
    return (
      `${describeMissingBaseline(evidence)} With no baseline and ` +
      (evidence.alert === undefined
        ? 'no alert, nothing says what went wrong'
        : evidence.alert.reason === 'no_data'
          ? `a no-data alert, what uses ${evidence.host}'s resources now cannot explain samples that stopped`
          : `no process or container snapshot of ${evidence.host}, nothing shows what uses the resource`) +
      `: the analysis abstains (inconclusive, confidence ${verdict.confidence}) rather than guess.`
    );
  }
  const what =
    observation.basis === 'current_snapshots'
      ? `${describeMissingBaseline(evidence)} Ranked from the ${observation.snapshots} current ` +
        `snapshot${observation.snapshots === 1 ? '' : 's'} alone (what uses the resource now, ` +
        `restarts, image changes), every score scaled by ${round(observation.thinness)} ` +
        `(${snapshotConfidenceCap} × ${observation.snapshots}/${observation.snapshots + 1}): ` +
        `current use says who consumes, not what changed.`
      : deviation === undefined
        ? `No samples of ${metric} on ${evidence.host} cover both the baseline and the incident window.`
        : `${describeDeviation(deviation, evidence.host, evidence.alert)}.${
            observation.consumerBasis === 'current_snapshots'
              ? ` No process or container snapshot falls in the baseline: processes and ` +
                `containers are ranked by what they use now, their scores scaled by ` +
                `${round(observation.thinness)} (${snapshotConfidenceCap} × ` +
                `${observation.snapshots}/${observation.snapshots + 1}).`
              : ''
          }`;
  if (verdict.kind !== 'inconclusive' && top !== undefined) {
    return `${what} Most likely cause: ${top.statement} (confidence ${verdict.confidence}).`;
  }
  const strongest =
    top === undefined
      ? ''
      : ` The strongest candidate, ${top.kind} ${top.subject}, scores only ${round(top.score)}.`;
  return (
    `${what} No process, container, deploy, restart, peer or rule history explains it well ` +
    `enough: inconclusive (confidence ${verdict.confidence}).${strongest}`
  );
}

function consumerEvidence(c: ConsumerChange): Record<string, unknown> {
  return {
    [c.kind]: c.name,
    ...(c.kind === 'process' ? { pids: c.pids } : { image: c.image ?? null }),
    baseline: round(c.baseline),
    firing: round(c.firing),
    growth: round(c.growth),
    correlation: round(c.correlation),
    appeared: c.appeared,
    onset: c.onsetMs === undefined ? null : iso(c.onsetMs),
  };
}

function levelEvidence(c: ConsumerLevel): Record<string, unknown> {
  return {
    [c.kind]: c.name,
    ...(c.kind === 'process' ? { pids: c.pids } : { image: c.image ?? null }),
    firing: round(c.level),
    first: round(c.first),
    share_of_listed: round(c.share),
    correlation: round(c.correlation),
    appeared: c.appeared,
    first_seen: iso(c.firstSeenMs),
  };
}

/** What the verdict stands on, in the first finding. */
function basisEvidence(evidence: IncidentEvidence): Record<string, unknown> {
  const { observation } = evidence;
  return observation.basis === 'baseline'
    ? observation.consumerBasis === 'current_snapshots'
      ? {
          basis: 'baseline',
          consumer_basis: 'current_snapshots',
          snapshots: observation.snapshots,
          thinness: round(observation.thinness),
        }
      : { basis: 'baseline' }
    : {
        basis: observation.basis,
        baseline_points: observation.baselinePoints,
        snapshots: observation.snapshots,
        thinness: round(observation.thinness),
      };
}

function missingBaselineFinding(evidence: IncidentEvidence): InvestigationFinding {
  const { observation, focus, windows, alert } = evidence;
  return {
    title: `No baseline for ${focus.metric} on ${evidence.host}`,
    detail: describeMissingBaseline(evidence),
    evidence: {
      metric: focus.metric,
      basis: observation.basis,
      baseline: windowOf(windows.baseline),
      incident: windowOf(windows.incident),
      baseline_points: observation.baselinePoints,
      minimum_baseline_points: minBaselinePoints,
      first_seen: observation.firstSeenMs === undefined ? null : iso(observation.firstSeenMs),
      recent_average: observation.recentLevel === undefined ? null : round(observation.recentLevel),
      value_at_firing: alert?.value ?? null,
      threshold: alert?.threshold ?? null,
      snapshots: observation.snapshots,
      thinness: round(observation.thinness),
      confidence_cap: observation.basis === 'current_snapshots' ? snapshotConfidenceCap : 0,
    },
  };
}

const causeLabel: Record<CauseKind, (subject: string) => string> = {
  process: (subject) => `process ${subject}`,
  container: (subject) => `container ${subject}`,
  deploy: (subject) => `deploy of container ${subject}`,
  container_restart: (subject) => `container ${subject} (re)starting`,
  fleet_wide: (subject) => `fleet-wide across ${subject}`,
  flapping_rule: (subject) => `rule ${subject} flapping`,
  resource_trend: (subject) => `steady growth of ${subject}`,
};

function buildFindings(
  evidence: IncidentEvidence,
  hypotheses: Hypothesis[],
  verdict: Verdict,
): InvestigationFinding[] {
  const findings: InvestigationFinding[] = [];
  const top = hypotheses[0];
  const ranked = hypotheses
    .slice(0, 5)
    .map((h) => ({ kind: h.kind, subject: h.subject, score: round(h.score) }));
  if (verdict.kind !== 'inconclusive' && top !== undefined) {
    findings.push({
      title: `Likely cause: ${causeLabel[top.kind](top.subject)}`,
      detail: top.statement,
      evidence: {
        cause: { kind: top.kind, subject: top.subject },
        confidence: verdict.confidence,
        ranked,
        ...top.evidence,
        ...basisEvidence(evidence),
      },
    });
  } else {
    findings.push({
      title:
        evidence.observation.basis === 'none'
          ? 'Abstained: no baseline, no snapshot'
          : 'No conclusive cause',
      detail:
        evidence.observation.basis === 'none'
          ? `${evidence.host} has neither a baseline nor a process or container snapshot to reason from.`
          : top === undefined
            ? 'No process, container, deploy, restart, peer or rule history points to a cause.'
            : `The strongest candidate, ${top.statement}, scores ${round(top.score)}: too weak to name.`,
      evidence: { cause: null, confidence: verdict.confidence, ranked, ...basisEvidence(evidence) },
    });
  }
  const { deviation, metric } = evidence.focus;
  findings.push(
    evidence.observation.basis !== 'baseline'
      ? missingBaselineFinding(evidence)
      : deviation === undefined
        ? {
            title: `No samples of ${metric} to compare`,
            detail: `${evidence.host} has no ${metric} samples in the baseline or the incident window.`,
            evidence: {
              metric,
              baseline: windowOf(evidence.windows.baseline),
              incident: windowOf(evidence.windows.incident),
            },
          }
        : {
            title: `${metric} ${deviation.recentLevel >= deviation.baseline.mean ? 'rose' : 'fell'} from ${round(deviation.baseline.mean)} to an average of ${round(deviation.recentLevel)}`,
            detail: `${describeDeviation(deviation, evidence.host, evidence.alert)}; slope in the incident window ${round(deviation.incidentSlopePerMinute)} per minute.`,
            evidence: deviationEvidence(deviation),
          },
  );
  for (const resource of Object.keys(evidence.focus.resourceWeights) as Resource[]) {
    const of = (kind: 'process' | 'container') =>
      evidence.consumers.filter((c) => c.kind === kind && c.resource === resource);
    const topAtFiring = [...of('process'), ...of('container')]
      .sort((a, b) => b.firing - a.firing || a.name.localeCompare(b.name))
      .slice(0, 5);
    if (topAtFiring.length === 0) continue;
    findings.push({
      title: `Top ${resourceWord(resource)} consumers ${atMoment(evidence)}`,
      detail: topAtFiring
        .map((c) => `${c.kind} ${c.name} ${formatResource(resource, c.firing)}`)
        .join(', '),
      evidence: {
        resource,
        window: windowOf(evidence.windows.incident),
        consumers: topAtFiring.map(consumerEvidence),
      },
    });
    const grown = [...of('process'), ...of('container')]
      .filter((c) => c.growth > 0 && c.relativeGrowth >= 0.2)
      .sort((a, b) => b.growth - a.growth || a.name.localeCompare(b.name))
      .slice(0, 3);
    findings.push({
      title: `Largest ${resourceWord(resource)} growth against the baseline`,
      detail:
        grown.length === 0
          ? `No process or container grew its ${resourceWord(resource)} by 20% or more.`
          : grown
              .map(
                (c) =>
                  `${c.kind} ${c.name}: ${formatResource(resource, c.baseline)} → ${formatResource(resource, c.firing)}`,
              )
              .join('; '),
      evidence: {
        resource,
        baseline: windowOf(evidence.windows.baseline),
        incident: windowOf(evidence.windows.incident),
        consumers: grown.map(consumerEvidence),
      },
    });
  }
  for (const resource of Object.keys(evidence.focus.resourceWeights) as Resource[]) {
    const top5 = evidence.current.filter((c) => c.resource === resource).slice(0, 5);
    if (top5.length === 0) continue;
    findings.push({
      title: `Top ${resourceWord(resource)} consumers ${atMoment(evidence)} (${evidence.observation.basis === 'baseline' ? 'no snapshot in the baseline' : 'no baseline'})`,
      detail: top5
        .map((c) => `${c.kind} ${c.name} ${formatResource(resource, c.level)}`)
        .join(', '),
      evidence: {
        resource,
        basis: 'current_snapshots',
        window: {
          from: iso(evidence.observation.firstSnapshotMs ?? evidence.windows.incident.fromMs),
          to: iso(evidence.windows.incident.toMs),
        },
        snapshots: evidence.observation.snapshots,
        consumers: top5.map(levelEvidence),
      },
    });
  }
  if (evidence.recentStarts.length > 0) {
    findings.push({
      title: `${evidence.recentStarts.length} container${evidence.recentStarts.length === 1 ? '' : 's'} started shortly before the first snapshot`,
      detail: evidence.recentStarts
        .map(
          (r) =>
            `${r.container} '${r.status}' at ${clockTime(r.seenAtMs)} (started about ${clockTime(r.startedAtMs)})`,
        )
        .join('; '),
      evidence: {
        dated_by: 'uptime',
        containers: evidence.recentStarts.map((r) => ({
          container: r.container,
          image: r.image ?? null,
          status: r.status,
          seen_at: iso(r.seenAtMs),
          started_at_estimate: iso(r.startedAtMs),
        })),
        elder: evidence.recentStarts[0]?.elder.container ?? null,
      },
    });
  }
  const changes = evidence.containerEvents.filter(
    (e) => e.atMs >= evidence.windows.incident.fromMs - 30 * 60_000,
  );
  if (changes.length > 0) {
    findings.push({
      title: `${changes.length} container change${changes.length === 1 ? '' : 's'} around the incident`,
      detail: changes
        .slice(0, 10)
        .map((e) => `${clockTime(e.atMs)} ${e.type.replace('container_', '')} ${e.container}`)
        .join('; '),
      evidence: {
        window: {
          from: iso(evidence.windows.incident.fromMs - 30 * 60_000),
          to: iso(evidence.windows.incident.toMs),
        },
        events: changes.map((e) => ({
          type: e.type,
          at: iso(e.atMs),
          container: e.container,
          image: e.image ?? null,
          ...(e.previousImage === undefined ? {} : { previous_image: e.previousImage }),
          ...(e.status === undefined ? {} : { status: e.status }),
          ...(e.previousStatus === undefined ? {} : { previous_status: e.previousStatus }),
        })),
      },
    });
  }
  if (evidence.movedMetrics.length > 0) {
    findings.push({
      title: `${evidence.movedMetrics.length} other metric${evidence.movedMetrics.length === 1 ? '' : 's'} of ${evidence.host} moved`,
      detail: evidence.movedMetrics
        .map(
          (d) =>
            `${d.metric} ${round(d.baseline.mean)} → ${round(d.recentLevel)} (z ${round(d.z)})`,
        )
        .join('; '),
      evidence: { metrics: evidence.movedMetrics.map(deviationEvidence) },
    });
  }
  if (evidence.peerGroups.length > 0) {
    findings.push({
      title: 'Peers sharing tags',
      detail: evidence.peerGroups
        .map(
          (g) => `${g.key}=${g.value}: ${g.deviatingCount} of ${g.members.length} deviate or alert`,
        )
        .join('; '),
      evidence: {
        metric,
        window: windowOf(evidence.windows.incident),
        groups: evidence.peerGroups.map((g) => ({
          tag: { key: g.key, value: g.value },
          deviating: g.deviatingCount,
          members: g.members.map((m) => ({
            name: m.name,
            z: m.z === undefined ? null : round(m.z),
            alerts: m.alerts.map((a) => ({ rule: a.ruleName, fired_at: iso(a.firedAtMs) })),
            deviating: m.deviating,
          })),
        })),
      },
    });
  }
  if (evidence.history !== undefined) {
    const { history } = evidence;
    findings.push({
      title: `Rule ${history.ruleName} fired ${history.priorFirings.length} time${history.priorFirings.length === 1 ? '' : 's'} in the previous 24 h`,
      detail:
        history.thresholdGapSpreads === undefined
          ? `Threshold ${history.threshold}.`
          : `Threshold ${history.threshold} is ${round(history.thresholdGapSpreads)} baseline spreads from the normal level.`,
      evidence: {
        window: windowOf(evidence.windows.history),
        firings: history.priorFirings.map((f) => ({
          alert_id: f.alertId,
          fired_at: iso(f.firedAtMs),
          resolved_at: f.resolvedAtMs === null ? null : iso(f.resolvedAtMs),
        })),
        threshold: history.threshold,
        threshold_gap_spreads:
          history.thresholdGapSpreads === undefined ? null : round(history.thresholdGapSpreads),
      },
    });
  }
  return findings;
}

/** Event kinds in the order they are listed when they share a timestamp. */
const timelineOrder = [
  'container_started',
  'host_first_seen',
  'rule_fired_before',
  'container_image_changed',
  'container_appeared',
  'container_disappeared',
  'container_status_changed',
  'container_restarted',
  'process_started',
  'consumer_growth_began',
  'metric_deviation_began',
  'metric_moved',
  'peer_alert_fired',
  'alert_started',
  'alert_fired',
];

function buildTimeline(
  evidence: IncidentEvidence,
  hypotheses: Hypothesis[],
): InvestigationTimelineEntry[] {
  const entries: (InvestigationTimelineEntry & { atMs: number })[] = [];
  const add = (atMs: number, type: string, description: string, data: Record<string, unknown>) =>
    entries.push({ atMs, at: iso(atMs), type, description, data });
  const { windows, alert, focus } = evidence;
  for (const firing of evidence.history?.priorFirings.slice(-10) ?? []) {
    add(
      firing.firedAtMs,
      'rule_fired_before',
      `Rule ${evidence.history?.ruleName ?? ''} fired earlier`,
      {
        alert_id: firing.alertId,
        resolved_at: firing.resolvedAtMs === null ? null : iso(firing.resolvedAtMs),
      },
    );
  }
  for (const event of evidence.containerEvents) {
    if (event.atMs < windows.incident.fromMs - 30 * 60_000) continue;
    const what =
      event.type === 'container_image_changed'
        ? `Container ${event.container} image ${event.previousImage ?? '?'} → ${event.image ?? '?'}`
        : `Container ${event.container} ${event.type.replace('container_', '').replace('_', ' ')}${event.status === undefined ? '' : ` (${event.status})`}`;
    add(event.atMs, event.type, what, {
      container: event.container,
      image: event.image ?? null,
      ...(event.previousImage === undefined ? {} : { previous_image: event.previousImage }),
      ...(event.status === undefined ? {} : { status: event.status }),
      ...(event.previousStatus === undefined ? {} : { previous_status: event.previousStatus }),
    });
  }
  const named = new Set(hypotheses.slice(0, 3).map((h) => `${h.kind}:${h.subject}`));
  const notable = evidence.consumers.filter(
    (c) =>
      c.onsetMs !== undefined &&
      c.relativeGrowth >= 0.2 &&
      (named.has(`${c.kind}:${c.name}`) || c.appeared),
  );
  for (const c of notable) {
    const onset = c.onsetMs as number;
    add(
      onset,
      c.appeared ? 'process_started' : 'consumer_growth_began',
      `${c.kind} ${c.name} ${c.appeared ? 'appeared' : 'began to grow'}: ${resourceWord(c.resource)} ${formatResource(c.resource, c.baseline)} → ${formatResource(c.resource, c.firing)}`,
      consumerEvidence(c),
    );
  }
  if (evidence.observation.basis !== 'baseline' && evidence.observation.firstSeenMs !== undefined) {
    add(
      evidence.observation.firstSeenMs,
      'host_first_seen',
      `${evidence.host} first seen (no earlier sample in the windows read)`,
      {
        baseline_points: evidence.observation.baselinePoints,
        snapshots: evidence.observation.snapshots,
      },
    );
  }
  for (const start of evidence.recentStarts) {
    add(
      start.startedAtMs,
      'container_started',
      `Container ${start.container} started (about: '${start.status}' at ${clockTime(start.seenAtMs)})`,
      { container: start.container, image: start.image ?? null, status: start.status },
    );
  }
  for (const c of evidence.current) {
    if (!c.appeared || !named.has(`${c.kind}:${c.name}`)) continue;
    add(
      c.firstSeenMs,
      'process_started',
      `${c.kind} ${c.name} appeared: ${resourceWord(c.resource)} ${formatResource(c.resource, c.level)} ${atMoment(evidence)}`,
      levelEvidence(c),
    );
  }
  if (evidence.observation.basis === 'baseline' && focus.deviation?.onsetMs !== undefined) {
    add(
      focus.deviation.onsetMs,
      'metric_deviation_began',
      `${focus.metric} left its baseline range`,
      {
        metric: focus.metric,
        baseline_mean: round(focus.deviation.baseline.mean),
        baseline_stddev: round(focus.deviation.baseline.stddev),
      },
    );
  }
  for (const moved of evidence.movedMetrics) {
    if (moved.onsetMs === undefined) continue;
    add(moved.onsetMs, 'metric_moved', `${moved.metric} left its baseline range`, {
      metric: moved.metric,
      baseline_mean: round(moved.baseline.mean),
      recent_average: round(moved.recentLevel),
      z: round(moved.z),
    });
  }
  const seen = new Set<string>();
  for (const group of evidence.peerGroups) {
    for (const member of group.members) {
      for (const peerAlert of member.alerts) {
        const key = `${member.id}:${peerAlert.firedAtMs}:${peerAlert.ruleName}`;
        if (seen.has(key)) continue;
        seen.add(key);
        add(
          peerAlert.firedAtMs,
          'peer_alert_fired',
          `${member.name}: ${peerAlert.ruleName} fired`,
          {
            service: member.name,
            rule: peerAlert.ruleName,
            metric: peerAlert.metric,
            severity: peerAlert.severity,
          },
        );
      }
    }
  }
  if (alert !== undefined) {
    const noData = alert.reason === 'no_data';
    add(
      alert.startedAtMs,
      'alert_started',
      noData
        ? `${alert.metric} stopped arriving (no-data rule)`
        : `${alert.metric} breached ${alert.threshold} (${alert.condition})`,
      {
        rule: alert.ruleName,
        threshold: alert.threshold,
        ...(noData ? { reason: 'no_data' } : {}),
      },
    );
    add(
      alert.firedAtMs,
      'alert_fired',
      alert.value === null
        ? `${alert.ruleName} fired: no data`
        : `${alert.ruleName} fired at ${round(alert.value)}`,
      { alert_id: alert.id, value: alert.value, severity: alert.severity },
    );
  }
  return entries
    .sort(
      (a, b) => a.atMs - b.atMs || timelineOrder.indexOf(a.type) - timelineOrder.indexOf(b.type),
    )
    .map(({ atMs: _atMs, ...entry }) => entry);
}

function buildRecommendations(
  evidence: IncidentEvidence,
  hypotheses: Hypothesis[],
  verdict: Verdict,
): InvestigationRecommendation[] {
  const [top, second] = hypotheses;
  const recommendations: InvestigationRecommendation[] = [];
  if (verdict.kind !== 'inconclusive' && top !== undefined) {
    recommendations.push(top.recommendation);
    if (second !== undefined && second.score >= 0.25) {
      recommendations.push({ ...second.recommendation, priority: 'medium' });
    }
    return recommendations;
  }
  const from = iso(evidence.windows.incident.fromMs);
  const to = iso(evidence.windows.incident.toMs);
  if (evidence.observation.basis === 'none') {
    recommendations.push({
      title: `Collect processes and containers from ${evidence.host}`,
      detail:
        `${evidence.host} sent no process or container snapshot and has no baseline, so nothing ` +
        `stored says what uses the resource. Have its agent report processes and docker ` +
        `containers with every sample, and read its logs from ${from} to ${to} meanwhile.`,
      priority: 'high',
    });
    return recommendations;
  }
  recommendations.push({
    title: `Look beyond host metrics on ${evidence.host}`,
    detail:
      `Nothing the agent reports explains the ${evidence.focus.metric} deviation: read the ` +
      `application and kernel logs of ${evidence.host} from ${from} to ${to} (dmesg, journald) ` +
      `and check its dependencies and incoming traffic.`,
    priority: 'high',
  });
  for (const candidate of hypotheses.slice(0, 2)) {
    recommendations.push({ ...candidate.recommendation, priority: 'low' });
  }
  return recommendations;
}
