import type { TimeRange } from '@monitor/promql';
import { sqlState } from '../core/classify-db-error.js';
import type { Database, Sql } from '../core/database.js';
import type { Float64Allocator, Float64SlabLease } from './binary-arrays.js';
import {
  decodePackedEpochMs,
  decodePackedOffsetsMs,
  decodeScaledCodes,
  unpooledReader,
} from './binary-arrays.js';
import { copyOut, seriesIdArray } from './copy-out.js';
import type { StoredPoints } from './merge-series-points.js';
import type { SampleChunks } from './read-compressed-samples.js';
import {
  listSampleChunks,
  readCompressedSamples,
  UndecodableBatchError,
} from './read-compressed-samples.js';
import { timeOrdered } from './time-ordered.js';

/** How often a read is tried again from compressed batches when the chunks changed under it. */
const batchReadAttempts = 3;

/**
 * The shortest range read from compressed batches. A batch holds up to 1,000 samples (4 hours
 * at 15 s) and is decoded whole, so over a short range most of what it holds is thrown away,
 * where the server decompresses and filters in C: instant queries and the newest piece of a
 * cached range go through `raw_scaled_samples` (docs/benchmarks/hot-path.md, "compressed
 * batches").
 */
const minBatchReadMs = 2 * 3_600_000;

/**
 * The samples of the stored series in `parts` (one statement each, side by side) in `range`,
 * per series id, in time order: from TimescaleDB's compressed batches where it can
 * (read-compressed-samples.ts), else through `raw_scaled_samples` (`readSamples`).
 *
 * A batch read names the chunks the catalog listed before it ran; the list is asked again
 * once every statement is done, and a read during which a compression job changed it is
 * read again (the statements may have missed what moved). Where the chunks keep changing, or
 * a batch holds what the decoder refuses, the read goes through `raw_scaled_samples`.
 */
export async function readRawSamples(
  db: Database,
  parts: string[][],
  range: TimeRange,
  signal: AbortSignal,
  slabs: Float64SlabLease | undefined,
): Promise<Map<string, StoredPoints>> {
  const { sql } = db;
  const fromMs = Math.ceil(range.startMs);
  const toMs = Math.floor(range.endMs);
  const span = toMs - fromMs;
  if (
    span >= minBatchReadMs &&
    span < 2 ** 31 &&
    (await db.capabilities()).timescaledb.version !== undefined
  ) {
    for (let attempt = 0; attempt < batchReadAttempts; attempt++) {
      const chunks = await listSampleChunks(sql, fromMs, toMs);
      if (chunks === undefined) break;
      let read: Map<string, StoredPoints>;
      try {
        read = await readBatches(sql, parts, fromMs, toMs, chunks, signal, slabs);
      } catch (err) {
        if (err instanceof UndecodableBatchError) break;
        if (signal.aborted) throw err;
        // A chunk dropped under the statement (recompressed into a new table) fails it, and a
        // compression job may still hold the list unchanged while it does.
        if (movedUnder(err) || !(await unchanged(sql, fromMs, toMs, chunks))) continue;
        throw err;
      }
      if (await unchanged(sql, fromMs, toMs, chunks)) return read;
    }
  }
  return joined(
    await Promise.all(parts.map((part) => readSamples(sql, part, range, signal, slabs))),
  );
}

/**
 * Errors of a statement a compression job worked under: a table it named dropped (42P01), a
 * deadlock with the job's locks (40P01; the statement names tables in the job's order, see
 * read-compressed-samples.ts, but TimescaleDB's lock order is its own to change).
 */
const movedUnder = (err: unknown): boolean => {
  const state = sqlState(err);
  return state === '42P01' || state === '40P01';
};

async function unchanged(
  sql: Sql,
  fromMs: number,
  toMs: number,
  chunks: SampleChunks,
): Promise<boolean> {
  return (await listSampleChunks(sql, fromMs, toMs))?.fingerprint === chunks.fingerprint;
}

function joined(parts: Map<string, StoredPoints>[]): Map<string, StoredPoints> {
  const [first, ...rest] = parts;
  const all = first ?? new Map<string, StoredPoints>();
  for (const part of rest) for (const [id, points] of part) all.set(id, points);
  return all;
}

