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

/** What the engine must name: a cause kind and its subject, or inconclusive. */
type ExpectedCause = { kind: CauseKind; subject: string } | { kind: 'inconclusive' };

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
};

export type ScenarioOptions = {
  /** The time of the last payload (epoch ms): recent, so ingest accepts the timestamps. */
  endMs: number;
  seed?: number;
};
