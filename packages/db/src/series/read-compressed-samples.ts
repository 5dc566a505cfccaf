import type { Sql } from '../core/database.js';
import { scaledCode, scaledValue } from '../storage/scaled-code.js';
import { decodeScaled, maxBinaryShift, maxValueScale } from '../storage/scaled-value.js';
import type { Float64Allocator } from './binary-arrays.js';
import { decodePackedOffsetsMs, decodeScaledCodes } from './binary-arrays.js';
import { createColumnBuffer, decodeCompressedColumn, NotExactError } from './compressed-columns.js';
import type { CopyRow } from './copy-binary-reader.js';
import { copyOut, seriesIdArray } from './copy-out.js';
import type { StoredPoints } from './merge-series-points.js';
import { timeOrdered } from './time-ordered.js';

/**
 * Raw samples read from TimescaleDB's compressed batches as they are stored, decoded here
 * (compressed-columns.ts), beside the rows not compressed yet. Through `raw_scaled_samples` the
 * server decompressed every batch and packed each series' samples with `string_agg`: ~150 ns of
 * its time a sample, most of a PromQL read's; a batch of up to 1,000 samples costs it one row
 * here (docs/benchmarks/hot-path.md).
 *
 * A statement names the chunks it reads, as the catalog lists them (`listSampleChunks`): the
 * compressed batches of each compressed chunk and the rows of every chunk's own table (`only`:
 * a head chunk's rows, and those that arrived late into a compressed one). The compression
 * jobs change that list while a read runs (a head chunk merged into the one before, a chunk
 * recompressed into a new compressed table), so the reader lists the chunks again once its
 * statements are done: a read whose list changed is read again (see read-samples.ts).
 *
 * The statements of a read run side by side, each at a moment of its own, so a series' rows
 * that a job moves into batches must be read by one statement with those batches. A head
 * chunk's rows move only when it is compressed, which the list shows, so one statement reads
 * every series' (it has no per-row index: each statement would scan it whole). A compressed
 * chunk's late rows go into its batches by a recompression that leaves the list as it was
 * (partial, then compressed again), so each statement reads those of its own series.
 */

/** The chunks of `samples` a range touches, as the catalog had them when listed. */
export type SampleChunks = {
  /** `schema.table` of each chunk not compressed (a head chunk). */
  heads: string[];
  /**
   * Each compressed chunk: `table`, its own (the rows that arrived late), and `batches`, its
   * compressed batches' table.
   */
  compressed: { table: string; batches: string }[];
  /** What changes when any of the above does (ids, status, ranges). */
  fingerprint: string;
};

const quoted = (schema: string, table: string): string =>
  `"${schema.replaceAll('"', '""')}"."${table.replaceAll('"', '""')}"`;

/**
 * The chunks of the `samples` hypertable overlapping `[fromMs, toMs]`, or `undefined` where
 * the batches cannot be read so: `samples` is no hypertable (plain PostgreSQL storage), or its
 * samples are still moving into the millisecond layout (read through `raw_scaled_samples`,
 * which joins both).
 */
