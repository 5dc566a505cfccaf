import type { Alert } from '@monitor/schemas';
import { alertStoredColumns } from '../alerts/alert-columns.js';
import { silencedExpression } from '../alerts/alert-queries.js';
import { silencesInForce } from '../silences/silence-store.js';
import type { Database, Sql } from '../core/database.js';
import type { MetricBucketRow } from './metric-history.js';
import { readMetricHistory } from './metric-history.js';

/** Derived per request: see `ServiceQueries`. */
type ServiceHealth = 'healthy' | 'warning' | 'critical' | 'stale';

export type ServiceRow = {
  id: string;
  name: string;
  status: ServiceHealth;
  lastSeen: Date;
  /** The latest value of each metric. */
  metrics: Record<string, number>;
  tags: Record<string, string>;
};

export type ServiceDetailRow = ServiceRow & {
  /** The newest container and process snapshot, if the host ever sent one. */
  snapshot: { time: Date; containers: unknown[]; processes: unknown[] } | undefined;
  /** Newest first. */
  activeAlerts: Alert[];
};

export type { MetricBucketRow } from './metric-history.js';

export type ListServicesQuery = {
  orgId: string;
  status?: ServiceHealth | undefined;
  /** Only services whose tags include every pair. */
  tags?: Readonly<Record<string, string>> | undefined;
  limit: number;
  offset: number;
  /** The clock of the staleness rule. */
  now: Date;
};

export type MetricSeriesQuery = {
  orgId: string;
  serviceId: string;
  metric: string;
  step: '1m' | '1h';
  /** Start of the first bucket; a multiple of the step. */
  from: Date;
  /** End of the last bucket (exclusive); a multiple of the step. */
  to: Date;
};

export type ServiceQueries = {
  /**
   * One page of the organization's services in the documented order (by name, unique within the organization), with the
   * number of all that match. Status is derived in the same statement: `critical` with an active
   * critical alert, else `warning` with an active warning alert, else `stale` when `last_seen`
   * is older than `now` minus the staleness window, else `healthy`.
   */
  listServices(query: ListServicesQuery): Promise<{ services: ServiceRow[]; total: number }>;
  /** The service with its latest snapshot and active alerts; undefined if not the org's. */
  getService(query: {
    orgId: string;
    id: string;
    now: Date;
  }): Promise<ServiceDetailRow | undefined>;
  /**
   * The metric's buckets in `[from, to)`, oldest first (metric-history.ts says from where);
   * undefined if the service is not the org's.
   */
  readMetricSeries(query: MetricSeriesQuery): Promise<MetricBucketRow[] | undefined>;
};

export type ServiceQueriesOptions = {
  /** A service without a sample for longer than this is `stale`. */
  staleAfterSeconds: number;
};

type ServiceDbRow = {
  id: string;
  name: string;
  status: ServiceHealth;
  last_seen: Date;
  metrics: Record<string, number>;
  tags: Record<string, string>;
};

