import type { ConsumerChange } from './consumer-changes.js';
import type { ContainerEvent } from './container-events.js';
import { clockTime, formatDuration, formatResource, iso, resourceWord } from './format.js';
import type { Hypothesis, IncidentEvidence, PeerGroup } from './incident-evidence.js';
import { causeKinds } from './incident-evidence.js';
import { currentConsumerHypotheses, mergeLevelsIntoContainers } from './current-hypotheses.js';
import { mergeProcessesIntoContainers } from './merge-into-containers.js';
import { clamp01, round } from './statistics.js';

const minuteMs = 60_000;

/**
 * How well an event's time fits the onset of the trouble: 1 from 15 min before to 5 min after,
 * fading with distance; 0 after the incident window (it cannot have caused what came before).
 */
function alignment(eventMs: number, evidence: IncidentEvidence): number {
  if (eventMs > evidence.windows.incident.toMs) return 0;
  const lead = evidence.referenceMs - eventMs;
  if (lead >= -5 * minuteMs && lead <= 15 * minuteMs) return 1;
  if (lead > 15 * minuteMs) return Math.max(0.2, 1 - (lead - 15 * minuteMs) / (45 * minuteMs));
  return Math.max(0.1, 1 - (-lead - 5 * minuteMs) / (15 * minuteMs));
}

/** How much of the host's CPU rise one consumer's growth covers, when the units agree. */
function explainedFactor(change: ConsumerChange, evidence: IncidentEvidence): number {
  const { metric, deviation } = evidence.focus;
  if (change.resource !== 'cpu' || deviation === undefined) return 1;
  if (!/cpu/i.test(metric) || !/percent|pct|util/i.test(metric)) return 1;
  const hostRise = evidence.focus.direction * (deviation.recentLevel - deviation.baseline.mean);
  if (hostRise <= 0) return 1;
  return 0.3 + 0.7 * Math.min(1, change.growth / hostRise);
}

type ConsumerHypothesis = Hypothesis & { change: ConsumerChange; share: number };

function consumerHypotheses(evidence: IncidentEvidence, localWeight: number): ConsumerHypothesis[] {
  const { focus } = evidence;
  const significance = focus.deviation?.significance ?? 0;
  const totals = new Map<string, number>();
  const groupOf = (c: ConsumerChange) => `${c.kind}:${c.resource}`;
  for (const c of evidence.consumers) {
    if (c.growth > 0) totals.set(groupOf(c), (totals.get(groupOf(c)) ?? 0) + c.growth);
  }
  const best = new Map<string, ConsumerHypothesis>();
  for (const change of evidence.consumers) {
    if (change.growth <= 0) continue;
    const share = change.growth / (totals.get(groupOf(change)) ?? change.growth);
    const correlation = clamp01(focus.direction * change.correlation);
    const magnitude = change.relativeGrowth / (change.relativeGrowth + 0.3);
    const weight = focus.resourceWeights[change.resource] ?? 0;
    const score = clamp01(
      share *
        correlation *
        magnitude *
        explainedFactor(change, evidence) *
        significance *
        weight *
        localWeight,
    );
    const key = `${change.kind}:${change.name}`;
    if ((best.get(key)?.score ?? -1) >= score) continue;
    best.set(key, consumerHypothesis(change, share, score, evidence));
  }
  return [...best.values()];
}

