import type { Database } from '../core/database.js';

/**
 * What a benchmark reads back to check a run: how much landed, what the fleet holds, and, after
 * a failover, whether every acknowledged step and alert was stored once.
 */

/** Rows in `samples` right now. */
export async function countSamples(db: Database): Promise<number> {
  const [row] = await db.sql<{ n: string }[]>`select count(*) as n from samples`;
  return Number(row?.n ?? 0);
}

/** Native histograms stored: those written as they came and those compacted into chunks. */
export async function countHistograms(db: Database): Promise<number> {
  const [row] = await db.sql<{ n: string }[]>`
    select (select count(*) from histogram_samples)
      + (select coalesce(sum(samples), 0) from histogram_chunks) as n`;
  return Number(row?.n ?? 0);
}

/** Rows of the raw samples and of both aggregates' views. */
export async function countStoredRows(
  db: Database,
): Promise<{ raw: number; minutes: number; hours: number }> {
  const [stored] = await db.sql<{ raw: number; minutes: number; hours: number }[]>`
    select (select count(*) from samples)::int as raw,
      (select count(*) from samples_1m)::int as minutes,
      (select count(*) from samples_1h)::int as hours`;
  return { raw: stored?.raw ?? 0, minutes: stored?.minutes ?? 0, hours: stored?.hours ?? 0 };
}

/** Rows of `alerts` and of `snapshots`, every organization's. */
export async function countAlertsAndSnapshots(
  db: Database,
): Promise<{ alerts: number; snapshots: number }> {
  const [rows] = await db.sql<{ alerts: string; snapshots: string }[]>`
    select (select count(*) from alerts) as alerts, (select count(*) from snapshots) as snapshots
  `;
  return { alerts: Number(rows?.alerts ?? 0), snapshots: Number(rows?.snapshots ?? 0) };
}

/** Every service of every organization, by name. */
export async function listAllServices(
  db: Database,
): Promise<{ id: string; orgId: string; name: string }[]> {
  const rows = await db.sql<{ id: string; org_id: string; name: string }[]>`
    select id, org_id, name from services order by name
  `;
  return rows.map((row) => ({ id: row.id, orgId: row.org_id, name: row.name }));
}

/** Every series, by service and metric. */
export async function listAllSeries(
  db: Database,
): Promise<{ serviceId: string; metric: string; seriesId: string }[]> {
  const rows = await db.sql<{ service_id: string; metric: string; id: string }[]>`
    select service_id, metric, id from series order by service_id, metric
  `;
  return rows.map((row) => ({ serviceId: row.service_id, metric: row.metric, seriesId: row.id }));
}

/** The server process serving this connection: its parent is the postmaster. */
export async function readBackendPid(db: Database): Promise<number | undefined> {
  const [row] = await db.sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  return row?.pid;
}

/** The largest value stored for `host`'s `metric`; null where there is none. */
export async function readMaxValue(
  db: Database,
  host: string,
  metric: string,
): Promise<number | null> {
  const [row] = await db.sql<{ seq: number | null }[]>`
    select max(sample_value(s.mantissa, s.scale, s.value)) as seq from samples s
    join series r on r.id = s.series_id join services v on v.id = r.service_id
    where v.name = ${host} and r.metric = ${metric}`;
  return row?.seq ?? null;
}

/** Every value stored for `metric` of each of `hosts`, one row per sample. */
export async function listHostValues(
  db: Database,
  hosts: readonly string[],
  metric: string,
): Promise<{ host: string; value: number }[]> {
  const rows = await db.sql<{ host: string; seq: number }[]>`
    select v.name as host, sample_value(s.mantissa, s.scale, s.value) as seq from samples s
    join series r on r.id = s.series_id join services v on v.id = r.service_id
    where v.name = any(${hosts as string[]}) and r.metric = ${metric}`;
  return rows.map((row) => ({ host: row.host, value: row.seq }));
}

/** Rows of `samples` sharing a (series, time) with another. */
export async function countDuplicateSamples(db: Database): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`
    select coalesce(sum(n - 1), 0)::int as n
    from (select count(*) as n from samples group by series_id, time having count(*) > 1) d`;
  return row?.n ?? 0;
}

/** The alerts of `ruleIds`: how many, and how many distinct (rule, fired_at). */
export async function countFiredAlerts(
  db: Database,
  ruleIds: readonly string[],
): Promise<{ fired: number; distinct: number }> {
  const [row] = await db.sql<{ fired: number; distinct: number }[]>`
    select count(*)::int as fired, count(distinct (rule_id, fired_at))::int as distinct
    from alerts where rule_id = any(${ruleIds as string[]})`;
  return { fired: row?.fired ?? 0, distinct: row?.distinct ?? 0 };
}

/** Each alert of `ruleId`: its status and when it fired. */
export async function listRuleAlerts(
  db: Database,
  ruleId: string,
): Promise<{ status: string; firedAt: Date }[]> {
  const rows = await db.sql<{ status: string; fired_at: Date }[]>`
    select status, fired_at from alerts where rule_id = ${ruleId}`;
  return rows.map((row) => ({ status: row.status, firedAt: row.fired_at }));
}

/** Raw samples stamped in [startMs, endMs), for the epoch-millisecond layout. */
export async function countSamplesBetween(
  db: Database,
  startMs: number,
  endMs: number,
): Promise<number> {
  const [row] = await db.sql<{ n: string }[]>`
    select count(*) as n from samples where time >= ${startMs}::bigint and time < ${endMs}::bigint
  `;
  return Number(row?.n ?? 0);
}

/** Alerts of every organization whose rule is none of `ruleIds` (the fleet's, not the probes'). */
export async function countAlertsOfOtherRules(db: Database, ruleIds: string[]): Promise<number> {
  const [row] = await db.sql<{ n: string }[]>`
    select count(*) as n from alerts where rule_id <> all(${ruleIds}::text[])
  `;
  return Number(row?.n ?? 0);
}

/** Alerts of every organization under any rule name but `alertName`. */
export async function countAlertsNotNamed(db: Database, alertName: string): Promise<number> {
  const [row] = await db.sql<{ n: string }[]>`
    select count(*) as n from alerts where rule_name <> ${alertName}
  `;
  return Number(row?.n ?? 0);
}

/**
 * Records of `topic` each consumer group has committed with its transactions, by group: the sum
 * of its partitions' next offsets.
 */
export async function readCommittedRecords(
  db: Database,
  topic: string,
): Promise<Map<string, number>> {
  const rows = await db.sql<{ group_id: string; records: string }[]>`
    select group_id, sum(next_offset) as records from consumer_offsets
    where topic = ${topic} group by group_id
  `;
  return new Map(rows.map((row) => [row.group_id, Number(row.records)]));
}

/**
 * Commits a transaction that takes a transaction id, as any write does: resolves once the server
 * accepts writes (and, synchronous, its standby acknowledges them); rejects on a standby still in
 * recovery. When a promoted standby first stores what a writer sends.
 */
export async function commitWriteProbe(db: Database): Promise<void> {
  await db.sql`select txid_current()`;
}

/** Rows of `evaluator_states`: the (rule, host) windows the evaluator has checkpointed. */
export async function countEvaluatorStates(db: Database): Promise<number> {
  const [row] = await db.sql<{ n: string }[]>`select count(*) as n from evaluator_states`;
  return Number(row?.n ?? 0);
}
