import type { Fragment } from '@monitor/postgres-driver';
import type { Database, Queryable } from '../../core/database.js';
import type { RefreshRollupsResult, Rollup, RollupWindow } from '../rollups.js';
import { bucketStart, hourMs, minuteMs } from '../rollups.js';
import type { RefreshWindows } from './policies.js';
import { rollupRetiredAtMs } from '../retired-rollups.js';

/**
 * Brings the continuous aggregates that are not retired yet up to `now` (migrations 36 and 37
 * retire samples_1m and samples_1h, or the end of migration 24's move of one does:
 * ../retired-rollups.ts) with `refresh_continuous_aggregate` over the refresh policies' windows (`windows`, in hours
 * back). The refresh policies do this by themselves wherever the server runs its job scheduler;
 * this is for a server without one (`timescaledb.max_background_workers = 0`) and for tests that
 * need the materialized part current at a known moment. Must not run inside a transaction
 * (refresh_continuous_aggregate refuses to).
 */
export async function refreshContinuousAggregates(
  db: Database,
  options: { now: Date; windows: RefreshWindows; only?: Rollup },
): Promise<RefreshRollupsResult> {
  const refreshed: RollupWindow[] = [];
  for (const [rollup, bucketMs] of [
    ['samples_1m', minuteMs],
    ['samples_1h', hourMs],
  ] as const) {
    if (options.only !== undefined && options.only !== rollup) continue;
    if ((await rollupRetiredAtMs(db.sql, rollup)) !== undefined) continue;
    const window = options.windows[rollup];
    const to = bucketStart(new Date(options.now.getTime() - window.endHours * hourMs), bucketMs);
    const from = new Date(
      bucketStart(options.now, bucketMs).getTime() - window.startHours * hourMs,
    );
    await refreshOnce(db, rollup, from, to);
    refreshed.push({ rollup, from, to });
  }
  return { mode: 'timescale', refreshed, setAside: [] };
}

/**
 * The options of every refresh we call, as a statement's argument: oldest batch first, as the
 * policies do (policies.ts), so a reader never finds buckets below the watermark that are not
 * materialized yet. Text cast to jsonb: a parameter the server types jsonb is JSON-encoded once
 * more by the driver, and TimescaleDB ignores a jsonb string.
 */
export function refreshOptions(sql: Queryable): Fragment {
  return sql`${JSON.stringify({ refresh_newest_first: false })}::text::jsonb`;
}

/**
 * One refresh; when the scheduler's refresh job is at work on the same aggregate, TimescaleDB
 * refuses a second one at once, so wait for it (its result is not necessarily up to `to`) and
 * refresh again. Up to about 30 s: longer, and the error stands.
 */
async function refreshOnce(db: Database, rollup: string, from: Date, to: Date): Promise<void> {
  // Since migration 24 the aggregates' buckets are epoch milliseconds; before, timestamptz.
  const [bucket] = await db.sql<{ integer: boolean }[]>`
    select format_type(a.atttypid, null) = 'bigint' as integer
    from pg_attribute a
    where a.attrelid = ${rollup}::regclass and a.attname = 'bucket'`;
  const bounds =
    bucket?.integer === true
      ? db.sql`${from.getTime()}::bigint, ${to.getTime()}::bigint`
      : db.sql`${from}::timestamptz, ${to}::timestamptz`;
  for (let attempt = 0; ; attempt++) {
    try {
      await db.sql`call refresh_continuous_aggregate(${rollup}::regclass, ${bounds},
        options => ${refreshOptions(db.sql)})`;
      return;
    } catch (err) {
      const concurrent = err instanceof Error && /due to a concurrent refresh/.test(err.message);
      if (!concurrent || attempt >= 120) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
