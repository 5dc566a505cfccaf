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

export type AlertmanagerResendStore = {
  /**
   * The alerts that Alertmanagers must hear of again to keep them firing (Prometheus re-sends
   * every firing alert): active, fired with channel `alertmanager`, already delivered there
   * once (until then the outbox's own retries carry them), not flapping and not silenced at
   * `now` (the outbox sends neither), of organizations with an `alertmanager` target. Ordered
   * by organization, then alert id: at most `limit` of them, after `after` when given.
   */
  listResends(
    now: Date,
    page: { limit: number; after?: { orgId: string; alertId: string } },
  ): Promise<AlertmanagerResend[]>;
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
          and not ${silenced} ${after}
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
  };
}
