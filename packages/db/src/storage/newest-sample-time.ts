import type { TransactionSql } from '../core/database.js';
import { previousLayout } from './timescale/read-functions.js';
import type { StorageMode } from './storage-mode.js';

/**
 * The newest time (epoch ms) of any stored sample, raw or unaggregated, or null when none is:
 * what `sample_newest_bounds` starts from (migration 32). On TimescaleDB the chunks of `samples`
 * are read newest first until one holds a row, so a big database reads one chunk, not all;
 * plain PostgreSQL (a fallback for small installations) reads its tables whole.
 */
export async function newestSampleTimeMs(
  sql: TransactionSql,
  mode: StorageMode,
): Promise<number | null> {
  const newest: (number | null)[] = [];
  const [unaggregated] = await sql<{ ms: string | null }[]>`
    select (extract(epoch from max(time)) * 1000)::bigint as ms from unaggregated_samples`;
  newest.push(unaggregated?.ms == null ? null : Number(unaggregated.ms));
  if (mode === 'postgres') {
    const [raw] = await sql<{ ms: string | null }[]>`
      select (extract(epoch from max(time)) * 1000)::bigint as ms from samples`;
    newest.push(raw?.ms == null ? null : Number(raw.ms));
  } else {
    for (const table of ['samples', `samples${previousLayout}`]) {
      newest.push(await newestInChunks(sql, table));
    }
  }
  const known = newest.filter((ms): ms is number => ms !== null);
  return known.length === 0 ? null : Math.max(...known);
}

/** The newest time in a hypertable's chunks, newest chunk first (null: none, or no table). */
async function newestInChunks(sql: TransactionSql, table: string): Promise<number | null> {
  const [exists] = await sql<{ found: boolean }[]>`
    select to_regclass(${table}) is not null as found`;
  if (exists?.found !== true) return null;
  const chunks = await sql<{ chunk: string; integer_time: boolean }[]>`
    select format('%I.%I', chunk_schema, chunk_name) as chunk,
      range_end_integer is not null as integer_time
    from timescaledb_information.chunks
    where hypertable_schema = current_schema() and hypertable_name = ${table}
    order by coalesce(range_end_integer, (extract(epoch from range_end) * 1000)::bigint) desc
  `;
  for (const { chunk, integer_time: integerTime } of chunks) {
    const [row] = await sql.unsafe<{ ms: string | null }[]>(
      integerTime
        ? `select max(time) as ms from ${chunk}`
        : `select (extract(epoch from max(time)) * 1000)::bigint as ms from ${chunk}`,
    );
    if (row?.ms != null) return Number(row.ms);
  }
  return null;
}