function consumerHypothesis(
  change: ConsumerChange,
  share: number,
  score: number,
  evidence: IncidentEvidence,
): ConsumerHypothesis {
  const what = resourceWord(change.resource);
  const from = formatResource(change.resource, change.baseline);
  const to = formatResource(change.resource, change.firing);
  const since = change.onsetMs === undefined ? '' : ` since ${clockTime(change.onsetMs)}`;
  const label =
    change.kind === 'process'
      ? `process ${change.name} (pid ${change.pids.join(', ') || 'unknown'})`
      : `container ${change.name}${change.image === undefined ? '' : ` (${change.image})`}`;
  const statement =
    `${label} ${change.appeared ? 'started and' : ''} grew its ${what} from ${from} to ${to}` +
    `${since}, ${Math.round(share * 100)}% of the growth among ${change.kind === 'process' ? 'processes' : 'containers'} on ` +
    `${evidence.host}`;
  const recommendation =
    change.kind === 'process'
      ? change.resource === 'cpu'
        ? {
            title: `Check process ${change.name} (pid ${change.pids.join(', ')}) on ${evidence.host}`,
            detail:
              `It uses ${to} CPU against ${from} in the baseline${since}. Find what started it ` +
              `(a job, a runaway loop), then throttle it (renice, cpulimit) or stop it if it is ` +
              `not expected.`,
            priority: 'high' as const,
          }
        : {
            title: `Check the memory of process ${change.name} (pid ${change.pids.join(', ')}) on ${evidence.host}`,
            detail:
              `Its resident memory grew from ${from} to ${to}${since}. A steady climb is a leak: ` +
              `capture a heap profile, restart ${change.name} before the host swaps or the OOM ` +
              `killer acts, and fix the leak.`,
            priority: 'high' as const,
          }
      : {
          title: `Limit or move container ${change.name} on ${evidence.host}`,
          detail:
            `It uses ${to} ${what} against ${from} in the baseline${since} and starves what ` +
            `shares the host: cap it (docker update --${change.resource === 'cpu' ? 'cpus' : 'memory'}) ` +
            `or move it to another host.`,
          priority: 'high' as const,
        };
  return {
    kind: change.kind,
    subject: change.name,
    score,
    statement: statement.replace(/\s+/g, ' '),
    evidence: {
      consumer: change.kind,
      name: change.name,
      ...(change.kind === 'process' ? { pids: change.pids } : { image: change.image ?? null }),
      resource: change.resource,
      baseline_window: {
        from: iso(evidence.windows.baseline.fromMs),
        to: iso(evidence.windows.baseline.toMs),
      },
      incident_window: {
        from: iso(evidence.windows.incident.fromMs),
        to: iso(evidence.windows.incident.toMs),
      },
      baseline: round(change.baseline),
      firing: round(change.firing),
      growth: round(change.growth),
      share_of_growth: round(share),
      correlation: round(change.correlation),
      onset: change.onsetMs === undefined ? null : iso(change.onsetMs),
    },
    recommendation,
    change,
    share,
  };
}

/** Processes into their containers (see mergeProcessesIntoContainers): growth alike, begun within 3 min. */
function mergeGrowthIntoContainers(hypotheses: ConsumerHypothesis[]): ConsumerHypothesis[] {
  return mergeProcessesIntoContainers(
    hypotheses,
    (process, container) => {
      if (process.change.resource !== container.change.resource) return undefined;
      const startsTogether =
        process.change.onsetMs === undefined ||
        container.change.onsetMs === undefined ||
        Math.abs(process.change.onsetMs - container.change.onsetMs) <= 3 * minuteMs;
      return startsTogether ? process.change.growth / container.change.growth : undefined;
    },
    (container, process) => {
      container.statement += `; its process ${process.change.name} (pid ${process.change.pids.join(', ')}) grew alike`;
      container.evidence = {
        ...container.evidence,
        process: {
          name: process.change.name,
          pids: process.change.pids,
          growth: round(process.change.growth),
        },
      };
    },
  );
}

