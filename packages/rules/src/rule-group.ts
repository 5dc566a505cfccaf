/** An alerting rule of a Prometheus rule group. */
export type AlertingRule = {
  kind: 'alert';
  alert: string;
  expr: string;
  /** How long the condition must hold before the alert fires; 0 fires at once. */
  forMs: number;
  /** How long a firing alert keeps firing after its condition stops holding. */
  keepFiringForMs: number;
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
};

/** A recording rule: its expression's samples are written back under the name `record`. */
export type RecordingRule = {
  kind: 'record';
  record: string;
  expr: string;
  labels: Readonly<Record<string, string>>;
};

export type Rule = AlertingRule | RecordingRule;

/** A rule group as a rule file declares it. */
export type RuleGroup = {
  name: string;
  /** The group's own evaluation interval; null uses the service's default. */
  intervalMs: number | null;
  /** At most this many alerts or series per evaluation; 0 is no limit. */
  limit: number;
  rules: readonly Rule[];
};
