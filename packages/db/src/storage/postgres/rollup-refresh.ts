import { isTransientDbError, sqlState } from '../../core/classify-db-error.js';
import type { Database, TransactionSql } from '../../core/database.js';
import type {
  RefreshRollupsResult,
  Rollup,
  RollupChunkSetAside,
  RollupWindow,
} from '../rollups.js';
import { bucketStart, hourMs, minuteMs, rollupValueBound } from '../rollups.js';
import { rollupRetiredAtMs } from '../retired-rollups.js';

/**
 * The refresh recomputes from its watermark minus these lookbacks: 2 hours back, like the
 * policy, to count late samples.
 */
const plainRefreshLookbackMs = { samples_1m: 2 * hourMs, samples_1h: 2 * hourMs };

/**
 * The window plain mode recomputes for a rollup: from `lookbackMs` before its watermark (from
 * the beginning when it never ran) up to the start of the bucket containing `now`; undefined
 * when `onlyWhenAdvanced` and no new bucket completed since the watermark.
 */
export function plainRefreshWindow(options: {
  rollup: Rollup;
  now: Date;
  watermark: Date | null;
  onlyWhenAdvanced: boolean;
}): RollupWindow | undefined {
  const { rollup, now, watermark } = options;
  // Buckets start at UTC minutes and hours, like time_bucket, whatever the session time zone:
  // the SQL uses date_bin from 2000-01-01 00:00 UTC.
  const to = bucketStart(now, rollup === 'samples_1m' ? minuteMs : hourMs);
  if (options.onlyWhenAdvanced && watermark !== null && to.getTime() <= watermark.getTime()) {
    return undefined;
  }
  const from =
    watermark === null ? null : new Date(watermark.getTime() - plainRefreshLookbackMs[rollup]);
  if (from !== null && from.getTime() >= to.getTime()) return undefined;
  return { rollup, from, to };
}

/**
 * Brings the rollup tables up to `now` (complete buckets), each until its retiring migration
 * (36 for samples_1m, 37 for samples_1h: ../retired-rollups.ts), so a database migrated to the
 * end refreshes neither: recomputes each rollup's window with INSERT … SELECT … ON CONFLICT DO
 * UPDATE and moves its watermark, in one transaction that also keeps concurrent refreshers
 * apart. samples_1h is refreshed when a new hour completed.
 */
export async function refreshRollupTables(
  db: Database,
  options: { now: Date },
): Promise<RefreshRollupsResult> {
  return await db.sql.begin(async (sql) => {
    await sql`set local lock_timeout = '10s'`;
    // The row locks make a second refresher wait for this one instead of racing it.
    const rows = await sql<{ rollup: string; watermark: Date | null }[]>`
      select rollup, watermark from rollup_watermarks order by rollup for update
    `;
    const watermark = (rollup: Rollup): Date | null =>
      rows.find((row) => row.rollup === rollup)?.watermark ?? null;
    const refreshed: RollupWindow[] = [];
    const setAside: RollupChunkSetAside[] = [];

    // Minutes first (hours were built from them before migration 36); samples_1h is refreshed
    // when a new hour completed. A retired rollup's rows stay as they are until its retention.
    for (const [rollup, statement, onlyWhenAdvanced] of [
      ['samples_1m', minuteStatement, false],
      ['samples_1h', hourStatement, true],
    ] as const) {
      if ((await rollupRetiredAtMs(sql, rollup)) !== undefined) continue;
      const window = plainRefreshWindow({
        rollup,
        now: options.now,
        watermark: watermark(rollup),
        onlyWhenAdvanced,
      });
      if (window === undefined) continue;
      setAside.push(...(await refreshIsolated(sql, window, statement)));
      await moveWatermark(sql, window);
      refreshed.push(window);
    }
    return { mode: 'postgres', refreshed, setAside };
  });
}

/** Recomputes a window, of every organization (`orgId` undefined) or of one. */
type RollupStatement = (
  sql: TransactionSql,
  window: RollupWindow,
  orgId: string | undefined,
) => Promise<unknown>;

/**
 * Runs `statement` over the whole window in a savepoint. If the data makes it fail (a permanent
 * error: a data exception, a constraint), no organization may wedge the others: it is run again
 * for one organization at a time, each in its own savepoint, and those that still fail are set
 * aside and returned. Transient errors (lock timeout, lost connection) are thrown: the whole
 * refresh is simply retried next time.
 */
