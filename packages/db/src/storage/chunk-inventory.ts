import type { Database } from '../core/database.js';

/** One chunk of a hypertable or of an aggregate's materialization, its range in epoch ms. */
type ChunkPart = {
  startMs: number;
  endMs: number;
  compressed: boolean;
  /** Compressed size where compressed, else the chunk's total size (indexes and TOAST in). */
  bytes: number;
};

/** The chunks of `relation`: a hypertable, or a continuous aggregate named by its view. */
export async function listChunkParts(db: Database, relation: string): Promise<ChunkPart[]> {
  const rows = await db.sql<
    { start_ms: string; end_ms: string; compressed: boolean; bytes: string }[]
  >`
    with h as (
      select hypertable_schema as schema, hypertable_name as name
      from timescaledb_information.hypertables
      where hypertable_schema = current_schema() and hypertable_name = ${relation}
      union all
      select materialization_hypertable_schema, materialization_hypertable_name
      from timescaledb_information.continuous_aggregates
      where view_schema = current_schema() and view_name = ${relation}
    )
    select coalesce(c.range_start_integer, (extract(epoch from c.range_start) * 1000)::bigint)
        as start_ms,
      coalesce(c.range_end_integer, (extract(epoch from c.range_end) * 1000)::bigint) as end_ms,
      c.is_compressed as compressed,
      -- The relations as they are: chunk_compression_stats keeps the sizes of the last
      -- compression, not of a recompression in memory (storage/timescale/head-chunks.ts). A
      -- compressed chunk's own table holds what arrived since (none, usually).
      pg_total_relation_size(format('%I.%I', c.chunk_schema, c.chunk_name)::regclass)
        + case when z.id is null then 0
          else pg_total_relation_size(format('%I.%I', z.schema_name, z.table_name)::regclass) end
        as bytes
    from h
    join timescaledb_information.chunks c
      on c.hypertable_schema = h.schema and c.hypertable_name = h.name
    join _timescaledb_catalog.chunk k
      on k.schema_name = c.chunk_schema and k.table_name = c.chunk_name
    left join _timescaledb_catalog.chunk z on z.id = k.compressed_chunk_id
  `;
  return rows.map((row) => ({
    startMs: Number(row.start_ms),
    endMs: Number(row.end_ms),
    compressed: row.compressed,
    bytes: Number(row.bytes),
  }));
}

/** The raw samples' chunks (range in epoch ms, whether compressed), as the catalog lists them. */
export async function listRawChunks(
  db: Database,
): Promise<{ startMs: number; endMs: number; compressed: boolean }[]> {
  const rows = await db.sql<{ start: number; end: number; compressed: boolean }[]>`
    select range_start_integer::float8 as start, range_end_integer::float8 as end,
      is_compressed as compressed
    from timescaledb_information.chunks where hypertable_name = 'samples'
  `;
  return rows.map((row) => ({ startMs: row.start, endMs: row.end, compressed: row.compressed }));
}

/** The raw samples' chunk interval, as migrate() made it; throws where samples is no hypertable. */
export async function readRawChunkIntervalMs(db: Database): Promise<number> {
  const [row] = await db.sql<{ ms: string }[]>`
    select coalesce(integer_interval, extract(epoch from time_interval) * 1000) as ms
    from timescaledb_information.dimensions
    where hypertable_name = 'samples' and column_name = 'time'
  `;
  const ms = Number(row?.ms);
  if (!Number.isFinite(ms) || ms <= 0) throw new Error('samples is not a hypertable');
  return ms;
}