function deployHypotheses(
  evidence: IncidentEvidence,
  containerScores: ReadonlyMap<string, Hypothesis>,
  localWeight: number,
): Hypothesis[] {
  const latest = new Map<string, ContainerEvent>();
  for (const event of evidence.containerEvents) {
    if (event.type !== 'container_image_changed') continue;
    if (event.atMs < evidence.windows.incident.fromMs - 30 * minuteMs) continue;
    latest.set(event.container, event);
  }
  return [...latest.values()].map((event) => {
    const grown = containerScores.get(event.container);
    const fit = alignment(event.atMs, evidence);
    const score = clamp01(fit * (0.3 * localWeight + 0.7 * (grown?.score ?? 0)));
    const lead = evidence.referenceMs - event.atMs;
    const timing =
      lead >= 0
        ? `${formatDuration(lead)} before the deviation began`
        : `${formatDuration(lead)} after the deviation began`;
    const growth = grown === undefined ? '' : `; ${grown.statement}`;
    return {
      kind: 'deploy' as const,
      subject: event.container,
      score,
      statement:
        `container ${event.container} was deployed with image ${event.image ?? '?'} ` +
        `(was ${event.previousImage ?? '?'}) at ${clockTime(event.atMs)}, ${timing}${growth}`,
      evidence: {
        container: event.container,
        image: event.image ?? null,
        previous_image: event.previousImage ?? null,
        deployed_at: iso(event.atMs),
        timing_fit: round(fit),
        ...(grown === undefined ? {} : { growth: grown.evidence }),
      },
      recommendation: {
        title: `Roll back container ${event.container} to ${event.previousImage ?? 'its previous image'}`,
        detail:
          `${event.container} changed image from ${event.previousImage ?? '?'} to ` +
          `${event.image ?? '?'} at ${iso(event.atMs)}, ${timing}. Roll back on ` +
          `${evidence.host}, or compare the two releases before rolling forward.`,
        priority: 'high' as const,
      },
    };
  });
}

/**
 * How clearly something is wrong, for the causes that do not measure it themselves: the focus
 * metric's deviation from its baseline, or, without a baseline, the alert's breach weighed by
 * how thin the current snapshots are.
 */
function significanceOf(evidence: IncidentEvidence): number {
  return evidence.observation.basis === 'current_snapshots'
    ? evidence.observation.thinness
    : (evidence.focus.deviation?.significance ?? 0);
}

function restartHypotheses(evidence: IncidentEvidence, localWeight: number): Hypothesis[] {
  const significance = significanceOf(evidence);
  const restarts = new Map<string, ContainerEvent[]>();
  for (const event of evidence.containerEvents) {
    if (event.type !== 'container_restarted') continue;
    if (event.atMs < evidence.windows.incident.fromMs - 15 * minuteMs) continue;
    restarts.set(event.container, [...(restarts.get(event.container) ?? []), event]);
  }
  return [...restarts].map(([container, events]) => {
    const first = events[0] as ContainerEvent;
    const last = events[events.length - 1] as ContainerEvent;
    const fit = alignment(first.atMs, evidence);
    const count = events.length;
    return {
      kind: 'container_restart' as const,
      subject: container,
      score: clamp01((count / (count + 1)) * fit * significance * localWeight),
      statement:
        `container ${container}${first.image === undefined ? '' : ` (${first.image})`} ` +
        `restarted ${count} time${count === 1 ? '' : 's'} between ${clockTime(first.atMs)} and ` +
        `${clockTime(last.atMs)}`,
      evidence: {
        container,
        image: first.image ?? null,
        restarts: count,
        restarted_at: events.map((e) => iso(e.atMs)),
        statuses: events.map((e) => e.status ?? null),
        timing_fit: round(fit),
      },
      recommendation: {
        title: `Find why container ${container} restarts on ${evidence.host}`,
        detail:
          `${count} restart${count === 1 ? '' : 's'} from ${iso(first.atMs)} to ` +
          `${iso(last.atMs)}: read its logs (docker logs ${container}) and its exit code and OOM ` +
          `flag (docker inspect ${container}); fix the crash or raise its memory limit.`,
        priority: 'high' as const,
      },
    };
  });
}

function fleetHypothesis(evidence: IncidentEvidence, group: PeerGroup): Hypothesis {
  const significance = significanceOf(evidence);
  const deviating = group.members.filter((m) => m.deviating);
  const subject = `${group.key}=${group.value}`;
  return {
    kind: 'fleet_wide',
    subject,
    score: clamp01(group.strength * significance),
    statement:
      `${group.deviatingCount} of ${group.members.length} other services with ${subject} ` +
      `deviate or alert on ${evidence.focus.metric} at the same time ` +
      `(${deviating.map((m) => m.name).join(', ')}): the cause is shared, not local to ${evidence.host}`,
    evidence: {
      tag: { key: group.key, value: group.value },
      peers: group.members.length,
      deviating: group.deviatingCount,
      strength: round(group.strength),
      members: group.members.map((m) => ({
        name: m.name,
        z: m.z === undefined ? null : round(m.z),
        deviating: m.deviating,
        alerts: m.alerts.length,
      })),
    },
    recommendation: {
      title: `Treat it as fleet-wide across ${subject}`,
      detail:
        `${group.deviatingCount} of ${group.members.length} peers move together with ` +
        `${evidence.host}: look at what they share (traffic, an upstream dependency, a release ` +
        `or config rolled to all) rather than at ${evidence.host} alone; scale out if it is load.`,
      priority: 'high',
    },
  };
}