export async function listSampleChunks(
  sql: Sql,
  fromMs: number,
  toMs: number,
): Promise<SampleChunks | undefined> {
  const rows = await sql<
    {
      id: number;
      schema: string;
      table: string;
      status: number;
      start: string;
      end: string;
      compressedId: number | null;
      compressedSchema: string | null;
      compressedTable: string | null;
      moving: boolean;
    }[]
  >`
    select c.id, c.schema_name as schema, c.table_name as table, c.status,
      d.range_start::text as start, d.range_end::text as end, cc.id as "compressedId",
      cc.schema_name as "compressedSchema", cc.table_name as "compressedTable",
      exists (select from storage_moves where step = 'samples' and finished_at is null) as moving
    from _timescaledb_catalog.hypertable h
    join _timescaledb_catalog.chunk c on c.hypertable_id = h.id
    join _timescaledb_catalog.dimension_slice d on d.chunk_id = c.id
    left join _timescaledb_catalog.chunk cc on cc.id = c.compressed_chunk_id
    where h.schema_name = current_schema() and h.table_name = 'samples'
      and d.range_start <= ${toMs} and d.range_end > ${fromMs}
    order by c.id`;
  if (rows.length === 0 || rows.some((r) => r.moving)) return undefined;
  return {
    heads: rows.flatMap((r) => (r.compressedTable === null ? [quoted(r.schema, r.table)] : [])),
    compressed: rows.flatMap((r) =>
      r.compressedSchema !== null && r.compressedTable !== null
        ? [
            {
              table: quoted(r.schema, r.table),
              batches: quoted(r.compressedSchema, r.compressedTable),
            },
          ]
        : [],
    ),
    fingerprint: rows
      .map((r) => `${r.id}:${r.status}:${r.start}:${r.end}:${r.compressedId ?? ''}`)
      .join(','),
  };
}

/** A batch a statement returned that this reader cannot decode exactly: read it all again. */
export class UndecodableBatchError extends Error {}

/**
 * The samples of the stored series in `parts` in `[fromMs, toMs]` (less than 2^31 ms apart),
 * per series id, in time order, from the chunks `chunks` lists: one statement a part, side by
 * side, reading its series' compressed batches and late rows, and the first also every series'
 * rows in head chunks (see above). Throws `UndecodableBatchError` where a batch holds what
 * compressed-columns.ts refuses.
 */
export async function readCompressedSamples(
  sql: Sql,
  parts: string[][],
  fromMs: number,
  toMs: number,
  chunks: SampleChunks,
  allocate: Float64Allocator,
  signal: AbortSignal,
): Promise<Map<string, StoredPoints>> {
  const stored = new Map<string, StoredRows>();
  const arena = createBatchArena();
  const onRow = ([id, count, times, values, time, mantissa, scale, value]: CopyRow): void => {
    if (!id) throw new Error('expected rows of (series_id, …)');
    const key = id.readBigInt64BE(0).toString();
    let rows = stored.get(key);
    if (rows === undefined) {
      rows = { packed: [], batches: [], most: 0 };
      stored.set(key, rows);
    }
    if (count) {
      if (!time) throw new Error('a compressed batch without times');
      const batchRows = count.readInt32BE(0);
      rows.batches.push(batchRows);
      arena.append(time, rows.batches);
      arena.append(mantissa, rows.batches);
      arena.append(scale, rows.batches);
      arena.append(value, rows.batches);
      rows.most += batchRows;
    } else {
      if (!times || !values) throw new Error('expected rows of (series_id, times, values)');
      rows.packed.push({ times, values });
      rows.most += times.length / 4;
    }
  };
  const all = parts.flat();
  await Promise.all(
    parts.map((part, i) =>
      copyOut(sql, readStatement(chunks, part, i === 0 ? all : [], fromMs, toMs), onRow, signal, {
        parallelWorkers: false,
      }),
    ),
  );
  const read = new Map<string, StoredPoints>();
  for (const [id, rows] of stored) {
    read.set(id, decodeSeries(rows, arena.bytes(), fromMs, toMs, allocate));
  }
  return read;
}

/**
 * The compressed columns of a read's batches, copied out of the COPY's chunks as each row
 * arrives, into one buffer that doubles as it fills. Held as they came (an object and four
 * views of the chunks a batch, and the chunks with them) until the statements ended, they
 * outlived the young generation's collections, which copied them: the api's garbage
 * collection was 24 s of its 61 s busy in the wide scenario, 11 s since
 * (docs/benchmarks/promql.md, "2026-11-29 08:18–08:28").
 */
