import type { InvestigationRecommendation } from '@monitor/schemas';
import type { ConsumerChange, Resource } from './consumer-changes.js';
import type { ContainerEvent, RecentStart } from './container-events.js';
import type { ConsumerLevel } from './current-consumers.js';
import type { AlertFacts, IncidentWindows, PeerAlert, RuleFiring } from './incident-input.js';
import type { MetricDeviation } from './metric-deviation.js';

/** The metric the investigation explains: the alert's, or on demand the one that moved most. */
export type FocusMetric = {
  metric: string;
  /** +1 when a rise is the problem, -1 for a fall. */
  direction: 1 | -1;
  deviation: MetricDeviation | undefined;
  /** What consumers of which resource can explain it, and how much each counts (0..1). */
  resourceWeights: Partial<Record<Resource, number>>;
};

export type PeerStatus = {
  id: string;
  name: string;
  /** The peer's z-score on the focus metric over the same windows, when it has samples. */
  z: number | undefined;
  /** Alerts of the peer on the focus metric active during the incident window. */
  alerts: PeerAlert[];
  deviating: boolean;
};

/** The peers sharing one tag value with the host, e.g. every host with service=checkout. */
export type PeerGroup = {
  key: string;
  value: string;
  members: PeerStatus[];
  deviatingCount: number;
  /** 0..1: the share that deviate, discounted for small groups (one peer is weak evidence). */
  strength: number;
};

export type RuleHistorySummary = {
  ruleName: string;
  /** Null for a rule file's rule. */
  threshold: number | null;
  /** Firings of the rule on this host in the 24 h before this alert. */
  priorFirings: RuleFiring[];
  /** |threshold − baseline mean| in baseline spreads. */
  thresholdGapSpreads: number | undefined;
};

/**
 * What the analysis can compare: `baseline` (the usual case: the focus metric has a baseline),
 * `current_snapshots` (an alert on a host without a usable baseline, e.g. seen for the first
 * time, that has process or container snapshots: hypotheses come from what consumes now, scaled
 * down by `thinness`), `none` (neither: the analysis abstains).
 */
type EvidenceBasis = 'baseline' | 'current_snapshots' | 'none';

export type Observation = {
  basis: EvidenceBasis;
  /** Points of the focus metric in the baseline window. */
  baselinePoints: number;
  /** The host's snapshots over baseline + incident. */
  snapshots: number;
  /** The host's earliest sample or snapshot in the windows read. */
  firstSeenMs: number | undefined;
  /** The earliest snapshot listing processes or containers in the windows read. */
  firstSnapshotMs: number | undefined;
  /**
   * Where the focus metric stood when the incident window ends: the mean of its last three
   * points, each a bucket's average (or the alert's value when the window has none). An
   * average, not the value that fired: that is the alert's `value`.
   */
  recentLevel: number | undefined;
  /**
   * What the process and container hypotheses compare: `current_snapshots` also when the metric
   * has a baseline but no snapshot falls in it (the agent began listing processes recently).
   */
  consumerBasis: EvidenceBasis;
  /** 0..1, multiplies every score that stands on current snapshots alone; 1 with a baseline. */
  thinness: number;
};

/** What the engine measured, before any interpretation. */
export type IncidentEvidence = {
  host: string;
  alert: AlertFacts | undefined;
  windows: IncidentWindows;
  focus: FocusMetric;
  observation: Observation;
  /** Processes and containers on the focus resources, by growth (with a baseline). */
  consumers: ConsumerChange[];
  /** Processes and containers on the focus resources at firing (basis `current_snapshots`). */
  current: ConsumerLevel[];
  containerEvents: ContainerEvent[];
  /** Containers the first snapshot shows started shortly before (basis `current_snapshots`). */
  recentStarts: RecentStart[];
  /** Other metrics of the host that deviated 3σ or more. */
  movedMetrics: MetricDeviation[];
  peerGroups: PeerGroup[];
  history: RuleHistorySummary | undefined;
  /** When the trouble began: the focus metric's onset, else the alert's start or the window's. */
  referenceMs: number;
};

export const causeKinds = [
  'process',
  'container',
  'deploy',
  'container_restart',
  'fleet_wide',
  'flapping_rule',
  'resource_trend',
] as const;

export type CauseKind = (typeof causeKinds)[number];

/** One candidate explanation with a score 0..1 computed from the strength of its evidence. */
export type Hypothesis = {
  kind: CauseKind;
  /** What it names: a process or container name, `service=checkout`, a rule or metric name. */
  subject: string;
  score: number;
  /** One sentence naming the cause with its numbers. */
  statement: string;
  evidence: Record<string, unknown>;
  recommendation: InvestigationRecommendation;
};

/** The machine-checkable outcome: what was named, or inconclusive. */
export type Verdict = {
  kind: CauseKind | 'inconclusive';
  /** The named process, container, `tag=value`, rule or metric; null when inconclusive. */
  subject: string | null;
  confidence: number;
};
