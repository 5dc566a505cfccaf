import type { Database, TransactionSql } from '../../core/database.js';
import { identifier } from '../ddl.js';
import { hourMs } from '../rollups.js';
import type { StoragePolicies } from '../storage-mode.js';
import { refreshContinuousAggregates } from './aggregate-refresh.js';
import { dropSampleKey } from './head-chunks.js';
import { refreshWindows } from './policies.js';
import {
  bucketsFunction,
  previousLayout,
  rawSamplesFunction,
  rawScaledSamplesFunction,
} from './read-functions.js';
import { materializationTable } from './tables.js';
import { retireMovedRollup } from '../retired-rollups.js';

/** What one run of `moveStoredSamples` did. */
export type StoredSampleMoveResult = {
  /** Batches moved: a slice of a raw chunk's series, or an aggregate's chunk. */
  batches: number;
  /** Steps of `storage_moves` not finished after this run (0: the layout is the new one). */
  pending: number;
};

export type StoredSampleMoveOptions = {
  now: Date;
  policies: StoragePolicies;
  /** At most this many batches in this run; the next run goes on from there. */
  maxBatches: number;
  /** Called after each batch committed (tests stop a move midway through it). */
  afterBatch?: () => void;
};

/** One process moves at a time; a second one skips its run (session lock, freed on exit). */
const moveLockKey = 7_171_302_024;

/**
 * Series ids per raw batch: a day of one series at 30 s is 2,880 rows, so a batch of a busy
 * chunk is up to about a million rows, a few seconds of one transaction.
 */
const seriesPerBatch = 400;

/**
 * Moves what migration 24 left in the previous layout (`…_v21`, see millisecond-layout.ts;
 * `storage_moves` says how far it got), each batch its own short transaction so that ingest
 * goes on:
 *
 * 1. `samples`: the raw rows, newest chunk first (the recent history is the one read most),
 *    a slice of its series at a time: inserted into the new layout (time as epoch
 *    milliseconds, each value as a scaled integer where a scale holds it exactly) in the same
 *    transaction that records the slice as moved, so readers, who take each series from the
 *    layout its progress names, see every sample once; one stored again since is kept once. A
 *    chunk is dropped whole once its every series moved (deleting rows from a compressed
 *    chunk would decompress them first); chunks past the raw retention are dropped unmoved.
 * 2. `samples_1h`, then `samples_1m`: the old aggregate's materialized rows older than the new
 *    aggregate's refresh window (the new one computes the newer ones from the moved raw
 *    samples; the copy never races its refresh), a chunk at a time, those without a twin only,
 *    so a batch done twice (a crash before its progress was recorded) copies nothing twice.
 *    Once the new aggregate's watermark is past what was copied (a refresh made it its
 *    materialized part), its read function is pointed at it alone and the old one dropped.
 *
 * Reads are right throughout: readers read through the read functions (read-functions.ts),
 * which answer each series from the layout that holds it. Throws on a database error: the next
 * run takes up where this one stopped.
 */
export async function moveStoredSamples(
  db: Database,
  options: StoredSampleMoveOptions,
): Promise<StoredSampleMoveResult> {
  const lock = await db.sql.reserve();
  try {
    const [row] = await lock<{ locked: boolean }[]>`
      select pg_try_advisory_lock(${moveLockKey}) as locked`;
    if (row?.locked !== true) return { batches: 0, pending: await pendingSteps(db) };
    try {
      return await moveWhileLocked(db, options);
    } finally {
      await lock`select pg_advisory_unlock(${moveLockKey})`;
    }
  } finally {
    lock.release();
  }
}

type Step = 'samples' | 'samples_1m' | 'samples_1h';
type Outcome = 'moved' | 'waiting' | 'finished';

async function moveWhileLocked(
  db: Database,
  options: StoredSampleMoveOptions,
): Promise<StoredSampleMoveResult> {
  let batches = 0;
  // In step order: the raw samples before the aggregates, samples_1h (built on the old
  // samples_1m) before samples_1m.
  const steps = await db.sql<{ step: Step }[]>`
    select step from storage_moves where finished_at is null order by step`;
  for (const { step } of steps) {
    let outcome: Outcome = 'moved';
    while (batches < options.maxBatches) {
      outcome =
        step === 'samples'
          ? await moveRawBatch(db, options)
          : await moveAggregateChunk(db, step, options);
      if (outcome !== 'moved') break;
      batches++;
      options.afterBatch?.();
    }
    if (outcome !== 'finished') break;
  }
  return { batches, pending: await pendingSteps(db) };
}

async function pendingSteps(db: Database): Promise<number> {
  const [row] = await db.sql<{ pending: number }[]>`
    select count(*)::int as pending from storage_moves where finished_at is null`;
  return row?.pending ?? 0;
}

type RawMove = {
  moved_from: Date;
  chunk_start: Date | null;
  next_series_id: string | null;
};

