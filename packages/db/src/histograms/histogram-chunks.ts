import type { TimedHistogram } from '@monitor/schemas';
import { decodeHistogramChunk, encodeHistogramChunk } from '@monitor/schemas';
import type { Database, TransactionSql } from '../core/database.js';

/**
 * Native histograms are written as they come into `histogram_samples`, a row (a chunk of one)
 * per series and time, and compacted once settled: the writer's maintenance moves a series'
 * histograms into `histogram_chunks` 120 a chunk, as Prometheus cuts its chunks, where the
 * layout's deltas of deltas and XORs make a steady series' counts a few bits apiece. Each chunk
 * is written once, whole: the table of history only grows and is dropped by day. Where a series
 * holds two histograms at one time (one arriving late, after its time was compacted), the one
 * stored first stands, as a sample's first value does.
 */
const samplesPerChunk = 120;

/** Histograms younger than this stay as written: more of their series may still be on the way. */
const settledMs = 10 * 60_000;

/**
 * A series' settled histograms that do not fill a chunk wait for more, up to this: then they
 * are a chunk of their own (a series scraped once a minute fills one in two hours).
 */
const closedAfterMs = 2 * 3_600_000;

/** What one compaction run did. */
export type HistogramCompaction = { series: number; histograms: number; chunksWritten: number };

type Taken = { series_id: string; histogram: Buffer };
type StoredChunk = { series_id: string; chunk: Buffer };

/**
 * Moves settled histograms of up to `maxSeries` series per batch, `maxBatches` batches, from
 * `histogram_samples` into `histogram_chunks`, each batch in one transaction. Safe beside
 * writers and another run: a run locks the rows it takes and skips those another holds.
 */
export async function compactHistogramChunks(
  db: Database,
  {
    now,
    maxSeries = 1_000,
    maxBatches = 10,
  }: { now: Date; maxSeries?: number; maxBatches?: number },
): Promise<HistogramCompaction> {
  const done: HistogramCompaction = { series: 0, histograms: 0, chunksWritten: 0 };
  // A database before migration 39 (its maintenance runs in tests of older versions) has none.
  const [table] = await db.sql<{ exists: boolean }[]>`
    select to_regclass('histogram_samples') is not null as exists`;
  if (table?.exists !== true) return done;
  const settled = new Date(now.getTime() - settledMs);
  const closed = new Date(now.getTime() - closedAfterMs);
  for (let batch = 0; batch < maxBatches; batch++) {
    const moved = await db.sql.begin(async (sql) => {
      // Whole chunks of each series with enough, and every settled one of a series waiting long.
      const rows = await sql<Taken[]>`
        with picked as (
          select series_id from histogram_samples
          where time < ${settled}
          group by series_id
          having count(*) >= ${samplesPerChunk} or min(time) < ${closed}
          limit ${maxSeries}
        ), numbered as (
          select h.series_id, h.time,
            row_number() over (partition by h.series_id order by h.time) as n,
            count(*) over (partition by h.series_id) as total,
            min(h.time) over (partition by h.series_id) as first
          from histogram_samples h join picked using (series_id)
          where h.time < ${settled}
        ), taken as (
          select h.series_id, h.time
          from histogram_samples h join numbered n using (series_id, time)
          where n.first < ${closed} or n.n <= n.total - n.total % ${samplesPerChunk}
          for update of h skip locked
        )
        delete from histogram_samples h using taken t
        where h.series_id = t.series_id and h.time = t.time
        returning h.series_id::text as series_id, h.histogram
      `;
      if (rows.length === 0) return undefined;
      const bySeries = new Map<string, TimedHistogram[]>();
      for (const row of rows) {
        let samples = bySeries.get(row.series_id);
        if (samples === undefined) bySeries.set(row.series_id, (samples = []));
        samples.push(...decodeHistogramChunk(row.histogram));
      }
      for (const samples of bySeries.values()) samples.sort((a, b) => a.timeMs - b.timeMs);
      await dropStoredTimes(sql, bySeries);
      const seriesIds: string[] = [];
      const times: number[] = [];
      const endTimes: number[] = [];
      const counts: number[] = [];
      const chunks: string[] = [];
      for (const [seriesId, samples] of bySeries) {
        for (let start = 0; start < samples.length; start += samplesPerChunk) {
          const part = samples.slice(start, start + samplesPerChunk);
          seriesIds.push(seriesId);
          times.push(part[0]!.timeMs);
          endTimes.push(part[part.length - 1]!.timeMs);
          counts.push(part.length);
          chunks.push(Buffer.from(encodeHistogramChunk(part)).toString('hex'));
        }
      }
      await sql`
        insert into histogram_chunks (series_id, time, end_time, samples, chunk)
        select s, timestamptz 'epoch' + t * interval '1 millisecond',
          timestamptz 'epoch' + e * interval '1 millisecond', n, decode(c, 'hex')
        from unnest(
          ${seriesIds}::int8[], ${times}::float8[], ${endTimes}::float8[], ${counts}::int4[],
          ${chunks}::text[]
        ) as u(s, t, e, n, c)
      `;
      return { series: bySeries.size, histograms: rows.length, chunksWritten: chunks.length };
    });
    if (moved === undefined) break;
    done.series += moved.series;
    done.histograms += moved.histograms;
    done.chunksWritten += moved.chunksWritten;
    if (moved.series < maxSeries) break;
  }
  return done;
}

