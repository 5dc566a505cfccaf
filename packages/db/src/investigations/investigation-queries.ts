import { newId } from '@monitor/platform';
import type { Database } from '../core/database.js';
import { findShardService } from '../shards/find-shard-service.js';
import { pageNewestFirst } from '../core/page-newest-first.js';

/** An investigation as the API lists it. */
export type InvestigationRow = {
  id: string;
  alertId: string | null;
  serviceId: string;
  title: string;
  status: string;
  /** The jsonb column as the investigator wrote it: `[{ title, detail, evidence }]`. */
  findings: unknown[];
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
};

/** The detail adds the jsonb columns the investigator fills in the contract's shapes. */
export type InvestigationDetailRow = InvestigationRow & {
  /** `{ summary, root_cause, confidence, method }`; null until completed. */
  analysis: unknown;
  /** `[{ at, type, description, data }]` in time order. */
  timeline: unknown[];
  /** `[{ title, detail, priority }]`. */
  recommendations: unknown[];
};

export type ListInvestigationsQuery = {
  orgId: string;
  status?: string | undefined;
  alertId?: string | undefined;
  serviceId?: string | undefined;
  limit: number;
  offset: number;
};

export type InvestigationQueries = {
  /** One page of the org's investigations matching every filter, newest first (id descending). */
  listInvestigations(
    query: ListInvestigationsQuery,
  ): Promise<{ investigations: InvestigationRow[]; total: number }>;
  /** The org's investigation; undefined for an unknown or another org's one. */
  getInvestigation(orgId: string, id: string): Promise<InvestigationDetailRow | undefined>;
  /**
   * The investigation of the org's alert, queued now over the alert's window (started_at ..
   * fired_at) unless the alert has one already (at most one per alert, also under concurrent
   * calls); the alert's `investigation_id` is set if it was null. Undefined for an unknown or
   * another org's alert.
   */
  openForAlert(orgId: string, alertId: string): Promise<InvestigationDetailRow | undefined>;
  /**
   * A new queued investigation of the org's service over `[from, to)`; undefined for an
   * unknown or another org's service.
   */
  openForService(input: {
    orgId: string;
    serviceId: string;
    from: Date;
    to: Date;
  }): Promise<InvestigationDetailRow | undefined>;
};

type InvestigationDbRow = {
  id: string;
  alert_id: string | null;
  service_id: string;
  title: string;
  status: string;
  findings: unknown[];
  analysis: unknown;
  timeline: unknown[];
  recommendations: unknown[];
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
};

const listColumns = `id, alert_id, service_id, title, status, findings, created_at, updated_at,
  completed_at`;
const detailColumns = `${listColumns}, analysis, timeline, recommendations`;

function toInvestigationRow(
  row: Omit<InvestigationDbRow, 'analysis' | 'timeline' | 'recommendations'>,
): InvestigationRow {
  return {
    id: row.id,
    alertId: row.alert_id,
    serviceId: row.service_id,
    title: row.title,
    status: row.status,
    findings: row.findings,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    completedAt: row.completed_at,
  };
}

function toDetailRow(row: InvestigationDbRow): InvestigationDetailRow {
  return {
    ...toInvestigationRow(row),
    analysis: row.analysis,
    timeline: row.timeline,
    recommendations: row.recommendations,
  };
}

/**
 * Reads of table `investigations` for the API, and opening one on demand. The investigator
 * worker fills the rows in; `fireAlert` opens those of firing alerts.
 */
export function createInvestigationQueries(
  db: Database,
  options: {
    /** The sample shards, where services are (issue 59). Unset: `db` holds them. */
    shards?: readonly Database[];
  } = {},
): InvestigationQueries {
  const { sql } = db;
  const shards = options.shards ?? [db];
  return {
    async listInvestigations(query) {
      const filters = sql`
        org_id = ${query.orgId}
        ${query.status === undefined ? sql`` : sql`and status = ${query.status}`}
        ${query.alertId === undefined ? sql`` : sql`and alert_id = ${query.alertId}`}
        ${query.serviceId === undefined ? sql`` : sql`and service_id = ${query.serviceId}`}
      `;
      const { rows, total } = await pageNewestFirst<InvestigationDbRow>(sql, {
        table: 'investigations',
        columns: listColumns,
        filters,
        limit: query.limit,
        offset: query.offset,
      });
      return { investigations: rows.map(toInvestigationRow), total };
    },

    async getInvestigation(orgId, id) {
      const [row] = await sql<InvestigationDbRow[]>`
        select ${sql.unsafe(detailColumns)} from investigations
        where id = ${id} and org_id = ${orgId}
      `;
      return row === undefined ? undefined : toDetailRow(row);
    },

    openForAlert(orgId, alertId) {
      return sql.begin(async (tx) => {
        // The unique index on alert_id makes a concurrent open wait, then do nothing.
        const [created] = await tx<InvestigationDbRow[]>`
          insert into investigations (id, org_id, alert_id, service_id, title, window_from,
            window_to)
          select ${newId('inv')}, org_id, id, service_id, rule_name || ' on ' || host,
            started_at, fired_at
          from alerts where id = ${alertId} and org_id = ${orgId}
          on conflict (alert_id) where alert_id is not null do nothing
          returning ${tx.unsafe(detailColumns)}
        `;
        if (created !== undefined) {
          await tx`
            update alerts set investigation_id = ${created.id}
            where id = ${alertId} and investigation_id is null
          `;
          return toDetailRow(created);
        }
        const [existing] = await tx<InvestigationDbRow[]>`
          select ${tx.unsafe(detailColumns)} from investigations
          where alert_id = ${alertId} and org_id = ${orgId}
        `;
        return existing === undefined ? undefined : toDetailRow(existing);
      });
    },

    async openForService({ orgId, serviceId, from, to }) {
      const found = await findShardService(shards, orgId, serviceId, options.shards !== undefined);
      if (found === undefined) return undefined;
      const { name } = found.service;
      const [row] = await sql<InvestigationDbRow[]>`
        insert into investigations (id, org_id, service_id, title, window_from, window_to)
        values (${newId('inv')}, ${orgId}, ${serviceId},
          ${`${name} from ${from.toISOString()} to ${to.toISOString()}`}, ${from}, ${to})
        returning ${sql.unsafe(detailColumns)}
      `;
      return row === undefined ? undefined : toDetailRow(row);
    },
  };
}