/** 10^0 … 10^22 as sample_value has them: each parsed exactly. */
const powersOfTen = `'{${Array.from({ length: 23 }, (_, k) => `1e${k}`).join(',')}}'::float8[]`;

/**
 * `(mantissa, scale)` of the float8 `o.value` as scaled-value.ts's `encodeScale` chooses it
 * without a series hint, each candidate checked to give the value back bit for bit as
 * `sample_value` decodes it: a whole number as itself over the largest power of two that
 * divides it (up to 2^62), else the smallest decimal scale. Both integers next to
 * `value × 10^k` are tried, since SQL's round() breaks ties otherwise than Math.round. Nothing
 * for −0, NaN and ±Inf (float8 `=` takes −0 for 0 and NaN for NaN): they keep `value`.
 */
const exactScale = `left join lateral (
    (select (o.value / (1::int8 << b)::float8)::bigint as mantissa, (-b)::smallint as scale
      from generate_series(62, 0, -1) as b
      where o.value = trunc(o.value) and (o.value <> 0 or b = 0)
        and trunc(o.value / (1::int8 << b)::float8) = o.value / (1::int8 << b)::float8
        and abs(o.value / (1::int8 << b)::float8) <= 9007199254740992
      order by b desc
      limit 1)
    union all
    (select m::bigint, (k - 1)::smallint
      from unnest(${powersOfTen}) with ordinality as t(p, k)
      cross join lateral (values (floor(o.value * p)), (ceil(o.value * p))) as candidate(m)
      where k > 1 and abs(m) <= 9007199254740992 and m / p = o.value
      order by k
      limit 1)
    limit 1
  ) e on o.value::text <> '-0' and o.value not in ('NaN', 'Infinity', '-Infinity')`;

/** One slice of the raw chunk under way moved, the chunk finished, or the next one begun. */
async function moveRawBatch(db: Database, options: StoredSampleMoveOptions): Promise<Outcome> {
  return await db.sql.begin(async (sql) => {
    const [state] = await sql<RawMove[]>`
      select moved_from, chunk_start, next_series_id::text from storage_moves
      where step = 'samples' and finished_at is null
      for update`;
    if (state === undefined) return 'finished';
    const old = `samples${previousLayout}`;
    if (state.chunk_start === null || state.next_series_id === null) {
      const retainedFrom = new Date(
        options.now.getTime() - options.policies.rawRetentionDays * 24 * hourMs,
      );
      const [chunk] = await sql<{ start: Date; end: Date }[]>`
        select range_start as start, range_end as end from timescaledb_information.chunks
        where hypertable_schema = current_schema() and hypertable_name = ${old}
          and range_start < ${state.moved_from}
        order by range_start desc
        limit 1`;
      if (chunk === undefined || chunk.end <= retainedFrom) {
        // What is left is past the raw retention, which would have dropped it: dropped too. Its
        // buckets are still answered by the old aggregates' materialized rows.
        await sql`select drop_chunks(${old}::regclass, older_than => ${retainedFrom}::timestamptz)`;
        await sql.unsafe(rawSamplesFunction);
        await sql.unsafe(rawScaledSamplesFunction);
        // Migration 33 left the unique key to this move (head-chunks.ts): nothing needs it now.
        const [head] = await sql<{ unindexed: boolean }[]>`
          select to_regclass('consolidated_sample_chunks') is not null as unindexed`;
        if (head?.unindexed === true) await sql.unsafe(dropSampleKey);
        await sql`update storage_moves set finished_at = now() where step = 'samples'`;
        return 'finished';
      }
      await sql`
        update storage_moves set chunk_start = ${chunk.start}, next_series_id = 0
        where step = 'samples'`;
      return 'moved';
    }
    const from = BigInt(state.next_series_id);
    const to = from + BigInt(seriesPerBatch);
    const inChunk = `o.time >= $1 and o.time < $2`;
    const [left] = await sql.unsafe<{ any: boolean }[]>(
      `select exists (select from ${old} o where ${inChunk} and o.series_id >= $3) as any`,
      [state.chunk_start, state.moved_from, from.toString()],
    );
    if (left?.any !== true) {
      // Every series of the chunk moved: the empty chunk goes, and the next one is next.
      await sql`
        select drop_chunks(${old}::regclass, older_than => ${state.moved_from}::timestamptz,
          newer_than => ${state.chunk_start}::timestamptz)`;
      await sql`
        update storage_moves
        set moved_from = chunk_start, chunk_start = null, next_series_id = null
        where step = 'samples'`;
      return 'moved';
    }
    const slice = `${inChunk} and o.series_id >= $3 and o.series_id < $4`;
    const params = [state.chunk_start, state.moved_from, from.toString(), to.toString()];
    await sql.unsafe(
      `insert into samples (time, series_id, value, mantissa, scale)
      select (extract(epoch from o.time) * 1000)::bigint, o.series_id,
        case when e.scale is null then o.value end, e.mantissa, e.scale
      from ${old} o ${exactScale}
      where ${slice}
      on conflict do nothing`,
      params,
    );
    await sql`update storage_moves set next_series_id = ${to.toString()} where step = 'samples'`;
    return 'moved';
  });
}

