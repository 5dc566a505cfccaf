import { newId } from '@monitor/platform';
import type { AlertRule, AlertRuleFields } from '@monitor/schemas';
import { resolveAlerts } from '../alerts/alert-transitions.js';
import type { Database, TransactionSql } from '../core/database.js';
import { expectRow } from '../core/expect-row.js';
import { pageNewestFirst } from '../core/page-newest-first.js';

export type RuleStore = {
  /** Stores a new rule of the org with a fresh id. */
  createRule(orgId: string, fields: AlertRuleFields): Promise<AlertRule>;
  /** One page of the org's live rules, newest first (id descending), with their number. */
  listRules(query: {
    orgId: string;
    limit: number;
    offset: number;
  }): Promise<{ rules: AlertRule[]; total: number }>;
  /** The org's live rule; undefined for an unknown, deleted or other org's rule. */
  getRule(orgId: string, id: string): Promise<AlertRule | undefined>;
  /**
   * Changes the given fields of the org's live rule (renewing its revision, so evaluators pick
   * the change up); undefined if there is none. Disabling it resolves its active alerts at
   * `now` in the same transaction, after the rule row is updated.
   */
  updateRule(
    orgId: string,
    id: string,
    changes: Partial<AlertRuleFields>,
    now: Date,
  ): Promise<AlertRule | undefined>;
  /**
   * Soft-deletes the org's live rule and resolves its active alerts at `now`, in one
   * transaction; false if there was no such rule (so deleting twice is a 404 the second time).
   */
  deleteRule(orgId: string, id: string, now: Date): Promise<boolean>;
};

/** The select list that reads an `alert_rules` row as an `AlertRule` (checks hold the enums). */
const ruleColumns = `id, name, metric, condition, threshold,
  duration_minutes as "durationMinutes", severity, channels, scope, enabled,
  created_at as "createdAt", updated_at as "updatedAt"`;

/**
 * Rules in table `alert_rules`. Every change (create, update, delete) takes a new `revision`
 * from the `alert_rule_revisions` sequence: the evaluators' change fingerprint. Resolving alerts
 * after the rule row was written closes the race with `fireAlert`, which reads the rule
 * `for share`: a fire either commits first (and is resolved here) or sees the rule gone.
 */
