import type { Alert, AlertReason, SilenceMatchers } from '@monitor/schemas';
import type { Fragment } from '@monitor/postgres-driver';
import { alertStoredColumns } from './alert-columns.js';
import type { Database, Queryable } from '../core/database.js';
import { silencesInForce, storedMatchers } from '../silences/silence-store.js';

export type ListAlertsQuery = {
  orgId: string;
  /** `all`: active and resolved. */
  status: 'active' | 'resolved' | 'all';
  severity?: string | undefined;
  serviceId?: string | undefined;
  ruleId?: string | undefined;
  acknowledged?: boolean | undefined;
  /** Whether a silence in force at `now` matches it. */
  silenced?: boolean | undefined;
  reason?: AlertReason | undefined;
  /** The instant `silenced` is judged at (default: now). */
  now?: Date | undefined;
  limit: number;
  offset: number;
};

type AcknowledgeInput = {
  orgId: string;
  alertId: string;
  /** The API key id acknowledging it. */
  keyId: string;
  comment: string | null;
  now: Date;
};

export type AlertQueries = {
  /** One page of the org's alerts matching every filter, newest first (id descending), and their number. */
  listAlerts(query: ListAlertsQuery): Promise<{ alerts: Alert[]; total: number }>;
  /** The org's alert (`silenced` as of `now`); undefined for an unknown or another org's alert. */
  getAlert(orgId: string, id: string, now?: Date): Promise<Alert | undefined>;
  /**
   * Acknowledges the org's alert at `now`; an acknowledged one keeps its first acknowledgement.
   * Undefined when there is no such alert.
   */
  acknowledgeAlert(input: AcknowledgeInput): Promise<Alert | undefined>;
  /** Undoes the acknowledgement (idempotent); undefined when there is no such alert. */
  unacknowledgeAlert(orgId: string, alertId: string, now: Date): Promise<Alert | undefined>;
};

/**
 * `silenced` of an alert row aliased `a`: whether any of `matchers` (the silences in force)
 * matches it, every given matcher, tags against its service's tags. A matcher with `orgId`
 * applies to that organization's alerts only (queries across organizations).
 */
export function silencedExpression(
  sql: Queryable,
  matchers: readonly (SilenceMatchers & { orgId?: string })[],
): Fragment {
  if (matchers.length === 0) return sql`false`;
  // `::text::jsonb`: a jsonb-typed parameter would be JSON.stringify'd a second time.
  const json = JSON.stringify(
    matchers.map((matcher) => ({ ...storedMatchers(matcher), org_id: matcher.orgId ?? null })),
  );
  return sql`exists (
    select 1 from jsonb_to_recordset(${json}::text::jsonb)
      as m(org_id text, host text, service_id text, rule_id text, severity text, tags jsonb)
    where (m.org_id is null or m.org_id = a.org_id)
      and (m.host is null or m.host = a.host)
      and (m.service_id is null or m.service_id = a.service_id)
      and (m.rule_id is null or m.rule_id = a.rule_id)
      and (m.severity is null or m.severity = a.severity)
      and (m.tags is null or exists (
        select 1 from services s where s.id = a.service_id and s.tags @> m.tags))
  )`;
}

/** Alerts with `silenced` computed from the silences in force at the time they are read. */
export function createAlertQueries(db: Database): AlertQueries {
  const { sql } = db;

  const matchersAt = async (orgId: string, now: Date) =>
    (await silencesInForce(sql, now, orgId)).map((silence) => silence.matchers);

  const readAlert = async (orgId: string, id: string, now: Date) => {
    const silenced = silencedExpression(sql, await matchersAt(orgId, now));
    const [row] = await sql<Alert[]>`
      select ${sql.unsafe(alertStoredColumns)}, ${silenced} as silenced
      from alerts a where a.id = ${id} and a.org_id = ${orgId}
    `;
    return row;
  };

  return {
    async listAlerts(query) {
      const silenced = silencedExpression(
        sql,
        await matchersAt(query.orgId, query.now ?? new Date()),
      );
      const filters = sql`
        a.org_id = ${query.orgId}
        ${query.status === 'all' ? sql`` : sql`and a.status = ${query.status}`}
        ${query.severity === undefined ? sql`` : sql`and a.severity = ${query.severity}`}
        ${query.serviceId === undefined ? sql`` : sql`and a.service_id = ${query.serviceId}`}
        ${query.ruleId === undefined ? sql`` : sql`and a.rule_id = ${query.ruleId}`}
        ${query.reason === undefined ? sql`` : sql`and a.reason = ${query.reason}`}
        ${
          query.acknowledged === undefined
            ? sql``
            : query.acknowledged
              ? sql`and a.acknowledged_at is not null`
              : sql`and a.acknowledged_at is null`
        }
        ${
          query.silenced === undefined
            ? sql``
            : query.silenced
              ? sql`and ${silenced}`
              : sql`and not ${silenced}`
        }
      `;
      // As pageNewestFirst: the total rides on every row, and on the one null row past the end.
      const rows = await sql<(Partial<Alert> & { total: string })[]>`
        select t.total, p.*
        from (select count(*) as total from alerts a where ${filters}) t
        left join lateral (
          select ${sql.unsafe(alertStoredColumns)}, ${silenced} as silenced
          from alerts a
          where ${filters}
          order by a.id desc
          limit ${query.limit} offset ${query.offset}
        ) p on true
        order by p.id desc
      `;
      return {
        alerts: rows
          .filter((row) => row.id !== null && row.id !== undefined)
          .map(({ total: _total, ...alert }) => alert as Alert),
        total: Number(rows[0]?.total ?? 0),
      };
    },

    async getAlert(orgId, id, now = new Date()) {
      return readAlert(orgId, id, now);
    },

    async acknowledgeAlert({ orgId, alertId, keyId, comment, now }) {
      // Only the first acknowledgement is recorded: acknowledging again changes nothing.
      const [row] = await sql<{ id: string }[]>`
        update alerts set
          acknowledged_at = coalesce(acknowledged_at, ${now}::timestamptz),
          acknowledged_by = case when acknowledged_at is null then ${keyId} else acknowledged_by end,
          acknowledgement_comment = case when acknowledged_at is null then ${comment}::text
            else acknowledgement_comment end
        where id = ${alertId} and org_id = ${orgId}
        returning id
      `;
      return row === undefined ? undefined : readAlert(orgId, alertId, now);
    },

    async unacknowledgeAlert(orgId, alertId, now) {
      const [row] = await sql<{ id: string }[]>`
        update alerts set acknowledged_at = null, acknowledged_by = null,
          acknowledgement_comment = null
        where id = ${alertId} and org_id = ${orgId}
        returning id
      `;
      return row === undefined ? undefined : readAlert(orgId, alertId, now);
    },
  };
}