type Chunk = { schema: string; name: string; range_start: Date; range_end: Date };

/** One chunk of an old aggregate's materialized rows copied, or the aggregate's move finished. */
async function moveAggregateChunk(
  db: Database,
  rollup: 'samples_1m' | 'samples_1h',
  options: StoredSampleMoveOptions,
): Promise<Outcome> {
  // Older than the refresh window: the refresh jobs never write there, so nothing copied races
  // them; the newer buckets they compute from the moved raw samples.
  const windows = refreshWindows(options.policies);
  const untilMs = options.now.getTime() - windows[rollup].startHours * hourMs;
  // 'waiting' here: nothing left to copy.
  const copied = await db.sql.begin(async (sql): Promise<Outcome> => {
    const [state] = await sql<{ done_until: string }[]>`
      select done_until::text from storage_moves where step = ${rollup} and finished_at is null
      for update`;
    if (state === undefined) return 'finished';
    const old = `${rollup}${previousLayout}`;
    const [hypertable] = await sql<{ schema: string; name: string }[]>`
      select materialization_hypertable_schema as schema, materialization_hypertable_name as name
      from timescaledb_information.continuous_aggregates
      where view_schema = current_schema() and view_name = ${old}`;
    if (hypertable === undefined) return 'waiting';
    const [chunk] = await sql<Chunk[]>`
      select chunk_schema as schema, chunk_name as name, range_start, range_end
      from timescaledb_information.chunks
      where hypertable_schema = ${hypertable.schema} and hypertable_name = ${hypertable.name}
        and range_end > ${state.done_until}::text::timestamptz
        and range_start < ${new Date(untilMs)}
      order by range_start
      limit 1`;
    if (chunk === undefined) return 'waiting';
    const target = await materializationTable(sql, rollup);
    await sql.unsafe(
      `insert into ${target} (bucket, series_id, min, max, count, sum)
      select (extract(epoch from o.bucket) * 1000)::bigint, o.series_id, o.min, o.max, o.count,
        o.sum
      from ${identifier(chunk.schema)}.${identifier(chunk.name)} o
      where o.bucket < $1
        and not exists (select from ${target} n
          where n.series_id = o.series_id
            and n.bucket = (extract(epoch from o.bucket) * 1000)::bigint)`,
      [new Date(untilMs)],
    );
    await sql`update storage_moves set done_until = ${chunk.range_end} where step = ${rollup}`;
    return 'moved';
  });
  if (copied !== 'waiting') return copied;
  // Everything up to the window copied. A copied row is the new aggregate's only below its
  // watermark (a materialized row past it is hidden by real-time aggregation): wait for a
  // refresh to move the watermark past what was copied.
  const target = await db.sql.begin((sql) => materializationTable(sql, rollup));
  const [hidden] = await db.sql.unsafe<{ any: boolean }[]>(
    `select exists (
      select from ${target} n
      where n.bucket >= coalesce(_timescaledb_functions.cagg_watermark(
        (select mat_hypertable_id from _timescaledb_catalog.continuous_agg
          where user_view_schema = current_schema() and user_view_name = $1)),
        -9223372036854775808)
    ) as any`,
    [rollup],
  );
  if (hidden?.any === true) return 'waiting';
  // The raw samples moved into the refresh window since its last run: taken in now.
  await refreshContinuousAggregates(db, { now: options.now, windows, only: rollup });
  return await db.sql.begin(async (sql): Promise<Outcome> => {
    // The old samples_1h is built on the old samples_1m: that one waits until it is gone.
    const [dependent] = await sql<{ exists: boolean }[]>`
      select to_regclass(${`samples_1h${previousLayout}`}) is not null as exists`;
    if (rollup === 'samples_1m' && dependent?.exists === true) return 'waiting';
    // Dropping the old aggregate waits for its readers; ingest never waits long.
    await sql`set local lock_timeout = '10s'`;
    await sql.unsafe(bucketsFunction(rollup));
    await sql.unsafe(`drop materialized view ${rollup}${previousLayout}`);
    await sql`update storage_moves set finished_at = now() where step = ${rollup}`;
    if (rollup === 'samples_1m') await dropPreviousSamples(sql);
    // Migrations 36 and 37 retire each rollup once it moved.
    await retireMovedRollup(sql, rollup);
    return 'finished';
  });
}

/** The previous layout's raw table, empty by now, once no aggregate is built on it. */
async function dropPreviousSamples(sql: TransactionSql): Promise<void> {
  await sql.unsafe(`drop table if exists samples${previousLayout}`);
}
