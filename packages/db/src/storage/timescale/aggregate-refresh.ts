import type { Database } from '../../core/database.js';
import type { RefreshRollupsResult, RollupWindow } from '../rollups.js';
import { bucketStart, hourMs, minuteMs } from '../rollups.js';
import type { RefreshWindows } from './policies.js';

/**
 * Brings the continuous aggregates up to `now` with `refresh_continuous_aggregate` over the
 * refresh policies' windows (`windows`, in hours back). The refresh policies do this by themselves wherever the server runs its job
 * scheduler; this is for a server without one (`timescaledb.max_background_workers = 0`) and
 * for tests that need the materialized part current at a known moment. Must not run inside a
 * transaction (refresh_continuous_aggregate refuses to).
 */
export async function refreshContinuousAggregates(
  db: Database,
  options: { now: Date; windows: RefreshWindows },
): Promise<RefreshRollupsResult> {
  const refreshed: RollupWindow[] = [];
  for (const [rollup, bucketMs] of [
    ['samples_1m', minuteMs],
    ['samples_1h', hourMs],
  ] as const) {
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
 * One refresh; when the scheduler's refresh job is at work on the same aggregate, TimescaleDB
 * refuses a second one at once, so wait for it (its result is not necessarily up to `to`) and
 * refresh again. Up to about 30 s: longer, and the error stands.
 */
async function refreshOnce(db: Database, rollup: string, from: Date, to: Date): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await db.sql`
        call refresh_continuous_aggregate(${rollup}::regclass, ${from}::timestamptz, ${to}::timestamptz)
      `;
      return;
    } catch (err) {
      const concurrent = err instanceof Error && /due to a concurrent refresh/.test(err.message);
      if (!concurrent || attempt >= 120) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
