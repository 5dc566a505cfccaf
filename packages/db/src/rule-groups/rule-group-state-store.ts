import type { Database } from '../core/database.js';
import type { ServiceIdentities, ServiceIdentity } from '../shards/service-identities.js';
import type { RuleGroupAlertChanges, RuleGroupAlertRow } from './rule-group-alerts.js';
import type { RuleGroupKey } from './rule-group-key.js';
import {
  applyRuleGroupAlertChanges,
  listRuleGroupAlerts,
  noRuleGroupAlertChanges,
} from './rule-group-alerts.js';

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

/** A group as the rules and alerts lists read it: the YAML now, its state so far. */
type RuleGroupWithState = {
  definition: string;
  /** Undefined before the group's first evaluation. */
  evaluation: RuleGroupEvaluationRecord | undefined;
};

/** A group as its evaluator reads it before an evaluation. */
export type RuleGroupForEvaluation = RuleGroupWithState & {
  /** Changes with every change of the group: what its save is checked against. */
  revision: string;
};

/** A group of an organization with its last evaluation, for the rules and alerts lists. */
export type EvaluatedRuleGroup = RuleGroupWithState & { namespace: string; name: string };

/** What an evaluation expects to find when it saves: nothing else saved or changed meanwhile. */
type RuleGroupSaveCondition = {
  /** The stored evaluation time it went on from; undefined: the group was never evaluated. */
  lastEvaluationMs: number | undefined;
  /** The group's revision it evaluated (`loadGroup`). */
  revision: string;
};

/** A group as the scheduler lists it: enough to know when it changed. */
export type ScheduledRuleGroup = RuleGroupKey & { definition: string };

export type RuleGroupStateStore = {
  /** Every organization's rule groups, by organization, namespace and name. */
  listAllGroups(): Promise<ScheduledRuleGroup[]>;
  /** The organization's groups with their last evaluations, by namespace and name. */
  listOrgGroups(orgId: string): Promise<EvaluatedRuleGroup[]>;
  /** The group's YAML, revision and persisted state; undefined once the group was deleted. */
  loadGroup(key: RuleGroupKey): Promise<RuleGroupForEvaluation | undefined>;
  /**
   * The alerts of the group's rules an evaluation at `timeMs` reconciles: active ones, and
   * those resolved within the last 20 minutes. Only this group's saves change them (and
   * changes of the group, which move its revision), so a list read before a save that
   * succeeds is still the list at that save.
   */
  listGroupAlerts(key: RuleGroupKey, timeMs: number): Promise<RuleGroupAlertRow[]>;
  /**
   * Persists an evaluation and applies its alert changes, in one transaction, only if the
   * group still exists at `expected.revision` and its stored evaluation time is still
   * `expected.lastEvaluationMs`: false otherwise, and nothing changes. Another owner that
   * evaluated the group in the meantime (after a rebalance), or a change of the group, thereby
   * makes a late write of the previous owner a no-op: no alert fires or resolves twice.
   */
  saveEvaluation(
    key: RuleGroupKey,
    expected: RuleGroupSaveCondition,
    record: RuleGroupEvaluationRecord,
    alerts?: RuleGroupAlertChanges,
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

function fromRow(row: StateRow): RuleGroupWithState {
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
export function createRuleGroupStateStore(
  db: Database,
  options: {
    /** Where firing hosts' services are when their samples live on other shards (issue 59). */
    identities?: ServiceIdentities;
  } = {},
): RuleGroupStateStore {
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
      const [row] = await sql<(StateRow & { revision: string })[]>`
        select g.revision::text as revision, namespace, name, g.definition, s.state,
          s.last_evaluation_ms::text as last_evaluation_ms, s.evaluation_duration_ms, s.rule_health
        from prometheus_rule_groups g
        left join prometheus_rule_group_states s using (org_id, namespace, name)
        where g.org_id = ${orgId} and g.namespace = ${namespace} and g.name = ${name}`;
      return row === undefined ? undefined : { ...fromRow(row), revision: row.revision };
    },
    listGroupAlerts(key, timeMs) {
      return listRuleGroupAlerts(sql, key, timeMs);
    },
    async saveEvaluation(key, expected, record, alerts = noRuleGroupAlertChanges) {
      const { orgId, namespace, name } = key;
      // Outside the transaction: a shard's round trip is no part of it.
      const services =
        options.identities === undefined || alerts.fire.length === 0
          ? new Map<string, ServiceIdentity>()
          : await identifyFiring(options.identities, orgId, alerts.fire);
      return await sql.begin(async (tx) => {
        // The group's row, shared: a change or deletion of the group waits for this save (and
        // then resolves what it must of what this one fired).
        const [group] = await tx<{ revision: string }[]>`
          select revision::text as revision from prometheus_rule_groups
          where org_id = ${orgId} and namespace = ${namespace} and name = ${name}
          for share`;
        if (group?.revision !== expected.revision) return false;
        // `::text::jsonb`: a jsonb-typed parameter would be JSON.stringify'd a second time.
        const saved = await tx`
          insert into prometheus_rule_group_states as s (org_id, namespace, name, state,
            last_evaluation_ms, evaluation_duration_ms, rule_health)
          values (${orgId}, ${namespace}, ${name}, ${JSON.stringify(record.state)}::text::jsonb,
            ${record.lastEvaluationMs}, ${record.durationMs},
            ${JSON.stringify(record.health)}::text::jsonb)
          on conflict (org_id, namespace, name) do update
            set state = excluded.state, last_evaluation_ms = excluded.last_evaluation_ms,
              evaluation_duration_ms = excluded.evaluation_duration_ms,
              rule_health = excluded.rule_health, updated_at = now()
            where ${
              expected.lastEvaluationMs === undefined
                ? sql`false`
                : sql`s.last_evaluation_ms = ${expected.lastEvaluationMs}`
            }`;
        if (saved.count === 0) return false;
        await applyRuleGroupAlertChanges(tx, key, alerts, services);
        return true;
      });
    },
  };
}

/** The firing hosts' services, one time for all as ensureServices gives them: the first firing. */
function identifyFiring(
  identities: ServiceIdentities,
  orgId: string,
  fire: readonly { host: string; firedAtMs: number }[],
): ReturnType<ServiceIdentities> {
  const seenAt = new Date(Math.min(...fire.map((firing) => firing.firedAtMs)));
  return identities(
    orgId,
    fire.map(({ host }) => ({ host, seenAt })),
  );
}
