import type { Alert } from '@monitor/schemas';
import { alertStoredColumns } from '../alerts/alert-columns.js';
import { silencedExpression } from '../alerts/alert-queries.js';
import type { Database } from '../core/database.js';
import { silencesInForce } from '../silences/silence-store.js';

/** One active alert to post to its organization's Alertmanagers again. */
export type AlertmanagerResend = {
  orgId: string;
  alert: Alert;
  /** The organization's `alertmanager` target (validated by the API when it was PUT). */
  target: Readonly<Record<string, unknown>>;
  /** The rule's `message_template`; null: the default message. */
  messageTemplate: string | null;
  /** The tags of the alert's service (labels in Alertmanager). */
  tags: Readonly<Record<string, string>>;
};

/** An alert of a rule file that its rule's evaluation asked to post again. */
export type RuleAlertResend = {
  orgId: string;
  alert: Alert;
  /** The organization's `alertmanager` target. */
  target: Readonly<Record<string, unknown>>;
  /** Prometheus' ValidUntil as of that evaluation (null once resolved). */
  validUntil: Date | null;
};

export type AlertmanagerResendStore = {
  /**
   * The alerts of our own rules that Alertmanagers must hear of again to keep them firing
   * (Prometheus re-sends every firing alert): active, fired with channel `alertmanager`,
   * already delivered there once (until then the outbox's own retries carry them), not flapping
   * and not silenced at `now` (the outbox sends neither), of organizations with an
   * `alertmanager` target. Ordered by organization, then alert id: at most `limit` of them,
   * after `after` when given. (A rule file's alerts are re-sent when their evaluations say.)
   */
  listResends(
    now: Date,
    page: { limit: number; after?: { orgId: string; alertId: string } },
  ): Promise<AlertmanagerResend[]>;
  /**
   * Takes up to `limit` of the re-sends rule evaluations asked for (oldest first, safely across
   * replicas) and clears them: best effort, as Prometheus' notifier (the next re-send makes up
   * for a lost one within the alert's validity). Returns those to post: not silenced at `now`,
   * of organizations with an `alertmanager` target; the others are dropped.
   */
  takeRuleAlertResends(now: Date, limit: number): Promise<RuleAlertResend[]>;
};

type ResendRow = Omit<Alert, 'silenced'> & {
  orgId: string;
  config: Record<string, unknown>;
  message_template: string | null;
  tags: Record<string, string> | null;
};

export function createAlertmanagerResendStore(db: Database): AlertmanagerResendStore {
  const { sql } = db;
  return {
    async listResends(now, page) {
      const silences = await silencesInForce(sql, now);
      const silenced = silencedExpression(
        sql,
        silences.map((silence) => ({ ...silence.matchers, orgId: silence.orgId })),
      );
      const after =
        page.after === undefined
          ? sql``
          : sql`and (a.org_id, a.id) > (${page.after.orgId}, ${page.after.alertId})`;
      // Only `alerts` is in the outer FROM, so its columns need no qualifying; the rest comes
      // from scalar subqueries.
      const rows = await sql<ResendRow[]>`
        select ${sql.unsafe(alertStoredColumns)}, org_id as "orgId",
          (select c.config from notification_channels c
            where c.org_id = a.org_id and c.type = 'alertmanager') as config,
          (select r.message_template from alert_rules r where r.id = a.rule_id)
            as message_template,
          (select sv.tags from services sv where sv.id = a.service_id) as tags
        from alerts a
        where a.status = 'active' and 'alertmanager' = any(a.channels) and not a.flapping
          and a.condition is not null and not ${silenced} ${after}
          and exists (select 1 from notification_channels c
            where c.org_id = a.org_id and c.type = 'alertmanager')
          and exists (select 1 from notifications n
            where n.alert_id = a.id and n.channel = 'alertmanager' and n.status = 'delivered')
        order by a.org_id, a.id
        limit ${page.limit}
      `;
      return rows.map(({ orgId, config, message_template, tags, ...alert }) => ({
        orgId,
        alert: { ...alert, silenced: false },
        target: config,
        messageTemplate: message_template,
        tags: tags ?? {},
      }));
    },
    async takeRuleAlertResends(now, limit) {
      const silences = await silencesInForce(sql, now);
      const silenced = silencedExpression(
        sql,
        silences.map((silence) => ({ ...silence.matchers, orgId: silence.orgId })),
      );
      // `due` names its column apart from every column of `alerts`, which RETURNING reads
      // unqualified.
      const rows = await sql<TakenRow[]>`
        with due as (
          select id as due_id from alerts where resend_due_at is not null
          order by resend_due_at
          limit ${limit}
          for update skip locked
        )
        update alerts a set resend_due_at = null
        from due where a.id = due.due_id
        returning ${sql.unsafe(alertStoredColumns)}, org_id as "orgId", valid_until,
          ${silenced} as silenced,
          (select c.config from notification_channels c
            where c.org_id = a.org_id and c.type = 'alertmanager') as config
      `;
      return rows.flatMap(({ orgId, valid_until, silenced: isSilenced, config, ...alert }) =>
        isSilenced || config === null
          ? []
          : [
              {
                orgId,
                alert: { ...alert, silenced: false },
                target: config,
                validUntil: valid_until,
              },
            ],
      );
    },
  };
}

type TakenRow = Omit<Alert, 'silenced'> & {
  orgId: string;
  valid_until: Date | null;
  silenced: boolean;
  config: Record<string, unknown> | null;
};
