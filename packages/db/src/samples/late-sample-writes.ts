import type { Database, TransactionSql } from '../core/database.js';
import type { HostSample } from './sample-batch.js';

const hourMs = 3_600_000;

/** The (organization, hour) pairs of a batch's samples older than `lateBeforeMs`. */
export type LateHours = { orgIds: string[]; hoursMs: number[] };

/**
 * Where a batch wrote samples that were already old: the hours, per organization, of those
 * before `lateBeforeMs`. Usually none (agents send what they just measured).
 */
export function lateHoursOf(samples: readonly HostSample[], lateBeforeMs: number): LateHours {
  const out: LateHours = { orgIds: [], hoursMs: [] };
  let seen: Set<string> | undefined;
  for (const { orgId, timeMs } of samples) {
    if (timeMs >= lateBeforeMs) continue;
    const hour = Math.floor(timeMs / hourMs) * hourMs;
    seen ??= new Set();
    const key = `${hour} ${orgId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.orgIds.push(orgId);
    out.hoursMs.push(hour);
  }
  return out;
}

/**
 * Records the batch's late hours in its own transaction: a cached query result that read one
 * of them and was computed in a snapshot that did not see this transaction is stale. Rows only
 * go in (no row is updated), so writers never wait on each other here.
 */
export async function insertLateSampleWrites(tx: TransactionSql, late: LateHours): Promise<void> {
  if (late.orgIds.length === 0) return;
  await tx`
    insert into late_sample_writes (org_id, hour_ms)
    select * from unnest(${late.orgIds}::text[], ${late.hoursMs}::bigint[])`;
}

/** How long a store that found no `late_sample_writes` waits before it looks again. */
const tableCheckIntervalMs = 10_000;

/**
 * Whether `late_sample_writes` exists, as a writer asks before each batch with late samples:
 * a writer may start before migration 34 runs (the migrate job runs beside the roles), and
 * records late writes from the first batch after it did. Asked on the batch's own transaction:
 * a second connection taken while it holds its locks can wait for ever on a pool that the other
 * transactions, waiting on those locks, fill.
 */
export function createLateWritesTableCheck(
  nowMs: () => number,
): (tx: TransactionSql) => Promise<boolean> {
  let known: boolean | undefined;
  let checkedAtMs = 0;
  return async (tx) => {
    if (known === true) return true;
    if (known === false && nowMs() - checkedAtMs < tableCheckIntervalMs) return false;
    checkedAtMs = nowMs();
    const [row] = await tx<{ exists: boolean }[]>`
      select to_regclass('late_sample_writes') is not null as exists`;
    known = row?.exists === true;
    return known;
  };
}

/**
 * The database's snapshot now, and the transaction ids of the late writes of `orgId` whose
 * hour overlaps [fromMs, toMs], read in that same snapshot.
 */
export async function readLateSampleWrites(
  db: Database,
  orgId: string,
  fromMs: number,
  toMs: number,
): Promise<{ snapshot: string; xids: string[] }> {
  const fromHourMs = Math.floor(fromMs / hourMs) * hourMs;
  const [row] = await db.sql<{ snapshot: string; xids: string[] }[]>`
    select pg_current_snapshot()::text as snapshot,
      array(
        select distinct written_xid::text from late_sample_writes
        where org_id = ${orgId} and hour_ms >= ${fromHourMs}::bigint and hour_ms <= ${toMs}::bigint
      ) as xids`;
  return row!;
}

/**
 * Deletes the records written more than `keepMs` ago: a cached result lives no longer than that
 * (PROMQL_CACHE_SETTLED_MS bounds nothing here; the cache drops entries older than it).
 */
export async function pruneLateSampleWrites(
  db: Database,
  now: Date,
  keepMs: number,
): Promise<number> {
  const rows = await db.sql`
    delete from late_sample_writes
    where written_at < ${new Date(now.getTime() - keepMs)}`;
  return rows.count;
}
