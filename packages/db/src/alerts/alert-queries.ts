import type { Alert } from '@monitor/schemas';
import { alertColumns } from './alert-columns.js';
import type { Database } from '../core/database.js';
import { pageNewestFirst } from '../core/page-newest-first.js';

export type ListAlertsQuery = {
  orgId: string;
  /** `all`: active and resolved. */
  status: 'active' | 'resolved' | 'all';
  severity?: string | undefined;
  serviceId?: string | undefined;
  ruleId?: string | undefined;
  limit: number;
  offset: number;
};

export type AlertQueries = {
  /** One page of the org's alerts matching every filter, newest first (id descending), and their number. */
  listAlerts(query: ListAlertsQuery): Promise<{ alerts: Alert[]; total: number }>;
  /** The org's alert; undefined for an unknown or another org's alert. */
  getAlert(orgId: string, id: string): Promise<Alert | undefined>;
};

/** Reads of table `alerts` for the API; alerts are written only by `fireAlert`/`resolveAlerts`. */
export function createAlertQueries(db: Database): AlertQueries {
  const { sql } = db;
  return {
    async listAlerts(query) {
      const filters = sql`
        org_id = ${query.orgId}
        ${query.status === 'all' ? sql`` : sql`and status = ${query.status}`}
        ${query.severity === undefined ? sql`` : sql`and severity = ${query.severity}`}
        ${query.serviceId === undefined ? sql`` : sql`and service_id = ${query.serviceId}`}
        ${query.ruleId === undefined ? sql`` : sql`and rule_id = ${query.ruleId}`}
      `;
      const { rows, total } = await pageNewestFirst<Alert>(sql, {
        table: 'alerts',
        columns: alertColumns,
        filters,
        limit: query.limit,
        offset: query.offset,
      });
      return { alerts: rows, total };
    },

    async getAlert(orgId, id) {
      const [row] = await sql<Alert[]>`
        select ${sql.unsafe(alertColumns)} from alerts where id = ${id} and org_id = ${orgId}
      `;
      return row;
    },
  };
}
