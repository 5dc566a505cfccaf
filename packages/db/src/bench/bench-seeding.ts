import type { Database } from '../core/database.js';
import { copyIn } from '../samples/copy-in.js';

/**
 * Rows a benchmark writes straight into the tables, bypassing the writer: a seeded fleet of
 * services, the series of a fleet, an older layout's samples, and the writer's COPY on its own.
 */

/** A seeded service's row; the JSON columns as JSON text. */
export type SeedService = {
  id: string;
  name: string;
  tagsJson: string;
  metricsJson: string;
  metricTimesJson: string;
  lastSeen: string;
};

/** Inserts `services` into `orgId` with one statement, whatever their number (unnest). */
export async function insertSeedServices(
  db: Database,
  orgId: string,
  services: readonly SeedService[],
): Promise<void> {
  const column = <K extends keyof SeedService>(key: K): SeedService[K][] =>
    services.map((s) => s[key]);
  await db.sql`
    insert into services (id, org_id, name, tags, metrics, metric_times, last_seen)
    select id, ${orgId}, name, tags::jsonb, metrics::jsonb, metric_times::jsonb,
      last_seen::timestamptz
    from unnest(
      ${column('id')}::text[],
      ${column('name')}::text[],
      ${column('tagsJson')}::text[],
      ${column('metricsJson')}::text[],
      ${column('metricTimesJson')}::text[],
      ${column('lastSeen')}::text[]
    ) as u(id, name, tags, metrics, metric_times, last_seen)
  `;
}

/** A seeded snapshot of a service's containers and processes, as JSON text. */
type SeedSnapshot = {
  time: string;
  serviceId: string;
  containersJson: string;
  processesJson: string;
};

export async function insertSeedSnapshots(
  db: Database,
  snapshots: readonly SeedSnapshot[],
): Promise<void> {
  const column = <K extends keyof SeedSnapshot>(key: K): SeedSnapshot[K][] =>
    snapshots.map((s) => s[key]);
  await db.sql`
    insert into snapshots (time, service_id, containers, processes)
    select time::timestamptz, service_id, containers::json, processes::json
    from unnest(
      ${column('time')}::text[],
      ${column('serviceId')}::text[],
      ${column('containersJson')}::text[],
      ${column('processesJson')}::text[]
    ) as u(time, service_id, containers, processes)
  `;
}

/** A seeded alert of a `cpu_percent > 90` rule; times as ISO text. */
export type SeedAlert = {
  id: string;
  ruleId: string;
  ruleName: string;
  serviceId: string;
  host: string;
  severity: string;
  status: 'active' | 'resolved';
  value: number;
  startedAt: string;
  firedAt: string;
  resolvedAt: string | null;
};

export async function insertSeedAlerts(
  db: Database,
  orgId: string,
  alerts: readonly SeedAlert[],
): Promise<void> {
  const column = <K extends keyof SeedAlert>(key: K): SeedAlert[K][] => alerts.map((a) => a[key]);
  await db.sql`
    insert into alerts (id, org_id, rule_id, rule_name, service_id, host, metric, condition,
      threshold, severity, status, value, started_at, fired_at, resolved_at)
    select id, ${orgId}, rule_id, rule_name, service_id, host, 'cpu_percent', 'greater_than',
      90, severity, status, value, started_at::timestamptz, fired_at::timestamptz,
      resolved_at::timestamptz
    from unnest(
      ${column('id')}::text[],
      ${column('ruleId')}::text[],
      ${column('ruleName')}::text[],
      ${column('serviceId')}::text[],
      ${column('host')}::text[],
      ${column('severity')}::text[],
      ${column('status')}::text[],
      ${column('value')}::float8[],
      ${column('startedAt')}::text[],
      ${column('firedAt')}::text[],
      ${column('resolvedAt')}::text[]
    ) as u(id, rule_id, rule_name, service_id, host, severity, status, value, started_at,
      fired_at, resolved_at)
  `;
}

/**
 * The series of every (service, metric), created where missing; resolves each one's id keyed
 * `${serviceId}\u0000${metric}`.
 */
export async function ensureSeries(
  db: Database,
  serviceIds: readonly string[],
  metrics: readonly string[],
): Promise<Map<string, number>> {
  await db.sql`
    insert into series (service_id, metric)
    select s, m from unnest(${serviceIds as string[]}::text[]) as s,
      unnest(${metrics as string[]}::text[]) as m
    on conflict (service_id, metric, (coalesce(md5(labels::text), ''))) do nothing
  `;
  const rows = await db.sql<{ id: string; service_id: string; metric: string }[]>`
    select id, service_id, metric from series
    where service_id = any(${serviceIds as string[]}::text[])
  `;
  return new Map(rows.map((r) => [`${r.service_id}\u0000${r.metric}`, Number(r.id)]));
}

/**
 * Writes the samples as the layout before migration 24 stored them (float8 `value` only, one
 * decimal, timestamptz time): one host, `series` metrics, `points` points 20 s apart ending at
 * `endMs`. For a database migrated up to that layout (`migrateBefore(db, 24)`).
 */
export async function writeFloat8Layout(
  db: Database,
  options: { series: number; points: number; startMs: number },
): Promise<void> {
  await db.sql`
    insert into services (id, org_id, name, last_seen)
    values ('svc_move', 'org_move', 'move-host', now())`;
  await db.sql`
    insert into series (service_id, metric)
    select 'svc_move', 'metric_' || i from generate_series(1, ${options.series}) i`;
  await db.sql`
    insert into samples (time, series_id, value)
    select ${new Date(options.startMs)}::timestamptz + p * interval '20 seconds', r.id,
      round((50 + 40 * sin(p / 17.0 + r.id))::numeric, 1)::float8
    from series r, generate_series(0, ${options.points - 1}) p`;
}

/** COPYs `chunks` (the writer's binary encoding of sample rows) into `samples`, as the writer does. */
export async function copyBinarySamples(db: Database, chunks: Iterable<Uint8Array>): Promise<void> {
  await copyIn(
    db.sql`copy samples (time, series_id, mantissa, scale, value) from stdin (format binary)`,
    chunks,
  );
}
