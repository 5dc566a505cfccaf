import type { Database } from '../core/database.js';

/** Which rule group: its organization, namespace and name. */
export type RuleGroupKey = { orgId: string; namespace: string; name: string };

/** A rule's outcome at the group's last evaluation. */
type RuleHealthRecord = { health: 'ok' | 'err'; lastError: string | null };

/** What the owner of a group persists after each evaluation. */
export type RuleGroupEvaluationRecord = {
  /** The rule manager's state as `evaluateRuleGroup` returned it (JSON-safe). */
  state: unknown;
  /** The evaluation's time (its aligned slot), ms since the epoch. */
  lastEvaluationMs: number;
  durationMs: number;
  /** Per rule, in the group's order. */
  health: RuleHealthRecord[];
};

/** A group as its evaluator reads it before an evaluation: the YAML now, its state so far. */
export type RuleGroupForEvaluation = {
  definition: string;
  /** Undefined before the group's first evaluation. */
  evaluation: RuleGroupEvaluationRecord | undefined;
};

/** A group of an organization with its last evaluation, for the rules and alerts lists. */
export type EvaluatedRuleGroup = RuleGroupForEvaluation & { namespace: string; name: string };

/** A group as the scheduler lists it: enough to know when it changed. */
export type ScheduledRuleGroup = RuleGroupKey & { definition: string };

export type RuleGroupStateStore = {
  /** Every organization's rule groups, by organization, namespace and name. */
  listAllGroups(): Promise<ScheduledRuleGroup[]>;
  /** The organization's groups with their last evaluations, by namespace and name. */
  listOrgGroups(orgId: string): Promise<EvaluatedRuleGroup[]>;
  /** The group's YAML and persisted state; undefined once the group was deleted. */
  loadGroup(key: RuleGroupKey): Promise<RuleGroupForEvaluation | undefined>;
  /**
   * Persists an evaluation, only if the group's stored evaluation time is still
   * `expectedLastEvaluationMs` (undefined: the group was never evaluated) and the group still
   * exists: false otherwise, and nothing changes. Another owner that evaluated the group in the
   * meantime (after a rebalance) thereby makes a late write of the previous owner a no-op.
   */
  saveEvaluation(
    key: RuleGroupKey,
    expectedLastEvaluationMs: number | undefined,
    record: RuleGroupEvaluationRecord,
  ): Promise<boolean>;
};

type StateRow = {
  namespace: string;
  name: string;
  definition: string;
  state: unknown;
  last_evaluation_ms: string | null;
  evaluation_duration_ms: number | null;
  rule_health: RuleHealthRecord[] | null;
};

function fromRow(row: StateRow): RuleGroupForEvaluation {
  return {
    definition: row.definition,
    evaluation:
      row.last_evaluation_ms === null
        ? undefined
        : {
            state: row.state,
            lastEvaluationMs: Number(row.last_evaluation_ms),
            durationMs: row.evaluation_duration_ms ?? 0,
            health: row.rule_health ?? [],
          },
  };
}

/** Prometheus rule groups' evaluation state in `prometheus_rule_group_states`. */
export function createRuleGroupStateStore(db: Database): RuleGroupStateStore {
  const { sql } = db;
  return {
    async listAllGroups() {
      return sql<ScheduledRuleGroup[]>`
        select org_id as "orgId", namespace, name, definition from prometheus_rule_groups
        order by org_id, namespace, name`;
    },
    async listOrgGroups(orgId) {
      const rows = await sql<StateRow[]>`
        select namespace, name, g.definition, s.state,
          s.last_evaluation_ms::text as last_evaluation_ms, s.evaluation_duration_ms, s.rule_health
        from prometheus_rule_groups g
        left join prometheus_rule_group_states s using (org_id, namespace, name)
        where g.org_id = ${orgId}
        order by namespace, name`;
      return rows.map((row) => ({ namespace: row.namespace, name: row.name, ...fromRow(row) }));
    },
    async loadGroup({ orgId, namespace, name }) {
      const [row] = await sql<StateRow[]>`
        select namespace, name, g.definition, s.state,
          s.last_evaluation_ms::text as last_evaluation_ms, s.evaluation_duration_ms, s.rule_health
        from prometheus_rule_groups g
        left join prometheus_rule_group_states s using (org_id, namespace, name)
        where g.org_id = ${orgId} and g.namespace = ${namespace} and g.name = ${name}`;
      return row === undefined ? undefined : fromRow(row);
    },
    async saveEvaluation({ orgId, namespace, name }, expected, record) {
      // `::text::jsonb`: a jsonb-typed parameter would be JSON.stringify'd a second time.
      const saved = await sql`
        insert into prometheus_rule_group_states as s (org_id, namespace, name, state,
          last_evaluation_ms, evaluation_duration_ms, rule_health)
        select org_id, namespace, name, ${JSON.stringify(record.state)}::text::jsonb,
          ${record.lastEvaluationMs}, ${record.durationMs},
          ${JSON.stringify(record.health)}::text::jsonb
        from prometheus_rule_groups
        where org_id = ${orgId} and namespace = ${namespace} and name = ${name}
        on conflict (org_id, namespace, name) do update
          set state = excluded.state, last_evaluation_ms = excluded.last_evaluation_ms,
            evaluation_duration_ms = excluded.evaluation_duration_ms,
            rule_health = excluded.rule_health, updated_at = now()
          where ${expected === undefined ? sql`false` : sql`s.last_evaluation_ms = ${expected}`}`;
      return saved.count > 0;
    },
  };
}
