import type { Database } from '../core/database.js';
import { keptTiers } from '../storage/kept-tiers.js';
import type { KeptTier } from '../storage/kept-tiers.js';

/*
 * A kept tier's chunk at steady state, for bench:storage (issue 57): a bench's history is a day
 * or so, a tier's chunk 7 or 30 days. The rows the writer's maintenance stored are copied back
 * by whole multiples of their span into the newest chunk before them until it is full (the same
 * values, so the sizes of a steady state, not of new data), as the measurement that chose the
 * layout did (docs/benchmarks/storage.md, "Rollup tiers for issue 57").
 */

const dayMs = 86_400_000;

function tierOf(name: KeptTier['name']): KeptTier {
  const tier = keptTiers.find((t) => t.name === name);
  if (tier === undefined) throw new Error(`no kept tier ${name}`);
  return tier;
}

/**
 * Fills the newest chunk of `tier` that ends at or before `fromMs` with copies of its stored
 * rows of the buckets ending in `(fromMs, toMs]`, shifted back by whole multiples of that span
 * (a whole number of days, so each copy keeps its time of day), each (series, bucket) once.
 * Resolves the chunk's range `[startMs, endMs)`, the rows copied, and the rows of the span
 * stored beyond one per series and bucket (a fill that wrote a bucket twice).
 */
export async function fillKeptTierChunk(
  db: Database,
  name: KeptTier['name'],
  span: { fromMs: number; toMs: number },
): Promise<{ startMs: number; endMs: number; rows: number; duplicateRows: number }> {
  const tier = tierOf(name);
  const spanMs = span.toMs - span.fromMs;
  if (!(spanMs > 0) || spanMs % dayMs !== 0)
    throw new RangeError('the stored span must be a whole number of days');
  // TimescaleDB aligns integer chunks to multiples of the interval from 0.
  const endMs = Math.floor(span.fromMs / tier.chunkMs) * tier.chunkMs;
  const startMs = endMs - tier.chunkMs;
  const shifts = Math.ceil((span.toMs - startMs) / spanMs);
  const [stored] = await db.sql.unsafe<{ duplicates: string }[]>(
    `select (count(*) - count(distinct (series_id, bucket_ms)))::text as duplicates
     from ${tier.table} where bucket_ms > $1::bigint and bucket_ms <= $2::bigint`,
    [span.fromMs, span.toMs],
  );
  const inserted = await db.sql.unsafe(
    `insert into ${tier.table}
     select t.series_id, t.bucket_ms - k * $3::bigint, t.count, t.scale, t.sum, t.min, t.max,
       t.last, t.reset_sum, t.last_ms - k * $3::bigint, t.stale_ms - k * $3::bigint
     from (
       select distinct on (series_id, bucket_ms) * from ${tier.table}
       where bucket_ms > $1::bigint and bucket_ms <= $2::bigint
       order by series_id, bucket_ms
     ) t cross join generate_series(1, $4::int) k
     where t.bucket_ms - k * $3::bigint >= $5::bigint and t.bucket_ms - k * $3::bigint < $6::bigint
     order by t.series_id, t.bucket_ms - k * $3::bigint`,
    [span.fromMs, span.toMs, spanMs, shifts, startMs, endMs],
  );
  return {
    startMs,
    endMs,
    rows: inserted.count,
    duplicateRows: Number(stored?.duplicates ?? 0),
  };
}

/**
 * Compresses the chunk of `tier` that starts at `startMs` (as the fill compresses a chunk once
 * filled) and measures it: rows, raw samples they summarize (their counts), and its bytes
 * before and after (tables, indexes and TOAST).
 */
export async function compressKeptTierChunk(
  db: Database,
  name: KeptTier['name'],
  startMs: number,
): Promise<{ rows: number; samples: number; uncompressedBytes: number; bytes: number }> {
  const tier = tierOf(name);
  const [chunk] = await db.sql<{ chunk: string }[]>`
    select format('%I.%I', chunk_schema, chunk_name) as chunk
    from timescaledb_information.chunks
    where hypertable_schema = current_schema() and hypertable_name = ${tier.table}
      and range_start_integer = ${startMs}`;
  if (chunk === undefined) throw new Error(`${tier.table} has no chunk at ${startMs}`);
  const [counted] = await db.sql<{ rows: string; samples: string; bytes: string }[]>`
    select count(*)::text as rows, coalesce(sum(count), 0)::text as samples,
      pg_total_relation_size(${chunk.chunk}::regclass)::text as bytes
    from ${db.sql(tier.table)}
    where bucket_ms >= ${startMs} and bucket_ms < ${startMs + tier.chunkMs}`;
  await db.sql`select compress_chunk(${chunk.chunk}::regclass, if_not_compressed => true)`;
  const [compressed] = await db.sql<{ bytes: string }[]>`
    select (pg_total_relation_size(format('%I.%I', k.schema_name, k.table_name)::regclass)
        + pg_total_relation_size(format('%I.%I', z.schema_name, z.table_name)::regclass))::text
        as bytes
    from _timescaledb_catalog.chunk k
    join _timescaledb_catalog.chunk z on z.id = k.compressed_chunk_id
    where format('%I.%I', k.schema_name, k.table_name) = ${chunk.chunk}`;
  if (compressed === undefined) throw new Error(`${chunk.chunk} was not compressed`);
  return {
    rows: Number(counted?.rows ?? 0),
    samples: Number(counted?.samples ?? 0),
    uncompressedBytes: Number(counted?.bytes ?? 0),
    bytes: Number(compressed.bytes),
  };
}