/**
 * Leaves out of each series' histograms (in time order) those at a time its chunks hold already:
 * late ones, which lose to the first stored. A series' chunks end before its new histograms
 * begin unless some came late, so this reads nothing, most runs.
 */
async function dropStoredTimes(
  sql: TransactionSql,
  bySeries: Map<string, TimedHistogram[]>,
): Promise<void> {
  const ids = [...bySeries.keys()];
  const firsts = ids.map((id) => new Date(bySeries.get(id)![0]!.timeMs).toISOString());
  const lasts = ids.map((id) => {
    const samples = bySeries.get(id)!;
    return new Date(samples[samples.length - 1]!.timeMs).toISOString();
  });
  const overlapping = await sql<StoredChunk[]>`
    select c.series_id::text as series_id, c.chunk
    from unnest(${ids}::int8[], ${firsts}::timestamptz[], ${lasts}::timestamptz[]) as u(s, f, l)
    join histogram_chunks c on c.series_id = u.s and c.time <= u.l and c.end_time >= u.f
  `;
  for (const row of overlapping) {
    const stored = new Set(decodeHistogramChunk(row.chunk).map((sample) => sample.timeMs));
    const samples = bySeries.get(row.series_id)!;
    bySeries.set(
      row.series_id,
      samples.filter((sample) => !stored.has(sample.timeMs)),
    );
  }
  for (const [id, samples] of bySeries) if (samples.length === 0) bySeries.delete(id);
}

/**
 * The stored histograms of each series from `startMs` to `endMs` (inclusive), in time order:
 * compacted and as written; where two share a time, the compacted one (stored first) stands.
 */
export async function readHistograms(
  db: Database,
  seriesIds: readonly string[],
  startMs: number,
  endMs: number,
): Promise<Map<string, TimedHistogram[]>> {
  const found = new Map<string, TimedHistogram[]>();
  if (seriesIds.length === 0) return found;
  const start = new Date(startMs);
  const end = new Date(endMs);
  const rows = await db.sql<StoredChunk[]>`
    select series_id, chunk from (
      select series_id::text as series_id, chunk, 0 as source, time from histogram_chunks
      where series_id = any(${seriesIds}::bigint[]) and time <= ${end} and end_time >= ${start}
      union all
      select series_id::text, histogram, 1, time from histogram_samples
      where series_id = any(${seriesIds}::bigint[]) and time <= ${end} and time >= ${start}
    ) as stored
    order by source, time
  `;
  for (const row of rows) {
    let samples = found.get(row.series_id);
    if (samples === undefined) found.set(row.series_id, (samples = []));
    for (const sample of decodeHistogramChunk(row.chunk)) {
      if (sample.timeMs >= startMs && sample.timeMs <= endMs) samples.push(sample);
    }
  }
  for (const [seriesId, samples] of found) {
    // Stable: of two at one time, the compacted (read first) stays first.
    samples.sort((a, b) => a.timeMs - b.timeMs);
    found.set(
      seriesId,
      samples.filter((sample, i) => i === 0 || samples[i - 1]!.timeMs !== sample.timeMs),
    );
  }
  return found;
}