function flappingHypothesis(evidence: IncidentEvidence): Hypothesis | undefined {
  const { history, alert } = evidence;
  // A rule file's rule has no threshold to sit near the normal level.
  if (history === undefined || alert === undefined || history.threshold === null) return undefined;
  const fired = history.priorFirings.length;
  const gap = history.thresholdGapSpreads;
  // Ordinary noise crosses a threshold within two spreads of the normal level every few dozen
  // samples; beyond four it practically never does.
  const nearness = gap === undefined ? 0 : clamp01(1 - (gap - 2) / 2);
  const baselineMean = evidence.focus.deviation?.baseline.mean;
  return {
    kind: 'flapping_rule',
    subject: history.ruleName,
    score: clamp01(Math.min(1, fired / 5) * nearness),
    statement:
      `rule ${history.ruleName} fired ${fired} times in the previous 24 h and its threshold ` +
      `${history.threshold} sits ${gap === undefined ? '?' : round(gap)} spreads from the ` +
      `normal level ${baselineMean === undefined ? '?' : round(baselineMean)}: it flaps on normal variation`,
    evidence: {
      rule: history.ruleName,
      rule_id: alert.ruleId,
      firings_24h: fired,
      fired_at: history.priorFirings.map((f) => iso(f.firedAtMs)),
      threshold: history.threshold,
      baseline_mean: baselineMean === undefined ? null : round(baselineMean),
      threshold_gap_spreads: gap === undefined ? null : round(gap),
    },
    recommendation: {
      title: `Tune rule ${history.ruleName}`,
      detail:
        `It fired ${fired} times in 24 h on ${evidence.host} while ${evidence.focus.metric} ` +
        `hovers around ${history.threshold}. Set duration_minutes (e.g. 5) so short excursions ` +
        `do not fire, or move the threshold out of the normal range.`,
      priority: 'high',
    },
  };
}

/**
 * The furthest a trend is projected to its limit: a year. Beyond it the forecast says nothing
 * useful, and a slow enough slope would put the date past what a Date holds.
 */
const maxForecastMs = 365 * 24 * 60 * minuteMs;

