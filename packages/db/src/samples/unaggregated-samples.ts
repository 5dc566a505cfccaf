import type { TransactionSql } from '../core/database.js';

/**
 * The values of a batch that go to `unaggregated_samples` (see `isAggregatable`), flat, with
 * each one's place among the batch's other samples: how many of them arrived before it.
 */
export type UnaggregatedRows = {
  timesMs: number[];
  seriesIds: number[];
  values: number[];
  samplesBefore: number[];
};

/**
 * A value as PostgreSQL's float8 input reads it: `NaN`, `Infinity` and `-Infinity` are its own
 * spellings, and a finite number's shortest round-trip text reads back as the same double.
 */
function float8Text(value: number): string {
  return String(value);
}

/**
 * Inserts the batch's unaggregated samples in the caller's transaction; a point already stored
 * (a replay, an agent's retry) is kept. No statement when there are none.
 */
export async function insertUnaggregatedSamples(
  tx: TransactionSql,
  rows: UnaggregatedRows,
): Promise<{ written: number; skipped: number }> {
  const { timesMs, seriesIds, values } = rows;
  if (timesMs.length === 0) return { written: 0, skipped: 0 };
  // Values as text: a float8[] parameter would carry NaN and ±Inf as postgres.js formats them.
  const inserted = await tx`
    insert into unaggregated_samples (series_id, time, value)
    select s, timestamptz 'epoch' + t * interval '1 millisecond', v::float8
    from unnest(${seriesIds}::int8[], ${timesMs}::float8[], ${values.map(float8Text)}::text[])
      as u(s, t, v)
    on conflict do nothing
  `;
  return { written: inserted.count, skipped: timesMs.length - inserted.count };
}
