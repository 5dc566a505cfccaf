import { growthFloor } from './consumer-changes.js';
import type { ConsumerLevel } from './current-consumers.js';
import { clockTime, formatResource, iso, resourceWord } from './format.js';
import type { Hypothesis, IncidentEvidence } from './incident-evidence.js';
import { mergeProcessesIntoContainers } from './merge-into-containers.js';
import { clamp01, round } from './statistics.js';

/** Without a baseline, at most this much of a score survives: see `snapshotThinness`. */
export const snapshotConfidenceCap = 0.7;

/**
 * How much a ranking from `snapshots` current snapshots alone is worth: current consumption
 * says who uses the resource, not what changed, so never more than `snapshotConfidenceCap`, and
 * less the fewer snapshots confirm it (one snapshot: half of the cap).
 */
export function snapshotThinness(snapshots: number): number {
  return snapshotConfidenceCap * (snapshots / (snapshots + 1));
}

/** A consumer hypothesis without a baseline, with what it stands on. */
export type LevelHypothesis = Hypothesis & { level: ConsumerLevel; coverage: number };

/**
 * How much of the alert's metric one consumer accounts for: its CPU against the host's CPU
 * percentage when the units agree, otherwise its share of what the listed consumers use.
 */
function coverageOf(
  consumer: ConsumerLevel,
  evidence: IncidentEvidence,
): { coverage: number; against: 'host_metric' | 'listed' } {
  const { metric } = evidence.focus;
  const hostLevel = evidence.observation.recentLevel;
  if (
    consumer.resource === 'cpu' &&
    /cpu/i.test(metric) &&
    /percent|pct|util/i.test(metric) &&
    hostLevel !== undefined &&
    hostLevel > 0
  ) {
    return { coverage: Math.min(1, consumer.level / hostLevel), against: 'host_metric' };
  }
  return { coverage: consumer.share, against: 'listed' };
}

/**
 * Processes and containers ranked by what they use of the alert's resource at firing, for an
 * alert without a baseline. Score: coverage × level/(level + floor) × support × the resource's
 * weight × the peers' discount × thinness, where support is 0.8 + 0.2 × how well it moved with
 * the metric over the snapshots seen (5 or more) when the metric is of its resource (CPU, load;
 * memory), and only that movement otherwise (an error rate, a disk).
 */
export function currentConsumerHypotheses(
  evidence: IncidentEvidence,
  localWeight: number,
  /** How clearly the metric moved, when it has a baseline of its own (1 when not). */
  significance = 1,
): LevelHypothesis[] {
  const { focus, observation } = evidence;
  const best = new Map<string, LevelHypothesis>();
  for (const level of evidence.current) {
    if (level.level <= 0) continue;
    const { coverage } = coverageOf(level, evidence);
    const magnitude = level.level / (level.level + growthFloor[level.resource]);
    const movement = observation.snapshots >= 5 ? clamp01(focus.direction * level.correlation) : 0;
    const weight = focus.resourceWeights[level.resource] ?? 0;
    // Using most of the CPU explains a CPU alert; using most of the memory says nothing about an
    // error rate unless it moved with it.
    const support = weight >= 1 ? 0.8 + 0.2 * movement : movement;
    const score = clamp01(
      coverage * magnitude * support * weight * localWeight * observation.thinness * significance,
    );
    const key = `${level.kind}:${level.name}`;
    if ((best.get(key)?.score ?? -1) >= score) continue;
    best.set(key, levelHypothesis(level, score, evidence));
  }
  return [...best.values()];
}

function levelHypothesis(
  level: ConsumerLevel,
  score: number,
  evidence: IncidentEvidence,
): LevelHypothesis {
  const { coverage, against } = coverageOf(level, evidence);
  const { metric } = evidence.focus;
  const { observation, windows } = evidence;
  const what = resourceWord(level.resource);
  const uses = formatResource(level.resource, level.level);
  const hostLevel = observation.recentLevel;
  const covered =
    against === 'listed'
      ? `${Math.round(level.share * 100)}% of the ${what} the listed ${level.kind === 'process' ? 'processes' : 'containers'} use`
      : `${Math.round(coverage * 100)}% of ${metric} ${round(hostLevel ?? 0)}`;
  const label =
    level.kind === 'process'
      ? `process ${level.name} (pid ${level.pids.join(', ') || 'unknown'})`
      : `container ${level.name}${level.image === undefined ? '' : ` (${level.image})`}`;
  const since = level.appeared ? `, present since ${clockTime(level.firstSeenMs)}` : '';
  const statement =
    `${label} uses ${uses} ${what} at firing, ${covered} on ${evidence.host}${since} ` +
    `(${observation.basis === 'baseline' ? 'no snapshot in the baseline' : 'no baseline'}: ` +
    `${observation.snapshots} snapshot${observation.snapshots === 1 ? ' says' : 's say'} ` +
    `who uses the ${what}, not what changed)`;
  const target =
    level.kind === 'process'
      ? `process ${level.name} (pid ${level.pids.join(', ')})`
      : `container ${level.name}`;
  return {
    kind: level.kind,
    subject: level.name,
    score,
    statement: statement.replace(/\s+/g, ' '),
    evidence: {
      basis: 'current_snapshots',
      consumer: level.kind,
      name: level.name,
      ...(level.kind === 'process' ? { pids: level.pids } : { image: level.image ?? null }),
      resource: level.resource,
      window: {
        from: iso(observation.firstSnapshotMs ?? windows.incident.fromMs),
        to: iso(windows.incident.toMs),
      },
      snapshots: observation.snapshots,
      firing: round(level.level),
      first: round(level.first),
      share_of_listed: round(level.share),
      coverage: round(coverage),
      coverage_of:
        against === 'host_metric'
          ? metric
          : `listed ${level.kind === 'process' ? 'processes' : 'containers'}`,
      host_level: hostLevel === undefined ? null : round(hostLevel),
      correlation: round(level.correlation),
      appeared: level.appeared,
      thinness: round(observation.thinness),
    },
    recommendation: {
      title: `Check ${target} on ${evidence.host}`,
      detail:
        `It uses ${uses} ${what} at firing (${covered}). Nothing shows its use before ` +
        `${clockTime(observation.firstSnapshotMs ?? windows.incident.fromMs)}, so ` +
        `whether this is its normal load is unknown: confirm it is expected (a job, a warm-up), ` +
        (level.kind === 'process'
          ? level.resource === 'cpu'
            ? `then throttle it (renice, cpulimit) or stop it if it is not.`
            : `then capture a heap profile or restart it before the host swaps if it keeps growing.`
          : `then cap it (docker update --${level.resource === 'cpu' ? 'cpus' : 'memory'}) or move it.`),
      priority: 'high',
    },
    level,
    coverage,
  };
}

/**
 * Processes into their containers (see mergeProcessesIntoContainers): level alike, both present
 * from the first snapshot or both not.
 */
export function mergeLevelsIntoContainers(hypotheses: LevelHypothesis[]): LevelHypothesis[] {
  return mergeProcessesIntoContainers(
    hypotheses,
    (process, container) =>
      process.level.resource === container.level.resource &&
      process.level.appeared === container.level.appeared
        ? process.level.level / container.level.level
        : undefined,
    (container, process) => {
      container.statement += `; its process ${process.level.name} (pid ${process.level.pids.join(', ')}) uses alike`;
      container.evidence = {
        ...container.evidence,
        process: {
          name: process.level.name,
          pids: process.level.pids,
          firing: round(process.level.level),
        },
      };
    },
  );
}