function trendHypothesis(evidence: IncidentEvidence, localWeight: number): Hypothesis | undefined {
  const { deviation, direction, metric } = evidence.focus;
  if (deviation === undefined || direction * deviation.spanSlopePerMinute <= 0) return undefined;
  const steadiness = Math.min(deviation.spanR2, deviation.baselineR2);
  // A consumer that grows with the metric explains the trend better than the trend itself.
  let explainedByConsumer = 0;
  const totals = new Map<string, number>();
  for (const c of evidence.consumers) {
    if (c.growth > 0)
      totals.set(
        `${c.kind}:${c.resource}`,
        (totals.get(`${c.kind}:${c.resource}`) ?? 0) + c.growth,
      );
  }
  for (const c of evidence.consumers) {
    if (c.growth <= 0) continue;
    const share = c.growth / (totals.get(`${c.kind}:${c.resource}`) ?? c.growth);
    explainedByConsumer = Math.max(explainedByConsumer, share * clamp01(direction * c.correlation));
  }
  const perHour = deviation.spanSlopePerMinute * 60;
  const limit =
    direction > 0 && /percent|pct|util/i.test(metric)
      ? 100
      : (evidence.alert?.threshold ?? undefined);
  const toLimitMs =
    limit === undefined || (limit - deviation.incident.last) * direction <= 0
      ? undefined
      : ((limit - deviation.incident.last) / deviation.spanSlopePerMinute) * minuteMs;
  const etaMs = toLimitMs !== undefined && toLimitMs <= maxForecastMs ? toLimitMs : undefined;
  const eta =
    etaMs === undefined ? '' : `; at this rate it reaches ${limit} in ${formatDuration(etaMs)}`;
  return {
    kind: 'resource_trend',
    subject: metric,
    score: clamp01(steadiness * (1 - explainedByConsumer) * localWeight),
    statement:
      `${metric} on ${evidence.host} has ${direction > 0 ? 'risen' : 'fallen'} steadily by ` +
      `${round(Math.abs(perHour))} per hour (r² ${round(deviation.spanR2)}) with no process or ` +
      `container growing alike${eta}`,
    evidence: {
      metric,
      slope_per_hour: round(perHour),
      r2: round(deviation.spanR2),
      baseline_r2: round(deviation.baselineR2),
      window: {
        from: iso(evidence.windows.baseline.fromMs),
        to: iso(evidence.windows.incident.toMs),
      },
      last: round(deviation.incident.last),
      ...(etaMs === undefined
        ? {}
        : { limit, reaches_limit_at: iso(deviation.incident.toMs + etaMs) }),
    },
    recommendation: {
      title: `Act on the ${metric} trend on ${evidence.host}`,
      detail:
        `It grows ${round(Math.abs(perHour))}/h with no single consumer behind it${eta}. Free or ` +
        `add capacity now (for a disk: rotate and compress logs, delete old files, grow the ` +
        `volume), then find what accumulates.`,
      priority: 'high',
    },
  };
}

/**
 * Every hypothesis the evidence supports, strongest first. Local causes are discounted by how
 * strongly the peers move too: a process that grows on every host of a service is a symptom of a
 * shared cause, not the cause.
 */
export function rankHypotheses(evidence: IncidentEvidence): Hypothesis[] {
  const { basis } = evidence.observation;
  // No baseline and nothing on the host to look at: abstain rather than guess.
  if (basis === 'none') return [];
  const strongestGroup = [...evidence.peerGroups].sort(
    (a, b) => b.strength - a.strength || b.members.length - a.members.length,
  )[0];
  const localWeight = 1 - 0.7 * (strongestGroup?.strength ?? 0);
  const hypotheses: Hypothesis[] =
    basis === 'current_snapshots'
      ? fromCurrentSnapshots(evidence, localWeight)
      : fromBaseline(evidence, localWeight);
  if (strongestGroup !== undefined && strongestGroup.deviatingCount > 0) {
    hypotheses.push(fleetHypothesis(evidence, strongestGroup));
  }
  return hypotheses
    .filter((h) => h.score > 0)
    .sort(
      (a, b) =>
        b.score - a.score ||
        causeKinds.indexOf(a.kind) - causeKinds.indexOf(b.kind) ||
        a.subject.localeCompare(b.subject),
    );
}

function fromBaseline(evidence: IncidentEvidence, localWeight: number): Hypothesis[] {
  // No snapshot in the baseline (the agent began listing processes recently): the consumers are
  // judged by what they use now, as without a baseline, and by how clearly the metric moved.
  const consumers: Hypothesis[] =
    evidence.observation.consumerBasis === 'current_snapshots'
      ? mergeLevelsIntoContainers(
          currentConsumerHypotheses(
            evidence,
            localWeight,
            evidence.focus.deviation?.significance ?? 0,
          ),
        ).map(({ level: _level, coverage: _coverage, ...h }) => h)
      : mergeGrowthIntoContainers(consumerHypotheses(evidence, localWeight)).map(
          ({ change: _change, share: _share, ...h }) => h,
        );
  const containerScores = new Map(
    consumers.filter((h) => h.kind === 'container').map((h) => [h.subject, h] as const),
  );
  const deploys = deployHypotheses(evidence, containerScores, localWeight);
  const deployed = new Set(deploys.map((d) => d.subject));
  const hypotheses: Hypothesis[] = [
    ...consumers.filter((h) => !(h.kind === 'container' && deployed.has(h.subject))),
    ...deploys,
    ...restartHypotheses(evidence, localWeight),
  ];
  const flapping = flappingHypothesis(evidence);
  if (flapping !== undefined) hypotheses.push(flapping);
  const trend = trendHypothesis(evidence, localWeight);
  if (trend !== undefined) hypotheses.push(trend);
  return hypotheses;
}

