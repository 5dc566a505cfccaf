import type { TimeRange } from '@monitor/promql';
import type { Sql } from '../core/database.js';
import { decodeFloat8Array, decodeTimestampArray } from './binary-arrays.js';
import type { StoredPoints } from './merge-series-points.js';

// The two small reads beside a selection's samples: few rows each, so one ordered statement
// each on a pooled connection. Never canceled: they are quick, and on a pooled connection the
// statement a cancel reaches may be the one the pool sent behind it, another query's.

/**
 * The unaggregated samples (NaN, ±Inf, beyond ±1e100) of the stored series `ids` in `range`,
 * per series id, in time order.
 */
export async function readUnaggregatedSamples(
  sql: Sql,
  ids: string[],
  range: TimeRange,
): Promise<Map<string, StoredPoints>> {
  const rows = await sql<{ id: string; t: Buffer; v: Buffer }[]>`
    select series_id::text as id, array_send(array_agg(time order by time)) as t,
      array_send(array_agg(value order by time)) as v
    from unaggregated_samples
    where series_id = any(${ids}::bigint[])
      and time >= ${new Date(range.startMs)} and time <= ${new Date(range.endMs)}
    group by series_id
  `;
  return new Map(
    rows.map((r) => [
      r.id,
      { timestampsMs: decodeTimestampArray(r.t), values: decodeFloat8Array(r.v) },
    ]),
  );
}

/** The staleness markers of the stored series `ids` in `range`, as points valued NaN. */
export async function readStaleMarkers(
  sql: Sql,
  ids: string[],
  range: TimeRange,
): Promise<Map<string, StoredPoints>> {
  const rows = await sql<{ id: string; t: Buffer }[]>`
    select series_id::text as id, array_send(array_agg(time order by time)) as t
    from stale_markers
    where series_id = any(${ids}::bigint[])
      and time >= ${new Date(range.startMs)} and time <= ${new Date(range.endMs)}
    group by series_id
  `;
  return new Map(
    rows.map((r) => {
      const timestampsMs = decodeTimestampArray(r.t);
      const values = new Float64Array(timestampsMs.length).fill(NaN);
      return [r.id, { timestampsMs, values, stale: true as const }];
    }),
  );
}