export function createRuleStore(db: Database): RuleStore {
  const { sql } = db;
  // `::text::jsonb`: a jsonb-typed parameter would be JSON.stringify'd a second time.
  const jsonb = (tx: TransactionSql, value: object) => tx`${JSON.stringify(value)}::text::jsonb`;

  return {
    async createRule(orgId, fields) {
      return sql.begin(async (tx) => {
        const generation = await startGeneration(tx);
        const rows = await tx<AlertRule[]>`
          insert into alert_rules (id, org_id, name, metric, condition, threshold,
            duration_minutes, severity, channels, scope, enabled, revision, generation)
          values (${newId('rul')}, ${orgId}, ${fields.name}, ${fields.metric}, ${fields.condition},
            ${fields.threshold}, ${fields.durationMinutes}, ${fields.severity},
            ${tx.array([...fields.channels])}, ${jsonb(tx, fields.scope)}, ${fields.enabled},
            ${generation}, ${generation})
          returning ${tx.unsafe(ruleColumns)}
        `;
        return expectRow(rows, 'insert into alert_rules');
      });
    },

    async listRules({ orgId, limit, offset }) {
      const { rows, total } = await pageNewestFirst<AlertRule>(sql, {
        table: 'alert_rules',
        columns: ruleColumns,
        filters: sql`org_id = ${orgId} and deleted_at is null`,
        limit,
        offset,
      });
      return { rules: rows, total };
    },

    async getRule(orgId, id) {
      const [row] = await sql<AlertRule[]>`
        select ${sql.unsafe(ruleColumns)} from alert_rules
        where id = ${id} and org_id = ${orgId} and deleted_at is null
      `;
      return row;
    },

    async updateRule(orgId, id, changes, now) {
      const optional = <T>(value: T | undefined): T | null => (value === undefined ? null : value);
      return sql.begin(async (tx) => {
        // A change of what the rule evaluates restarts its evaluation (see migration 11).
        const restarts =
          changes.metric !== undefined ||
          changes.condition !== undefined ||
          changes.threshold !== undefined ||
          changes.durationMinutes !== undefined ||
          changes.scope !== undefined ||
          changes.enabled !== undefined;
        // The rule row first: an unknown rule changes nothing (no generation taken), and an
        // evaluator firing it (which reads it `for share`) has committed or waits for us.
        const [locked] = await tx<{ id: string }[]>`
          select id from alert_rules
          where id = ${id} and org_id = ${orgId} and deleted_at is null
          for update
        `;
        if (locked === undefined) return undefined;
        if (restarts) await restartEvaluation(tx, orgId, id, now);
        // The epoch last, so rule changes of other organizations wait for it only briefly.
        const generation = restarts ? await startGeneration(tx) : null;
        // One statement for any subset: an absent field is a null parameter that keeps the column.
        const rows = await tx<AlertRule[]>`
          update alert_rules set
            name = coalesce(${optional(changes.name)}::text, name),
            metric = coalesce(${optional(changes.metric)}::text, metric),
            condition = coalesce(${optional(changes.condition)}::text, condition),
            threshold = coalesce(${optional(changes.threshold)}::float8, threshold),
            duration_minutes = coalesce(${optional(changes.durationMinutes)}::int, duration_minutes),
            severity = coalesce(${optional(changes.severity)}::text, severity),
            channels = coalesce(${
              changes.channels === undefined ? null : tx.array([...changes.channels])
            }::text[], channels),
            scope = coalesce(${
              changes.scope === undefined ? null : JSON.stringify(changes.scope)
            }::text::jsonb, scope),
            enabled = coalesce(${optional(changes.enabled)}::boolean, enabled),
            revision = coalesce(${generation}::bigint, nextval('alert_rule_revisions')),
            generation = coalesce(${generation}::bigint, generation),
            updated_at = now()
          where id = ${id} and org_id = ${orgId} and deleted_at is null
          returning ${tx.unsafe(ruleColumns)}
        `;
        return expectRow(rows, 'update alert_rules');
      });
    },

    async deleteRule(orgId, id, now) {
      return sql.begin(async (tx) => {
        const [row] = await tx<{ id: string }[]>`
          update alert_rules set deleted_at = now(), revision = nextval('alert_rule_revisions'),
            updated_at = now()
          where id = ${id} and org_id = ${orgId} and deleted_at is null
          returning id
        `;
        if (row === undefined) return false;
        await restartEvaluation(tx, orgId, id, now);
        return true;
      });
    },
  };
}

/**
 * A new generation for a rule created or restarted in this transaction, taken while the
 * `alert_rule_epoch` row is locked: generations then commit in the order of their values, so
 * the epoch an evaluator reads with the rules is a complete boundary (migration 12).
 */
async function startGeneration(tx: TransactionSql): Promise<number> {
  const rows = await tx<{ generation: string }[]>`
    update alert_rule_epoch set generation = nextval('alert_rule_revisions') returning generation
  `;
  return Number(expectRow(rows, 'update alert_rule_epoch').generation);
}

/**
 * With the rule row locked (so an evaluator firing it, which reads the row `for share`, has
 * committed or will see the change): resolves the rule's active alerts and deletes its
 * windows, so no alert outlives what the rule now says and evaluation starts afresh.
 */
async function restartEvaluation(
  tx: TransactionSql,
  orgId: string,
  ruleId: string,
  now: Date,
): Promise<void> {
  await resolveAlerts(tx, { orgId, ruleId }, now);
  await tx`delete from evaluator_states where org_id = ${orgId} and rule_id = ${ruleId}`;
}