function createBatchArena(): {
  /** Copies `column` in (or notes a null one) as a start and a length after `into`'s last. */
  append(column: Uint8Array | null | undefined, into: number[]): void;
  /** Everything appended so far. */
  bytes(): Uint8Array;
} {
  let buffer = new Uint8Array(1 << 16);
  let used = 0;
  return {
    append(column, into) {
      if (!column) {
        into.push(-1, 0);
        return;
      }
      if (used + column.length > buffer.length) {
        let size = buffer.length * 2;
        while (size < used + column.length) size *= 2;
        const grown = new Uint8Array(size);
        grown.set(buffer.subarray(0, used));
        buffer = grown;
      }
      buffer.set(column, used);
      into.push(used, column.length);
      used += column.length;
    },
    bytes: () => buffer,
  };
}

const compressedType = '_timescaledb_internal.compressed_data';

/**
 * One statement of a read: the compressed batches and late rows of the series `ids`, and the
 * rows in head chunks of the series `headIds` (packed per series as `readSamples` packs them).
 */
function readStatement(
  chunks: SampleChunks,
  ids: string[],
  headIds: string[],
  fromMs: number,
  toMs: number,
): string {
  // The chunks' own tables come first: the server locks a statement's tables in the order
  // it names them, and a compression job locks a chunk before its compressed table (then
  // both exclusively, to swap in what it recompressed). Named the other way round, a read
  // holding a compressed table while it waits for its chunk deadlocks with the job.
  const rowsOf = (tables: string[], of: string[]) =>
    of.length === 0
      ? []
      : tables.map(
          (table) => `select s.series_id, s.time, s.mantissa, s.scale, s.value from only ${table} s
            where s.series_id = any(${seriesIdArray(of)}) and s.time >= ${fromMs}
              and s.time <= ${toMs}`,
        );
  const rows = [
    ...rowsOf(chunks.heads, headIds),
    ...rowsOf(
      chunks.compressed.map((chunk) => chunk.table),
      ids,
    ),
  ];
  const selects: string[] = [];
  if (rows.length > 0) {
    selects.push(`select s.series_id, null::int4,
        string_agg(int4send((s.time - ${fromMs})::int4), ''::bytea),
        string_agg(coalesce(int8send(${scaledCode('s')}),
          '\\x0000000000000000'::bytea || float8send(${scaledValue('s')})), ''::bytea),
        null::${compressedType}, null::${compressedType}, null::${compressedType},
        null::${compressedType}
      from (${rows.join(' union all ')}) s
      group by s.series_id`);
  }
  if (ids.length > 0) {
    for (const { batches } of chunks.compressed) {
      selects.push(`select b.series_id, b._ts_meta_count, null::bytea, null::bytea,
          b.time, b.mantissa, b.scale, b.value
        from ${batches} b
        where b.series_id = any(${seriesIdArray(ids)}) and b._ts_meta_min_1 <= ${toMs}
          and b._ts_meta_max_1 >= ${fromMs}`);
    }
  }
  // A statement with nothing to read still has the row's shape.
  if (selects.length === 0) return 'select null::bigint where false';
  return selects.join(' union all ');
}

/** One series' rows of a read: `most` is how many samples they hold at most. */
type StoredRows = {
  packed: { times: Uint8Array; values: Uint8Array }[];
  /**
   * Its compressed batches, 9 numbers each: the batch's row count, then the start and length in
   * the read's arena of its time, mantissa, scale and value columns (start −1: null).
   */
  batches: number[];
  most: number;
};

/** Numbers a batch takes in `StoredRows.batches`. */
const batchFields = 9;

