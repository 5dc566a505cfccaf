/**
 * The select list that reads an `alerts` row as an `Alert` (camelCase aliases; the table's
 * check constraints hold condition, severity and status to the enums). Columns of other tables
 * must not share these names in a query that uses it.
 */
export const alertStoredColumns = `id, rule_id as "ruleId", rule_name as "ruleName",
  service_id as "serviceId", host, metric, condition, threshold, severity, status, value,
  started_at as "startedAt", fired_at as "firedAt", resolved_at as "resolvedAt",
  investigation_id as "investigationId", reason, acknowledged_at as "acknowledgedAt",
  acknowledged_by as "acknowledgedBy", acknowledgement_comment as "acknowledgementComment",
  flapping, labels, annotations`;

/**
 * `alertStoredColumns` with `silenced` false: for code that writes alerts and has no silences at
 * hand (the evaluator's transitions). The API and the notifier compute it from the silences in
 * force (`alertStoredColumns` plus their own `silenced`).
 */
export const alertColumns = `${alertStoredColumns}, false as silenced`;