export function createServiceQueries(db: Database, options: ServiceQueriesOptions): ServiceQueries {
  const { sql } = db;
  const staleBefore = (now: Date): Date =>
    new Date(now.getTime() - options.staleAfterSeconds * 1000);

  return {
    async listServices(query) {
      const tagFilter =
        query.tags !== undefined && Object.keys(query.tags).length > 0
          ? sql`and s.tags @> ${sql.json(query.tags)}`
          : sql``;
      if (query.status === undefined) {
        const rows = await sql<(Partial<ServiceDbRow> & { total: string })[]>`
          ${servicesPageStatement(sql, query, staleBefore(query.now))}
        `;
        return toPage(rows);
      }
      // With a status filter every matching service's status is needed: one pass over the
      // org's active alerts (a small partial index), then the total and the page.
      const rows = await sql<(Partial<ServiceDbRow> & { total: string })[]>`
        with matched as (
          select s.id, s.name, ${statusExpression(sql, staleBefore(query.now))} as status
          from services s
          left join (
            select service_id, max(case severity when 'critical' then 2 when 'warning' then 1
              else 0 end) as level
            from alerts
            where org_id = ${query.orgId} and status = 'active'
            group by service_id
          ) a on a.service_id = s.id
          where s.org_id = ${query.orgId} ${tagFilter}
        ),
        filtered as (select id, name, status from matched where status = ${query.status})
        select t.total, p.id, p.name, p.status, s.last_seen, s.metrics, s.tags
        from (select count(*) as total from filtered) t
        left join lateral (
          select id, name, status from filtered order by name
          limit ${query.limit} offset ${query.offset}
        ) p on true
        left join services s on s.id = p.id
        order by p.name
      `;
      return toPage(rows);
    },

    async getService(query) {
      const [rows, alerts] = await Promise.all([
        sql<(ServiceDbRow & SnapshotColumns)[]>`
          select s.id, s.name, s.last_seen, s.metrics, s.tags,
            ${statusExpression(sql, staleBefore(query.now))} as status, ${newestSnapshot(sql)}
          left join lateral (${activeAlertLevel(sql)}) a on true
          where s.id = ${query.id} and s.org_id = ${query.orgId}
        `,
        activeServiceAlerts(sql, query),
      ]);
      const row = rows[0];
      return row === undefined ? undefined : serviceDetail(toService(row), row, alerts);
    },

    async readMetricSeries(query) {
      const seriesIds = await metricSeriesIds(sql, query);
      return seriesIds === undefined ? undefined : await readServiceMetric(sql, query, seriesIds);
    },
  };
}

/**
 * The series of the service's metric; undefined if the service is not the organization's here
 * (with `skipCopies`, a shard's copy of another shard's service is not). A metric it never sent has none. A metric
 * written through an agent protocol has a series per label set: its history is theirs taken
 * together (metric-history.ts).
 */
export async function metricSeriesIds(
  sql: Sql,
  query: Pick<MetricSeriesQuery, 'orgId' | 'serviceId' | 'metric'>,
  /** Sample shards only: one database never holds copies (nor, before migration 41, the column). */
  skipCopies = false,
): Promise<string[] | undefined> {
  const [owner] = await sql<{ series_ids: string[] }[]>`
    select coalesce(array_agg(r.id::text order by r.id) filter (where r.id is not null),
      '{}') as series_ids
    from services s
    left join series r on r.service_id = s.id and r.metric = ${query.metric}
    where s.id = ${query.serviceId} and s.org_id = ${query.orgId}
      ${skipCopies ? sql`and not s.shard_copy` : sql``}
    group by s.id
  `;
  return owner?.series_ids;
}

/** The buckets of `seriesIds` (see `ServiceQueries.readMetricSeries`). */
export async function readServiceMetric(
  sql: Sql,
  query: MetricSeriesQuery,
  seriesIds: readonly string[],
): Promise<MetricBucketRow[]> {
  if (seriesIds.length === 0) return [];
  return await readMetricHistory(
    sql,
    { step: query.step, fromMs: query.from.getTime(), toMs: query.to.getTime() },
    seriesIds,
  );
}

/** A service's newest snapshot as `left join lateral (…) snap` reads it (all null: none). */
export type SnapshotColumns = {
  snapshot_time: Date | null;
  containers: unknown;
  processes: unknown;
};

/**
 * The columns of `SnapshotColumns` and `from services s` joined with the newest snapshot of
 * `s`, so a `left join`, the filter and nothing else may follow.
 */
export function newestSnapshot(sql: Sql) {
  return sql`snap.time as snapshot_time, snap.containers, snap.processes
    from services s
    left join lateral (
      select time, containers, processes from snapshots
      where service_id = s.id
      order by time desc
      limit 1
    ) snap on true`;
}

