import { newId } from '@monitor/platform';
import type { AlertRule, AlertRuleDraft, AlertRuleFields } from '@monitor/schemas';
import { alertRuleOptionDefaults } from '@monitor/schemas';
import { resolveAlerts } from '../alerts/alert-transitions.js';
import type { Database, TransactionSql } from '../core/database.js';
import { expectRow } from '../core/expect-row.js';
import { pageNewestFirst } from '../core/page-newest-first.js';

export type RuleStore = {
  /** Stores a new rule of the org with a fresh id (absent options take their defaults). */
  createRule(orgId: string, draft: AlertRuleDraft): Promise<AlertRule>;
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
   * `now` in the same transaction, after the rule row is updated. `validate` sees the rule as
   * it would be stored (the row locked, the changes applied) and throws to change nothing.
   */
  updateRule(
    orgId: string,
    id: string,
    changes: Partial<AlertRuleFields>,
    now: Date,
    validate?: (rule: AlertRuleFields) => void,
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
  recovery_threshold as "recoveryThreshold", keep_firing_for_minutes as "keepFiringForMinutes",
  no_data_minutes as "noDataMinutes", no_data_state as "noDataState",
  renotify_minutes as "renotifyMinutes", message_template as "messageTemplate",
  case when flapping is null then null else jsonb_build_object(
    'windowMinutes', (flapping->>'window_minutes')::int,
    'maxTransitions', (flapping->>'max_transitions')::int) end as flapping,
  created_at as "createdAt", updated_at as "updatedAt"`;

/** A rule's flapping as stored: the API's snake_case object. */
function storedFlapping(flapping: AlertRuleFields['flapping']): string | null {
  return flapping === null
    ? null
    : JSON.stringify({
        window_minutes: flapping.windowMinutes,
        max_transitions: flapping.maxTransitions,
      });
}

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
    async createRule(orgId, draft) {
      const fields = { ...alertRuleOptionDefaults, ...definedOnly(draft) } as AlertRuleFields;
      return sql.begin(async (tx) => {
        const generation = await startGeneration(tx);
        const rows = await tx<AlertRule[]>`
          insert into alert_rules (id, org_id, name, metric, condition, threshold,
            duration_minutes, severity, channels, scope, enabled, revision, generation,
            recovery_threshold, keep_firing_for_minutes, no_data_minutes, no_data_state,
            renotify_minutes, message_template, flapping)
          values (${newId('rul')}, ${orgId}, ${fields.name}, ${fields.metric}, ${fields.condition},
            ${fields.threshold}, ${fields.durationMinutes}, ${fields.severity},
            ${tx.array([...fields.channels])}, ${jsonb(tx, fields.scope)}, ${fields.enabled},
            ${generation}, ${generation}, ${fields.recoveryThreshold},
            ${fields.keepFiringForMinutes}, ${fields.noDataMinutes}, ${fields.noDataState},
            ${fields.renotifyMinutes}, ${fields.messageTemplate},
            ${storedFlapping(fields.flapping)}::text::jsonb)
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

    async updateRule(orgId, id, changes, now, validate) {
      return sql.begin(async (tx) => {
        // A change of what the rule evaluates restarts its evaluation (see migration 11). The
        // fields of how an alert resolves, goes quiet, repeats, reads or flaps take effect on
        // the evaluation under way.
        const restarts =
          changes.metric !== undefined ||
          changes.condition !== undefined ||
          changes.threshold !== undefined ||
          changes.durationMinutes !== undefined ||
          changes.scope !== undefined ||
          changes.enabled !== undefined;
        // The rule row first: an unknown rule changes nothing (no generation taken), and an
        // evaluator firing it (which reads it `for share`) has committed or waits for us.
        const [current] = await tx<AlertRule[]>`
          select ${tx.unsafe(ruleColumns)} from alert_rules
          where id = ${id} and org_id = ${orgId} and deleted_at is null
          for update
        `;
        if (current === undefined) return undefined;
        const next: AlertRuleFields = { ...fieldsOf(current), ...definedOnly(changes) };
        // Before anything is written: a refused change leaves the rule and its alerts as they were.
        validate?.(next);
        if (restarts) await restartEvaluation(tx, orgId, id, now);
        // The epoch last, so rule changes of other organizations wait for it only briefly.
        const generation = restarts ? await startGeneration(tx) : null;
        const rows = await tx<AlertRule[]>`
          update alert_rules set
            name = ${next.name},
            metric = ${next.metric},
            condition = ${next.condition},
            threshold = ${next.threshold},
            duration_minutes = ${next.durationMinutes},
            severity = ${next.severity},
            channels = ${tx.array([...next.channels])}::text[],
            scope = ${JSON.stringify(next.scope)}::text::jsonb,
            enabled = ${next.enabled},
            recovery_threshold = ${next.recoveryThreshold}::float8,
            keep_firing_for_minutes = ${next.keepFiringForMinutes},
            no_data_minutes = ${next.noDataMinutes}::int,
            no_data_state = ${next.noDataState},
            renotify_minutes = ${next.renotifyMinutes}::int,
            message_template = ${next.messageTemplate}::text,
            flapping = ${storedFlapping(next.flapping)}::text::jsonb,
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

/** The rule without what the store assigns. */
function fieldsOf(rule: AlertRule): AlertRuleFields {
  const fields: Partial<AlertRule> = { ...rule };
  delete fields.id;
  delete fields.createdAt;
  delete fields.updatedAt;
  return fields as AlertRuleFields;
}

/** The changes a PATCH sets (an absent field is `undefined` and keeps the stored value). */
function definedOnly<T extends object>(changes: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(changes).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
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
