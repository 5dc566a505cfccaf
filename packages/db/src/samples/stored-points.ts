import type { TransactionSql } from '../core/database.js';
import type { CheckedPoint, StoredPoints } from './sample-dedup.js';

/**
 * What is stored at the checked points' (series, time), raw or unaggregated: one look per
 * point, through the read functions (so a layout being moved is read where each point is).
 */
export async function selectStoredPoints(
  tx: TransactionSql,
  checks: readonly CheckedPoint[],
): Promise<StoredPoints> {
  const stored = new Map<number, Map<number, number>>();
  if (checks.length === 0) return stored;
  const rows = await tx<{ series_id: string; time_ms: string; value: number }[]>`
    select r.series_id, r.time_ms, r.value
    from unnest(${checks.map((point) => point.seriesId)}::int8[],
      ${checks.map((point) => point.timeMs)}::int8[]) as u(s, t)
    cross join lateral (
      select series_id, time_ms, value from raw_samples(array[u.s], u.t, u.t)
      union all
      select series_id, (extract(epoch from time) * 1000)::bigint, value
      from unaggregated_samples
      where series_id = u.s and time = timestamptz 'epoch' + u.t * interval '1 millisecond'
    ) r
  `;
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