async function readBatches(
  sql: Sql,
  parts: string[][],
  fromMs: number,
  toMs: number,
  chunks: SampleChunks,
  signal: AbortSignal,
  slabs: Float64SlabLease | undefined,
): Promise<Map<string, StoredPoints>> {
  const reader = slabs?.reader() ?? unpooledReader();
  try {
    return await readCompressedSamples(sql, parts, fromMs, toMs, chunks, reader.allocate, signal);
  } finally {
    reader.end();
  }
}

/**
 * The samples of the stored series `ids` in `range`, per series id, in time order, decoded by
 * the server: on plain PostgreSQL, and where the batches cannot be read (`readRawSamples`). One
 * statement for all of them (`raw_samples`, see @monitor/db's read functions), through COPY's
 * binary format: in a result row a bytea comes as hex text (postgres.js asks for text
 * results), twice the bytes, encoded by the server and decoded here, which cost the api more
 * than the rest of a query over many series; COPY hands the bytes over as they are. Each
 * series' times and values come packed (`string_agg` of their binary send forms: a third
 * fewer bytes than arrays, and a tenth less of the server's time for the statement; times as
 * 4-byte offsets from the range's start, a quarter fewer bytes for the same server time), the
 * values as stored (`raw_scaled_samples`: scaled integers decoded here, a fifth less of the
 * server's time than `sample_value` per row in SQL), and each
 * row is decoded as it arrives, while the server is still sending the next ones. COPY takes no
 * parameters: the ids are our own bigints (checked) and the times integers.
 *
 * Rows come in scan order: each chunk's rows of a series in time order (the index, the
 * compressed batches), one chunk's before or after another's as the server's merge takes them;
 * `timeOrdered` joins those runs. Asking for time order (a sorted subquery) cost the server a
 * fifth more for the statement (docs/benchmarks/promql.md, "PromQL").
 *
 * Runs on a connection of its own, in a transaction of its own, canceled when `signal` aborts
 * (see `cancelable`). Decodes into `slabs` (a pool's, see createFloat64SlabPool) when given.
 */
export async function readSamples(
  sql: Sql,
  ids: string[],
  range: TimeRange,
  signal: AbortSignal,
  slabs: Float64SlabLease | undefined,
): Promise<Map<string, StoredPoints>> {
  // Stored times are whole milliseconds: the same samples as the range itself.
  const fromMs = Math.ceil(range.startMs);
  const toMs = Math.floor(range.endMs);
  if (!Number.isSafeInteger(fromMs) || !Number.isSafeInteger(toMs)) {
    throw new Error(`not a time range in milliseconds: ${range.startMs}…${range.endMs}`);
  }
  const reader = slabs?.reader() ?? unpooledReader();
  try {
    return await readSamplesInto(sql, ids, fromMs, toMs, reader.allocate, signal);
  } finally {
    // Settled: the COPY has ended (or failed), and no row is decoded into the slabs any more.
    reader.end();
  }
}

async function readSamplesInto(
  sql: Sql,
  ids: string[],
  fromMs: number,
  toMs: number,
  allocate: Float64Allocator,
  signal: AbortSignal,
): Promise<Map<string, StoredPoints>> {
  // Times as 4-byte offsets from the range's start when it spans less than 2^31 ms (24.8 days).
  const timesAsOffsets = toMs - fromMs < 2 ** 31;
  const read = new Map<string, StoredPoints>();
  const statement = `select series_id,
      string_agg(${timesAsOffsets ? `int4send((time_ms - ${fromMs})::int4)` : 'int8send(time_ms)'},
        ''::bytea),
      string_agg(coalesce(int8send(scaled), '\\x0000000000000000'::bytea || float8send(value)),
        ''::bytea)
    from raw_scaled_samples(${seriesIdArray(ids)}, ${fromMs}, ${toMs})
    group by series_id`;
  await copyOut(
    sql,
    statement,
    ([id, t, v]) => {
      if (!id || !t || !v) throw new Error('expected rows of (series_id, times, values)');
      const times = timesAsOffsets
        ? decodePackedOffsetsMs(t, fromMs, allocate)
        : decodePackedEpochMs(t, allocate);
      const { timesMs, values } = timeOrdered(times, decodeScaledCodes(v, times.length, allocate));
      // 8 bytes a value: scaled integers only, none of them NaN (a float8 takes 16 bytes).
      const nanFree = v.length === times.length * 8 ? true : undefined;
      read.set(id.readBigInt64BE(0).toString(), { timestampsMs: timesMs, values, nanFree });
    },
    signal,
  );
  return read;
}
