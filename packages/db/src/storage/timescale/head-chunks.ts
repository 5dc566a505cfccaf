import type { TransactionSql } from '../../core/database.js';
import { run } from '../ddl.js';
import { hourMs } from '../rollups.js';

/*
 * The layout of the newest samples since migration 33 (issue 56). Until then every stored row
 * cost an insertion into a unique btree on (series_id, time), most of the database's CPU per
 * row (docs/benchmarks/hot-path.md). The writer now finds duplicates itself
 * (samples/sample-dedup.ts), so the newest samples need no per-row index:
 *
 * - they are written into short chunks with a BRIN index on time alone, rows appended in the
 *   writer's order (each batch sorted by series);
 * - the compression job compresses a chunk a minute or two after it ended, and TimescaleDB
 *   merges it into the compressed chunk before it (`compress_chunk_time_interval`), up to the
 *   6 hours a chunk covered before, so the chunk count stays what it was;
 * - a merged chunk holds one small batch per series and head chunk (20 rows at a 15 s
 *   interval); `consolidate_sample_chunks` recompresses it in memory as it grows and once it is
 *   full, into batches of up to 1,000 rows, as a 6-hour chunk compressed whole would hold.
 *
 * A read of a few series scans the head chunk it touches (the BRIN index bounds it by time),
 * so the head is kept short; everything older is read from compressed batches by series.
 */

/** How much time a chunk being written covers: the most a read of a few series scans. */
export const headChunkMs = 5 * 60_000;

/**
 * The span a compressed chunk grows to as head chunks merge into it (the raw chunk interval of
 * migration 24): a multiple of `headChunkMs`.
 */
export const compressedChunkMs = 6 * hourMs;

/**
 * How long after a head chunk ended it is compressed, at least: a sample of the chunk that
 * arrives later (scrape jitter, the bus's delivery) still goes into an uncompressed chunk.
 * One that arrives later still lands too, in the compressed chunk's uncompressed part, which
 * the next compression run recompresses.
 */
export const headCompressLagMs = 60_000;

/** The least span of merged head chunks a growing compressed chunk is consolidated for. */
const consolidateAfterMs = hourMs;

/**
 * The longest span of a compressed chunk's samples that sit in merged head-chunk batches,
 * besides the consolidation job's wait: the widest step of the schedule below (at 1, 2 and 4
 * hours and at 6: 2 hours).
 */
export const mergedSpanAtMostMs: number = (() => {
  let widest = 0;
  for (let done = 0; done < compressedChunkMs;) {
    const next = Math.min(compressedChunkMs, Math.max(done + consolidateAfterMs, 2 * done));
    widest = Math.max(widest, next - done);
    done = next;
  }
  return widest;
})();

/**
 * Recompresses compressed samples chunks in memory, committing after each, so that few of a
 * chunk's samples sit in merged head-chunk batches (about 300 bytes a batch, whatever it holds,
 * and a batch read a time): a chunk is consolidated once what merged into it since it was last
 * consolidated spans an hour and as much as what was consolidated before (at 1, 2 and 4 hours
 * of a growing chunk), and once more when no head chunk merges into it any more (full, or
 * ended a whole `compressedChunkMs` ago). A 6-hour chunk is so rewritten about twice over in
 * all (1 + 2 + 4 + 6 hours of it), and at most about 2 hours of it are in small batches.
 * `consolidated_sample_chunks` keeps, by name (a merged chunk keeps the name of the chunk it
 * merged into), how far each chunk was consolidated; a chunk compressed whole (the layout
 * before migration 33) counts as consolidated. Rows of chunks retention dropped go.
 */
const consolidateProcedure = `create or replace procedure consolidate_sample_chunks(
    job_id int, config jsonb)
  language plpgsql as $$
  declare
    candidate record;
    chunk regclass;
  begin
    delete from consolidated_sample_chunks d
    where not exists (
      select from timescaledb_information.chunks c
      where c.hypertable_schema = current_schema() and c.hypertable_name = 'samples'
        and c.chunk_name = d.chunk_name);
    commit;
    for candidate in
      select c.chunk_schema, c.chunk_name, c.range_end_integer as until_ms
      from timescaledb_information.chunks c
      left join consolidated_sample_chunks d on d.chunk_name = c.chunk_name
      cross join lateral (select coalesce(d.until_ms, c.range_start_integer) as done_ms) k
      where c.hypertable_schema = current_schema() and c.hypertable_name = 'samples'
        and c.is_compressed
        and c.range_end_integer > k.done_ms
        and (c.range_end_integer - k.done_ms
            >= greatest(${consolidateAfterMs}, k.done_ms - c.range_start_integer)
          or c.range_end_integer - c.range_start_integer >= ${compressedChunkMs}
          or c.range_end_integer <= unix_now_ms() - ${compressedChunkMs})
      order by c.range_start_integer
    loop
      chunk := format('%I.%I', candidate.chunk_schema, candidate.chunk_name)::regclass;
      -- Rows that arrived late first (the chunk is partial): recompress on a partial chunk
      -- merges only those into their series' batches.
      perform compress_chunk(chunk);
      perform compress_chunk(chunk, recompress => true);
      insert into consolidated_sample_chunks (chunk_name, until_ms)
      values (candidate.chunk_name, candidate.until_ms)
      on conflict (chunk_name) do update set until_ms = excluded.until_ms;
      commit;
    end loop;
  end $$`;

/**
 * Version 33, TimescaleDB: the head layout above. The unique index goes unless samples of
 * migration 24's previous layout are still moving in (their move writes `on conflict do
 * nothing`, and reads look past rows moved twice by it): then the move drops it when it
 * finishes (stored-sample-move.ts). The chunk being written keeps its interval until it ends.
 */
export async function keepHeadUnindexed(sql: TransactionSql): Promise<void> {
  const [moving] = await sql<{ any: boolean }[]>`
    select exists (select from storage_moves where step = 'samples' and finished_at is null)
      as any`;
  if (moving?.any !== true) await run(sql, [dropSampleKey]);
  await run(sql, [
    `select set_chunk_time_interval('samples', ${headChunkMs}::bigint)`,
    // TimescaleDB takes this setting as an interval and keeps its microseconds, which it then
    // compares with chunk ranges in the time column's own unit: milliseconds here.
    `alter table samples set (
      timescaledb.compress_chunk_time_interval = '${compressedChunkMs} microseconds')`,
    `create table consolidated_sample_chunks (
      chunk_name name primary key,
      until_ms bigint not null
    )`,
    `insert into consolidated_sample_chunks (chunk_name, until_ms)
      select chunk_name, range_end_integer from timescaledb_information.chunks
      where hypertable_schema = current_schema() and hypertable_name = 'samples'`,
    consolidateProcedure,
  ]);
}

/** The unique key on (series_id, time) of migrations 16 and 24, where it still exists. */
export const dropSampleKey = 'drop index if exists samples_series_id_time_key';