/** One series' samples, decoded into arrays of `allocate`'s, in time order. */
function decodeSeries(
  rows: StoredRows,
  arena: Uint8Array,
  fromMs: number,
  toMs: number,
  allocate: Float64Allocator,
): StoredPoints {
  const timesMs = allocate(rows.most);
  const values = allocate(rows.most);
  let at = 0;
  let floats = false;
  const { batches } = rows;
  for (let b = 0; b < batches.length; b += batchFields) {
    const batch: Batch = {
      rows: batches[b]!,
      time: arenaColumn(arena, batches, b + 1)!,
      mantissa: arenaColumn(arena, batches, b + 3),
      scale: arenaColumn(arena, batches, b + 5),
      value: arenaColumn(arena, batches, b + 7),
    };
    const decoded = decodeBatch(batch, fromMs, toMs, timesMs, values, at);
    at = decoded.at;
    if (decoded.floats) floats = true;
  }
  for (const packed of rows.packed) {
    const count = packed.times.length / 4;
    decodePackedOffsetsMs(packed.times, fromMs, () => timesMs.subarray(at, at + count));
    decodeScaledCodes(packed.values, count, () => values.subarray(at, at + count));
    if (packed.values.length !== count * 8) floats = true;
    at += count;
  }
  const ordered = timeOrdered(timesMs.subarray(0, at), values.subarray(0, at));
  return {
    timestampsMs: ordered.timesMs,
    values: ordered.values,
    nanFree: floats ? undefined : true,
  };
}

/** The column whose start and length are at `batches[i]` and `batches[i + 1]`. */
function arenaColumn(arena: Uint8Array, batches: number[], i: number): Uint8Array | undefined {
  const start = batches[i]!;
  return start < 0 ? undefined : arena.subarray(start, start + batches[i + 1]!);
}

/** A compressed batch's columns, views of the read's arena. */
type Batch = {
  rows: number;
  time: Uint8Array;
  mantissa: Uint8Array | undefined;
  scale: Uint8Array | undefined;
  value: Uint8Array | undefined;
};

const timeColumn = createColumnBuffer();
const mantissaColumn = createColumnBuffer();
const scaleColumn = createColumnBuffer();
const valueColumn = createColumnBuffer();

/**
 * One compressed batch's samples in `[fromMs, toMs]` into `timesMs` and `values` from `at`,
 * valued as `raw_scaled_samples` values them: a stored scaled integer decoded (`decodeScaled`),
 * else the float8 column. Returns where the next sample goes, and whether any was a float8.
 */
function decodeBatch(
  batch: Batch,
  fromMs: number,
  toMs: number,
  timesMs: Float64Array,
  values: Float64Array,
  at: number,
): { at: number; floats: boolean } {
  const { rows } = batch;
  try {
    decodeCompressedColumn(batch.time, rows, timeColumn);
    decodeCompressedColumn(batch.mantissa, rows, mantissaColumn);
    decodeCompressedColumn(batch.scale, rows, scaleColumn);
    decodeCompressedColumn(batch.value, rows, valueColumn);
  } catch (err) {
    if (err instanceof NotExactError) throw new UndecodableBatchError(err.message);
    throw err;
  }
  if (timeColumn.hasNulls) throw new Error('a compressed batch with null times');
  const t = timeColumn.values;
  const m = mantissaColumn;
  const s = scaleColumn;
  const v = valueColumn;
  const scaledNulls = m.hasNulls || s.hasNulls;
  let floats = false;
  let k = at;
  for (let i = 0; i < rows; i++) {
    const ms = t[i]!;
    if (ms < fromMs || ms > toMs) continue;
    const scale = s.values[i]!;
    if (
      (!scaledNulls || (m.nulls[i] === 0 && s.nulls[i] === 0)) &&
      scale >= -maxBinaryShift &&
      scale <= maxValueScale
    ) {
      // The mantissa decoded within ±2^53, or refused (compressed-columns.ts).
      values[k] = decodeScaled(m.values[i]!, scale);
    } else if (!v.hasNulls || v.nulls[i] === 0) {
      values[k] = v.values[i]!;
      floats = true;
    } else {
      // Neither: a row the writer does not store, valued in SQL (`sample_value`).
      throw new UndecodableBatchError('a sample stored neither scaled nor as a float8');
    }
    timesMs[k] = ms;
    k++;
  }
  return { at: k, floats };
}
