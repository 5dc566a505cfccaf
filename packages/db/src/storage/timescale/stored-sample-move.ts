import type { Database, TransactionSql } from '../../core/database.js';
import { identifier } from '../ddl.js';
import type { StoragePolicies } from '../storage-mode.js';
import { refreshWindows } from './policies.js';
import {
  aggregateHistory,
  materializationTable,
  oldRowsUnanswered,
  unscaledAggregate,
} from './tables.js';

/** What one run of `moveStoredSamples` did. */
export type StoredSampleMoveResult = {
  /** Batches moved, one chunk each. */
  batches: number;
  /** Steps of `storage_moves` not finished after this run (0: the layout is the new one). */
  pending: number;
};

export type StoredSampleMoveOptions = {
  now: Date;
  policies: StoragePolicies;
  /** At most this many batches (chunks) in this run; the next run goes on from there. */
  maxBatches: number;
  /** Called after each batch committed (tests stop a move midway through it). */
  afterBatch?: () => void;
};

/** One process moves at a time; a second one skips its run (session lock, freed on exit). */
const moveLockKey = 7_171_302_024;

/**
 * Moves what migration 24 left in the previous layout (TimescaleDB; `storage_moves` says what),
 * a chunk per batch, each batch its own short transaction so that ingest goes on:
 *
 * - `samples_1m`, `samples_1h`: the old aggregate's materialized rows older than the new
 *   aggregate's refresh window (the refresh computes the newer ones from the raw samples;
 *   the copy never races it), those without a twin only, so a batch done twice (a crash
 *   before its progress was recorded) copies nothing twice. Once every old row is answered
 *   by the new aggregate (`oldRowsUnanswered`: it may wait for a refresh to move the
 *   watermark over the copied rows), readers' view is pointed at the new one alone and the old
 *   one dropped, in one transaction.
 * - `samples`: the raw rows stored before the migration, float8 `value` rewritten as
 *   `(mantissa, scale)` where that is exact (as `encodeScale` decides, scaled-value.ts), chunk
 *   by chunk: decompressed, rewritten, compressed again if the compression job would have.
 *   Rewriting again what was rewritten changes nothing, so a crash anywhere is resumed by
 *   running again.
 *
 * Reads are right throughout: readers read `samples_1m_history`/`samples_1h_history`, which
 * add the old rows not answered yet, and a raw row decodes to the same double in either
 * encoding. Throws on a database error: the next run takes up where this one stopped.
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
  const steps = await db.sql<{ step: Step }[]>`
    select step from storage_moves where finished_at is null order by step`;
  for (const { step } of steps) {
    while (batches < options.maxBatches) {
      const outcome =
        step === 'samples'
          ? await moveRawChunk(db, options)
          : await moveAggregateChunk(db, step, options);
      if (outcome !== 'moved') break;
      batches++;
      options.afterBatch?.();
    }
  }
  return { batches, pending: await pendingSteps(db) };
}

async function pendingSteps(db: Database): Promise<number> {
  const [row] = await db.sql<{ pending: number }[]>`
    select count(*)::int as pending from storage_moves where finished_at is null`;
  return row?.pending ?? 0;
}

type Chunk = {
  schema: string;
  name: string;
  range_start: Date;
  range_end: Date;
};

/**
 * The oldest chunk of a hypertable ending after `doneUntil` and starting before `before`.
 * `doneUntil` goes as text: it starts at `-infinity`, which is no Date.
 */
async function nextChunk(
  sql: TransactionSql | Database['sql'],
  hypertable: { schema: string; name: string },
  doneUntil: string,
  before: Date,
): Promise<Chunk | undefined> {
  const [chunk] = await sql<Chunk[]>`
    select chunk_schema as schema, chunk_name as name, range_start, range_end
    from timescaledb_information.chunks
    where hypertable_schema = ${hypertable.schema} and hypertable_name = ${hypertable.name}
      and range_end > ${doneUntil}::text::timestamptz and range_start < ${before}
    order by range_start
    limit 1`;
  return chunk;
}

