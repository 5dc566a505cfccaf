import type { Alert } from '@monitor/schemas';
import type { Database } from '../core/database.js';
import type {
  ListServicesQuery,
  ServiceQueries,
  ServiceQueriesOptions,
  ServiceRow,
  SnapshotColumns,
} from './service-queries.js';
import {
  activeServiceAlerts,
  metricSeriesIds,
  newestSnapshot,
  readServiceMetric,
  serviceDetail,
} from './service-queries.js';

type ShardServiceRow = {
  id: string;
  name: string;
  last_seen: Date;
  metrics: Record<string, number>;
  tags: Record<string, string>;
};

/**
 * `ServiceQueries` of a deployment whose services live on several sample shards and whose
 * alerts live in the control database (issue 59), answering as one database holding both
 * would. A service lives on the shard of its host's partition; the control database's copies
 * of alerted services (`shard_copy`) are never answered as services.
 */
export function createShardedServiceQueries(
  control: Database,
  shards: readonly Database[],
  options: ServiceQueriesOptions,
): ServiceQueries {
  return {
    listServices: (query) => listShardedServices(control, shards, query, options.staleAfterSeconds),

    async getService(query) {
      const [found, alerts] = await Promise.all([
        Promise.all(
          shards.map(
            ({ sql }) => sql<(ShardServiceRow & SnapshotColumns)[]>`
              select s.id, s.name, s.last_seen, s.metrics, s.tags, ${newestSnapshot(sql)}
              where s.id = ${query.id} and s.org_id = ${query.orgId} and not s.shard_copy`,
          ),
        ),
        activeServiceAlerts(control.sql, query),
      ]);
      const row = found.flat()[0];
      if (row === undefined) return undefined;
      const level = Math.max(0, ...alerts.map(alertLevel));
      const staleBefore = new Date(query.now.getTime() - options.staleAfterSeconds * 1000);
      return serviceDetail(toService(row, level, staleBefore), row, alerts);
    },

    async readMetricSeries(query) {
      const owners = await Promise.all(
        shards.map(async (shard) => ({
          shard,
          seriesIds: await metricSeriesIds(shard.sql, query, true),
        })),
      );
      const owner = owners.find(({ seriesIds }) => seriesIds !== undefined);
      if (owner?.seriesIds === undefined) return undefined;
      return await readServiceMetric(owner.shard.sql, query, owner.seriesIds);
    },
  };
}

/**
 * The services list of a deployment whose services live on several sample shards and whose
 * alerts live in the control database (issue 59): the same page, total and statuses as
 * `ServiceQueries.listServices` over one database holding both. Each shard answers its first
 * `offset + limit` matching names and its count; the control database gives the alert levels of
 * the organization's hosts (an active alert names its host) and puts the names in its
 * collation's order, the order one database's `order by name` gives.
 */
async function listShardedServices(
  control: Database,
  shards: readonly Database[],
  query: ListServicesQuery,
  staleAfterSeconds: number,
): Promise<{ services: ServiceRow[]; total: number }> {
  const staleBefore = new Date(query.now.getTime() - staleAfterSeconds * 1000);
  const levels = await alertLevelsByHost(control, query.orgId);
  // Hosts whose status an alert decides (an info alert leaves it to staleness).
  const alerted = [...levels].filter(([, level]) => level > 0).map(([host]) => host);
  const wanted = query.offset + query.limit;
  const answers = await Promise.all(
    shards.map(async ({ sql }) => {
      const tagFilter =
        query.tags !== undefined && Object.keys(query.tags).length > 0
          ? sql`and s.tags @> ${sql.json(query.tags)}`
          : sql``;
      // The status filter as far as a shard can judge it: alerted hosts come from the control
      // database, staleness from the shard's own last_seen.
      const statusFilter =
        query.status === undefined
          ? sql``
          : query.status === 'critical' || query.status === 'warning'
            ? sql`and s.name = any(${hostsAt(levels, query.status === 'critical' ? 2 : 1)}::text[])`
            : sql`and s.name <> all(${alerted}::text[]) and s.last_seen ${
                query.status === 'stale' ? sql`<` : sql`>=`
              } ${staleBefore}`;
      const [counted, rows] = await Promise.all([
        sql<{ total: string }[]>`
          select count(*) as total from services s
          where s.org_id = ${query.orgId} and not s.shard_copy ${tagFilter} ${statusFilter}`,
        sql<ShardServiceRow[]>`
          select s.id, s.name, s.last_seen, s.metrics, s.tags from services s
          where s.org_id = ${query.orgId} and not s.shard_copy ${tagFilter} ${statusFilter}
          order by s.name limit ${wanted}`,
      ]);
      return { total: Number(counted[0]?.total ?? 0), rows };
    }),
  );
  const candidates = answers.flatMap((answer) => answer.rows);
  const order = await control.sql<{ name: string }[]>`
    select name from unnest(${candidates.map((row) => row.name)}::text[]) as u(name)
    order by name offset ${query.offset} limit ${query.limit}`;
  const byName = new Map(candidates.map((row) => [row.name, row]));
  const services = order.map(({ name }) =>
    toService(byName.get(name) as ShardServiceRow, levels.get(name) ?? 0, staleBefore),
  );
  return { services, total: answers.reduce((sum, answer) => sum + answer.total, 0) };
}

/** 2 for a host with an active critical alert, 1 warning, 0 info; hosts without one absent. */
async function alertLevelsByHost(control: Database, orgId: string): Promise<Map<string, number>> {
  const rows = await control.sql<{ host: string; level: number }[]>`
    select host, max(case severity when 'critical' then 2 when 'warning' then 1 else 0 end)::int
      as level
    from alerts where org_id = ${orgId} and status = 'active'
    group by host`;
  return new Map(rows.map((row) => [row.host, row.level]));
}

function hostsAt(levels: ReadonlyMap<string, number>, level: number): string[] {
  return [...levels].filter(([, each]) => each === level).map(([host]) => host);
}

/** A shard's row with its status: `level` of its active alerts (2 critical, 1 warning). */
function toService(row: ShardServiceRow, level: number, staleBefore: Date): ServiceRow {
  return {
    id: row.id,
    name: row.name,
    status:
      level === 2
        ? 'critical'
        : level === 1
          ? 'warning'
          : row.last_seen < staleBefore
            ? 'stale'
            : 'healthy',
    lastSeen: row.last_seen,
    metrics: row.metrics ?? {},
    tags: row.tags ?? {},
  };
}

function alertLevel(alert: Alert): number {
  return alert.severity === 'critical' ? 2 : alert.severity === 'warning' ? 1 : 0;
}