/** The detail of `service`: its newest snapshot and its active alerts. */
export function serviceDetail(
  service: ServiceRow,
  snapshot: SnapshotColumns,
  activeAlerts: Alert[],
): ServiceDetailRow {
  return {
    ...service,
    snapshot:
      snapshot.snapshot_time === null
        ? undefined
        : {
            time: snapshot.snapshot_time,
            containers: asArray(snapshot.containers),
            processes: asArray(snapshot.processes),
          },
    activeAlerts,
  };
}

/** The service's active alerts, newest first, `silenced` judged by the silences in force at `now`. */
export async function activeServiceAlerts(
  sql: Sql,
  query: { orgId: string; id: string; now: Date },
): Promise<Alert[]> {
  const silences = await silencesInForce(sql, query.now, query.orgId);
  const silenced = silencedExpression(
    sql,
    silences.map((silence) => silence.matchers),
  );
  return await sql<Alert[]>`
    select ${sql.unsafe(alertStoredColumns)}, ${silenced} as silenced from alerts a
    where a.service_id = ${query.id} and a.org_id = ${query.orgId} and a.status = 'active'
    order by a.fired_at desc, a.id desc
  `;
}

/**
 * The page of the services list without a status filter, as a fragment so the benchmark can
 * `explain` the very statement the API runs. Names are unique within an organization, so the
 * `(org_id, name)` index yields the order; the page's ids are picked from it first and only
 * those rows are read whole, so a deep offset walks the index instead of sorting the
 * organization. The status is derived for the page's rows only. The total rides on every row
 * (and on the one null row of an empty page, so a page past the end still reports it).
 */
export function servicesPageStatement(
  sql: Sql,
  query: Pick<ListServicesQuery, 'orgId' | 'tags' | 'limit' | 'offset'>,
  staleBefore: Date,
) {
  const tagFilter =
    query.tags !== undefined && Object.keys(query.tags).length > 0
      ? sql`and s.tags @> ${sql.json(query.tags)}`
      : sql``;
  return sql`
    select t.total, p.id, p.name, p.status, p.last_seen, p.metrics, p.tags
    from (select count(*) as total from services s where s.org_id = ${query.orgId} ${tagFilter}) t
    left join lateral (
      select s.id, s.name, s.last_seen, s.metrics, s.tags,
        ${statusExpression(sql, staleBefore)} as status
      from (
        select s.id from services s
        where s.org_id = ${query.orgId} ${tagFilter}
        order by s.name
        limit ${query.limit} offset ${query.offset}
      ) page
      join services s on s.id = page.id
      left join lateral (${activeAlertLevel(sql)}) a on true
    ) p on true
    order by p.name
  `;
}

/** For `left join lateral (…) a`: 2 with an active critical alert of `s`, 1 warning, else null/0. */
function activeAlertLevel(sql: Sql) {
  return sql`
    select max(case severity when 'critical' then 2 when 'warning' then 1 else 0 end) as level
    from alerts
    where service_id = s.id and status = 'active'
  `;
}

/** Rows of a list query carrying `total`; a page past the end is one row of nulls. */
function toPage(rows: readonly (Partial<ServiceDbRow> & { total: string })[]): {
  services: ServiceRow[];
  total: number;
} {
  const total = Number(rows[0]?.total ?? 0);
  const services = rows.filter((row) => row.id !== null && row.id !== undefined).map(toService);
  return { services, total };
}

/** `a.level` comes from a join over the service's active alerts (null: none). */
function statusExpression(sql: Sql, staleBefore: Date) {
  return sql`case
    when a.level = 2 then 'critical'
    when a.level = 1 then 'warning'
    when s.last_seen < ${staleBefore} then 'stale'
    else 'healthy'
  end`;
}

function toService(row: Partial<ServiceDbRow>): ServiceRow {
  return {
    id: row.id as string,
    name: row.name as string,
    status: row.status as ServiceHealth,
    lastSeen: row.last_seen as Date,
    metrics: row.metrics ?? {},
    tags: row.tags ?? {},
  };
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}
