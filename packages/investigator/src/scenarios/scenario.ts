import type { IngestPayload } from '@monitor/schemas';
import type { CauseKind } from '../incident-evidence.js';
import type { AlertCondition } from '@monitor/schemas';

/** An alert rule as POST /api/v1/alerts/rules takes it. */
type ScenarioRule = {
  name: string;
  metric: string;
  condition: AlertCondition;
  threshold: number;
  duration_minutes: number;
  severity: 'critical' | 'warning';
};

export type Cause = { kind: CauseKind; subject: string };

/**
 * What the engine must find. A cause with `topK` 1 (the default): the verdict names it. With
 * `topK` k > 1 (several causes at once): it and every cause in `also` rank among the first k
 * hypotheses, whether or not the verdict names one. `inconclusive`: the verdict names nothing
 * (abstains).
 */
type ExpectedCause = (Cause & { topK?: number; also?: Cause[] }) | { kind: 'inconclusive' };

/** What a scenario stands for, so the suite can show it covers each situation. */
export type ScenarioTrait =
  'first_seen' | 'noisy_neighbour' | 'no_snapshot' | 'several_causes' | 'peers';

/** One incident, as agents would report it over HTTP. */
export type Scenario = {
  /** Stable id, e.g. `cpu-hog-process`. */
  name: string;
  title: string;
  /** The investigated host; the rule's last firing on it is the incident. */
  host: string;
  rule: ScenarioRule;
  /** Every host's payloads, in time order, in the ingest wire format. */
  payloads: IngestPayload[];
  expected: ExpectedCause;
  traits?: ScenarioTrait[];
};

export type ScenarioOptions = {
  /** The time of the last payload (epoch ms): recent, so ingest accepts the timestamps. */
  endMs: number;
  seed?: number;
};