/**
 * Without a baseline: what consumes the alert's resource now, the image changes and restarts
 * the snapshots show, every score scaled by the thinness of the evidence. No flapping (it needs
 * the normal level) and no trend (it needs the baseline's fit).
 */
function fromCurrentSnapshots(evidence: IncidentEvidence, localWeight: number): Hypothesis[] {
  const consumers = mergeLevelsIntoContainers(currentConsumerHypotheses(evidence, localWeight));
  const containerScores = new Map(
    consumers.filter((h) => h.kind === 'container').map((h) => [h.subject, h] as const),
  );
  const weight = localWeight * evidence.observation.thinness;
  const deploys = deployHypotheses(evidence, containerScores, weight);
  const restarts = restartHypotheses(evidence, localWeight);
  const seen = new Set([...deploys, ...restarts].map((h) => h.subject));
  // An observed image change or restart says more than an uptime.
  const starts = recentStartHypotheses(evidence, containerScores, weight).filter(
    (h) => !seen.has(h.subject),
  );
  const explained = new Set([...deploys, ...starts].map((h) => h.subject));
  return [
    ...consumers
      .filter((h) => !(h.kind === 'container' && explained.has(h.subject)))
      .map(({ level: _level, coverage: _coverage, ...h }) => h),
    ...deploys,
    ...starts,
    ...restarts,
  ];
}

/**
 * Containers the first snapshot shows started shortly before the alert (`Up 6 minutes`) on a
 * host whose other containers have run for long: a deploy or restart just before the host was
 * first seen. Scored like a deploy: timing fit × (0.3 × weight + 0.7 × the container's own
 * consumer score), which it absorbs.
 */
function recentStartHypotheses(
  evidence: IncidentEvidence,
  containerScores: ReadonlyMap<string, Hypothesis>,
  weight: number,
): Hypothesis[] {
  return evidence.recentStarts.map((start) => {
    const used = containerScores.get(start.container);
    const fit = alignment(start.startedAtMs, evidence);
    const lead = evidence.referenceMs - start.startedAtMs;
    const timing = `${formatDuration(lead)} ${lead >= 0 ? 'before' : 'after'} the alert started`;
    const image = start.image === undefined ? '' : ` (${start.image})`;
    return {
      kind: 'container_restart' as const,
      subject: start.container,
      score: clamp01(fit * (0.3 * weight + 0.7 * (used?.score ?? 0))),
      statement:
        `container ${start.container}${image} started at about ${clockTime(start.startedAtMs)}, ` +
        `${timing}: its first snapshot at ${clockTime(start.seenAtMs)} says '${start.status}' ` +
        `while ${start.elder.container} says '${start.elder.status}', a deploy or restart just ` +
        `before ${evidence.host} was first seen${used === undefined ? '' : `; ${used.statement}`}`,
      evidence: {
        dated_by: 'uptime',
        container: start.container,
        image: start.image ?? null,
        status: start.status,
        seen_at: iso(start.seenAtMs),
        started_at_estimate: iso(start.startedAtMs),
        elder: { container: start.elder.container, status: start.elder.status },
        timing_fit: round(fit),
        ...(used === undefined ? {} : { usage: used.evidence }),
      },
      recommendation: {
        title: `Find why container ${start.container} started at about ${clockTime(start.startedAtMs)} on ${evidence.host}`,
        detail:
          `Its first snapshot at ${iso(start.seenAtMs)} says '${start.status}' while ` +
          `${start.elder.container} has run since about ${iso(start.elder.startedAtMs)}. Check ` +
          `whether ${start.image ?? 'its image'} was just released (roll back if so), and its ` +
          `logs and exit code (docker logs ${start.container}; docker inspect ${start.container}).`,
        priority: 'high' as const,
      },
    };
  });
}
