import type { AlertRule } from '@monitor/schemas';
import type { Database } from '../core/database.js';
import { expectRow } from '../core/expect-row.js';

/** An enabled, non-deleted alert rule, as the evaluator applies it. */
export type LiveRule = Pick<
  AlertRule,
  | 'id'
  | 'name'
  | 'metric'
  | 'condition'
  | 'threshold'
  | 'durationMinutes'
  | 'severity'
  | 'channels'
  | 'scope'
  /* A firing alert resolves only when the condition no longer holds against this (null: the
     threshold); never on the breaching side, never with equal / not_equal. */
  | 'recoveryThreshold'
  /* Minutes (sample time) the resolve condition must keep holding before the alert resolves. */
  | 'keepFiringForMinutes'
  /* Wall-clock minutes without a sample of the metric that make no data; null: off. */
  | 'noDataMinutes'
  /* What no data does: fire a `no_data` alert, resolve the active alert, or nothing. */
  | 'noDataState'
  /* Minutes between notifications of an active, unacknowledged, unsilenced alert; null: off. */
  | 'renotifyMinutes'
  /* The text of notifications with `{{…}}` placeholders; null: the default message. */
  | 'messageTemplate'
  /* Flap detection; null: off. */
  | 'flapping'
> & {
  orgId: string;
  /** Windows of an older generation are void: the rule's evaluation restarted since. */
  generation: number;
};

/** The live rules and the epoch they were read at, from one snapshot. */
export type LiveRuleSnapshot = {
  rules: LiveRule[];
  /**
   * The newest generation any rule took as of the snapshot (migration 12): every rule of a
   * generation up to it that is still live is in `rules`, and any rule that starts later takes
   * a larger one.
   */
  epoch: number;
};

/** Every enabled, non-deleted rule of every organization (the check constraints type them). */
export async function loadLiveRules(db: Database): Promise<LiveRuleSnapshot> {
  return await db.sql.begin('isolation level repeatable read read only', async (tx) => {
    const epochRows = await tx<{ generation: string }[]>`
      select generation from alert_rule_epoch
    `;
    const rows = await tx<(Omit<LiveRule, 'generation'> & { generation: string })[]>`
      select id, org_id as "orgId", name, metric, condition, threshold,
        duration_minutes as "durationMinutes", severity, channels, scope, generation,
        recovery_threshold as "recoveryThreshold",
        keep_firing_for_minutes as "keepFiringForMinutes", no_data_minutes as "noDataMinutes",
        no_data_state as "noDataState", renotify_minutes as "renotifyMinutes",
        message_template as "messageTemplate",
        case when flapping is null then null else jsonb_build_object(
          'windowMinutes', (flapping->>'window_minutes')::int,
          'maxTransitions', (flapping->>'max_transitions')::int) end as flapping
      from alert_rules
      where enabled and deleted_at is null
      order by id
    `;
    return {
      epoch: Number(expectRow(epochRows, 'select from alert_rule_epoch').generation),
      rules: rows.map((row) => ({ ...row, generation: Number(row.generation) })),
    };
  });
}

/**
 * A value that changes with every committed change to any rule row: the row count catches hard
 * deletes, and the sum of revisions (each change takes a new, larger revision from one sequence)
 * strictly grows with every insert or update, soft deletes and disables included; the epoch
 * catches whatever takes a generation (a checkpoint written at an epoch must always be
 * reachable by a reload). Read it BEFORE loading the rules: a change committed in between then
 * shows up as one more change next time.
 */
export async function ruleSetFingerprint(db: Database): Promise<string> {
  const [row] = await db.sql<{ rules: string; revisions: string; epoch: string }[]>`
    select count(*) as rules, coalesce(sum(revision), 0) as revisions,
      (select generation from alert_rule_epoch) as epoch
    from alert_rules
  `;
  return `${row?.rules ?? 0}:${row?.revisions ?? 0}:${row?.epoch ?? 0}`;
}
