import type { InvestigationFinding } from '@monitor/schemas';
import type { Resource } from './consumer-changes.js';
import { snapshotConfidenceCap } from './current-hypotheses.js';
import { clockTime, formatResource, iso, resourceWord } from './format.js';
import { minBaselinePoints } from './gather-evidence.js';
import type { CauseKind, Hypothesis, IncidentEvidence, Verdict } from './incident-evidence.js';
import type { AlertFacts } from './incident-input.js';
import type { MetricDeviation } from './metric-deviation.js';
import {
  atMoment,
  consumerEvidence,
  deviationEvidence,
  levelEvidence,
  windowOf,
} from './report-evidence.js';
import { round } from './statistics.js';

// The report's words: the summary, and the findings with the evidence each stands on.

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
      : `${focus.metric} on ${host} was ${formatValue(alert.value)} at firing` +
        `${alert.threshold === null ? '' : ` (threshold ${alert.threshold})`}` +
        `${average === '' ? '' : `, and ${average}`}. `;
  const seen =
    observation.firstSeenMs === undefined
      ? `${host} has no samples or snapshots in the windows read`
      : `${host} was first seen at ${clockTime(observation.firstSeenMs)} in the windows read`;
  return (
    `${level}No baseline: ${observation.baselinePoints} sample${observation.baselinePoints === 1 ? '' : 's'} ` +
    `of ${focus.metric} before the incident window (${minBaselinePoints} needed); ${seen}.`
  );
}

export function buildSummary(
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

export function buildFindings(
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
        history.threshold === null
          ? 'Its rule is a Prometheus rule without a threshold.'
          : history.thresholdGapSpreads === undefined
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