async function refreshIsolated(
  sql: TransactionSql,
  window: RollupWindow,
  statement: RollupStatement,
): Promise<RollupChunkSetAside[]> {
  try {
    await sql.savepoint((inner) => statement(inner, window, undefined));
    return [];
  } catch (err) {
    if (isTransientDbError(err)) throw err;
  }
  const orgs = await sql<{ org_id: string }[]>`select distinct org_id from services order by 1`;
  const setAside: RollupChunkSetAside[] = [];
  for (const { org_id: orgId } of orgs) {
    try {
      await sql.savepoint((inner) => statement(inner, window, orgId));
    } catch (err) {
      if (isTransientDbError(err)) throw err;
      setAside.push({
        ...window,
        orgId,
        sqlState: sqlState(err),
        message: err instanceof Error ? err.message : String(err),
      });
    }
  }
  return setAside;
}

/** `and series_id in (the organization's series)`, or nothing for every organization. */
function ofOrganization(sql: TransactionSql, orgId: string | undefined) {
  return orgId === undefined
    ? sql``
    : sql`and series_id in (
        select r.id from series r join services s on s.id = r.service_id where s.org_id = ${orgId}
      )`;
}

/** A bucket computed again replaces the stored one, written only when it changed. */
const replaceChangedBuckets = (sql: TransactionSql) => sql`
  on conflict (series_id, bucket) do update set
    avg = excluded.avg, min = excluded.min, max = excluded.max,
    count = excluded.count, sum = excluded.sum
  where (r.count, r.sum, r.min, r.max)
    is distinct from (excluded.count, excluded.sum, excluded.min, excluded.max)
`;

/** The buckets of `width` of the window's raw samples, clamped (see rollupValueBound). */
const bucketStatement =
  (rollup: Rollup, width: string): RollupStatement =>
  (sql, window, orgId) => sql`
  insert into ${sql(`${rollup}_materialized`)} as r (bucket, series_id, avg, min, max, count, sum)
  select date_bin(${width}::interval, time, timestamptz '2000-01-01 00:00:00+00'), series_id,
    sum(v) / count(*), min(v), max(v), count(*), sum(v)
  from (
    select time, series_id,
      least(greatest(sample_value(mantissa, scale, value), ${-rollupValueBound}::float8),
        ${rollupValueBound}::float8) as v
    from samples
    where time >= ${lowerBound(window)}::text::timestamptz and time < ${window.to}
      ${ofOrganization(sql, orgId)}
  ) clamped
  group by 1, 2
  ${replaceChangedBuckets(sql)}
`;

const minuteStatement = bucketStatement('samples_1m', '1 minute');

/**
 * Hours from the raw samples: since migration 36 no minutes are materialized to build them
 * from (../retired-rollups.ts).
 */
const hourStatement = bucketStatement('samples_1h', '1 hour');

async function moveWatermark(sql: TransactionSql, window: RollupWindow): Promise<void> {
  await sql`
    update rollup_watermarks
    set watermark = greatest(watermark, ${window.to}), refreshed_at = now()
    where rollup = ${window.rollup}
  `;
}

/**
 * `from` as a bound the planner can prune partitions with (no `is null or …`). Sent as text:
 * postgres.js would turn a string into a Date for a timestamptz parameter, and `-infinity`
 * is no Date.
 */
function lowerBound(window: RollupWindow): string {
  return window.from === null ? '-infinity' : window.from.toISOString();
}

/** Rollup rows deleted per statement, and statements per run: a backlog drains over runs. */
const pruneBatchSize = 50_000;
const pruneBatchesPerRun = 10;

/**
 * Deletes rollup rows past their retention (ROLLUP_1M_RETENTION_DAYS, ROLLUP_1H_RETENTION_DAYS),
 * as TimescaleDB's retention jobs drop the aggregates' old chunks. Returns the rows deleted.
 */
export async function pruneRollupTables(
  db: Database,
  options: {
    now: Date;
    policies: { rollup1mRetentionDays: number; rollup1hRetentionDays: number };
  },
): Promise<number> {
  let pruned = 0;
  const retention = [
    ['samples_1m_materialized', options.policies.rollup1mRetentionDays],
    ['samples_1h_materialized', options.policies.rollup1hRetentionDays],
  ] as const;
  for (const [rollup, days] of retention) {
    const cutoff = new Date(options.now.getTime() - days * 24 * hourMs);
    for (let batch = 0; batch < pruneBatchesPerRun; batch++) {
      const deleted = await db.sql`
        delete from ${db.sql(rollup)} where ctid = any (array(
          select ctid from ${db.sql(rollup)} where bucket < ${cutoff} limit ${pruneBatchSize}
        ))
      `;
      pruned += deleted.count;
      if (deleted.count < pruneBatchSize) break;
    }
  }
  return pruned;
}
