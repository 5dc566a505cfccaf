import type { TransactionSql } from '../core/database.js';
import type { CheckedPoint, StoredPoints } from './sample-dedup.js';

/**
 * What is stored at the checked points' (series, time), raw or unaggregated, in one statement:
 * the raw samples through the read functions (so a layout being moved is read where each point
 * is), all the checked series over the checked span at once, since the newest samples have no
 * index by series (storage/timescale/head-chunks.ts): a look per point would scan the chunk
 * being written once per point.
 */
export async function selectStoredPoints(
  tx: TransactionSql,
  checks: readonly CheckedPoint[],
): Promise<StoredPoints> {
  const stored = new Map<number, Map<number, number>>();
  if (checks.length === 0) return stored;
  let fromMs = Number.POSITIVE_INFINITY;
  let toMs = Number.NEGATIVE_INFINITY;
  const seriesIds = new Set<number>();
  for (const { seriesId, timeMs } of checks) {
    fromMs = Math.min(fromMs, timeMs);
    toMs = Math.max(toMs, timeMs);
    seriesIds.add(seriesId);
  }
  // Unprepared, so planned with the ids as a constant: a seq scan of a head chunk then looks
  // each row's series up in a hash of them, where a generic plan of a prepared statement
  // compares each row with every id.
  const rows = await tx.unsafe<{ series_id: string; time_ms: string; value: number }[]>(
    `with u (s, t) as (select * from unnest($1::int8[], $2::int8[]))
    select r.series_id, r.time_ms, r.value
    from raw_samples($3::int8[], $4, $5) r
    join u on u.s = r.series_id and u.t = r.time_ms
    union all
    select a.series_id, u.t, a.value
    from u join unaggregated_samples a
      on a.series_id = u.s and a.time = timestamptz 'epoch' + u.t * interval '1 millisecond'`,
    [
      checks.map((point) => point.seriesId),
      checks.map((point) => point.timeMs),
      [...seriesIds],
      fromMs,
      toMs,
    ],
    { prepare: false },
  );
  for (const row of rows) {
    const seriesId = Number(row.series_id);
    let byTime = stored.get(seriesId);
    if (byTime === undefined) stored.set(seriesId, (byTime = new Map<number, number>()));
    // Both tables may hold a point stored before this rule (each had its own key): the first
    // read stands, as readers would merge them.
    if (!byTime.has(Number(row.time_ms))) byTime.set(Number(row.time_ms), Number(row.value));
  }
  return stored;
}