/** One chunk of an old aggregate's materialized rows copied, or the aggregate's move finished. */
async function moveAggregateChunk(
  db: Database,
  rollup: 'samples_1m' | 'samples_1h',
  options: StoredSampleMoveOptions,
): Promise<Outcome> {
  return await db.sql.begin(async (sql) => {
    const [state] = await sql<{ done_until: string }[]>`
      select done_until::text from storage_moves where step = ${rollup} and finished_at is null
      for update`;
    if (state === undefined) return 'finished';
    const old = await materializationTable(sql, unscaledAggregate(rollup));
    const [hypertable] = await sql<{ schema: string; name: string }[]>`
      select materialization_hypertable_schema as schema, materialization_hypertable_name as name
      from timescaledb_information.continuous_aggregates
      where view_schema = current_schema() and view_name = ${unscaledAggregate(rollup)}`;
    // Older than the refresh window: the refresh jobs never write there, so nothing copied
    // races them, and the newer buckets they compute from the raw samples.
    const windowStartMs = refreshWindows(options.policies)[rollup].startHours * 3_600_000;
    const until = new Date(options.now.getTime() - windowStartMs);
    const chunk =
      hypertable === undefined
        ? undefined
        : await nextChunk(sql, hypertable, state.done_until, until);
    if (chunk !== undefined) {
      const to = chunk.range_end < until ? chunk.range_end : until;
      await sql.unsafe(
        `insert into ${await materializationTable(sql, rollup)}
          (bucket, series_id, avg, min, max, count, sum)
        select o.bucket, o.series_id, o.avg, o.min, o.max, o.count, o.sum
        from ${old} o
        where o.bucket >= $1 and o.bucket < $2
          and not exists (select from ${await materializationTable(sql, rollup)} n
            where n.series_id = o.series_id and n.bucket = o.bucket)`,
        [chunk.range_start, to],
      );
      await sql`update storage_moves set done_until = ${chunk.range_end} where step = ${rollup}`;
      return 'moved';
    }
    const [left] = await sql.unsafe<{ any: boolean }[]>(
      `select exists (select ${await oldRowsUnanswered(sql, rollup)}) as any`,
    );
    if (left?.any === true) return 'waiting';
    // The old samples_1h is built on the old samples_1m: that one waits until it is gone.
    const [dependent] = await sql<{ exists: boolean }[]>`
      select to_regclass(${unscaledAggregate('samples_1h')}) is not null as exists`;
    if (rollup === 'samples_1m' && dependent?.exists === true) return 'waiting';
    // Dropping the old aggregate waits for the readers of the view; ingest never waits long.
    await sql`set local lock_timeout = '10s'`;
    await sql.unsafe(aggregateHistory(rollup));
    await sql.unsafe(`drop materialized view ${unscaledAggregate(rollup)}`);
    await sql`update storage_moves set finished_at = now() where step = ${rollup}`;
    return 'finished';
  });
}

/** 10^0 … 10^22 as sample_value has them: each parsed exactly. */
const powersOfTen = `'{${Array.from({ length: 23 }, (_, k) => `1e${k}`).join(',')}}'::float8[]`;

/**
 * The float8 rows of a chunk whose value a `(mantissa, scale)` gives back bit for bit (as
 * `sample_value` decodes it), at the smallest such scale, rewritten: scaled-value.ts's
 * encodeScale without the series hint. Both integers next to `value × 10^k` are tried, since
 * SQL's round() breaks ties otherwise than Math.round. −0, NaN and ±Inf keep `value`: float8
 * `=` takes −0 for 0 and NaN for NaN.
 */
function rewriteExact(chunk: string): string {
  return `update ${chunk} s set mantissa = e.mantissa, scale = e.scale, value = null
    from (
      select c.ctid as row_id, x.mantissa, x.scale
      from ${chunk} c
      cross join lateral (
        select m::bigint as mantissa, (k - 1)::smallint as scale
        from unnest(${powersOfTen}) with ordinality as t(p, k)
        cross join lateral (values (floor(c.value * p)), (ceil(c.value * p))) as candidate(m)
        where abs(m) <= 9007199254740992 and m / p = c.value
        order by k
        limit 1
      ) x
      where c.value is not null and c.value::text <> '-0'
        and c.value not in ('NaN', 'Infinity', '-Infinity')
    ) e
    where s.ctid = e.row_id`;
}

/** One raw chunk written before the migration rewritten, or the raw move finished. */
async function moveRawChunk(db: Database, options: StoredSampleMoveOptions): Promise<Outcome> {
  const [state] = await db.sql<{ before: Date; done_until: string }[]>`
    select before, done_until::text from storage_moves where step = 'samples' and finished_at is null`;
  if (state === undefined) return 'finished';
  const [hypertable] = await db.sql<{ schema: string }[]>`select current_schema() as schema`;
  const chunk = await nextChunk(
    db.sql,
    { schema: hypertable?.schema ?? 'public', name: 'samples' },
    state.done_until,
    state.before,
  );
  if (chunk === undefined) {
    await db.sql`update storage_moves set finished_at = now() where step = 'samples'`;
    return 'finished';
  }
  const name = `${identifier(chunk.schema)}.${identifier(chunk.name)}`;
  // Three short transactions: a compressed chunk's rows are rewritten decompressed (updating
  // compressed batches in place would decompress them anyway, batch by batch), then compressed
  // again as the compression job would, or later by the job itself after a crash.
  // Whatever the catalog listed: a chunk compressed since, or left partly compressed by a late
  // sample, is decompressed whole too.
  await db.sql`select decompress_chunk(${name}::regclass, if_compressed => true)`;
  await db.sql.unsafe(rewriteExact(name));
  const compressBefore = options.now.getTime() - options.policies.compressAfterHours * 3_600_000;
  if (chunk.range_end.getTime() <= compressBefore) {
    await db.sql`select compress_chunk(${name}::regclass, if_not_compressed => true)`;
  }
  await db.sql`update storage_moves set done_until = ${chunk.range_end} where step = 'samples'`;
  return 'moved';
}
