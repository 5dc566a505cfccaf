import { finished } from 'node:stream/promises';
import type { LabelMatcher, Labels, SeriesSource, SourceSeries, TimeRange } from '@monitor/promql';
import { labelsFrom, labelsKey, PromqlError } from '@monitor/promql';
import type { Database } from '../core/database.js';
import { translateDbError } from '../core/database-errors.js';
import type { Float64Allocator, Float64SlabLease } from './binary-arrays.js';
import {
  decodeFloat8Array,
  decodePackedEpochMs,
  decodePackedOffsetsMs,
  decodeScaledCodes,
  decodeTimestampArray,
  unpooledReader,
} from './binary-arrays.js';
import { createCopyBinaryReader } from './copy-binary-reader.js';
import { timeOrdered } from './time-ordered.js';

/**
 * A series as PromQL sees it: its labels, and the stored series that carry them, oldest first
 * (usually one; more when an old series labelled by its service's tags and a new one with its
 * own labels read the same).
 */
type SeriesRow = { ids: string[]; labels: Labels };

type CandidateRow = {
  id: string;
  metric: string;
  host: string;
  tags: Record<string, string>;
  labels: Record<string, string> | null;
};

/**
 * The label set of a stored series (docs/api.md#labels-and-values-as-written): a series written
 * through an agent protocol (`labels` not null) reads back with exactly the labels it was
 * written with, plus `__name__`; its service is ours to know, not a label. An /ingest series
 * (`labels` null, and every series stored before series had labels) is labelled by its
 * service's tags and `host` = the service's name.
 */
function seriesLabels(
  metric: string,
  host: string,
  tags: Record<string, string>,
  labels: Record<string, string> | null,
): Labels {
  return labelsFrom(
    labels === null ? { ...tags, host, __name__: metric } : { ...labels, __name__: metric },
  );
}

function matchesAll(labels: Labels, matchers: readonly LabelMatcher[]): boolean {
  for (const matcher of matchers) {
    let value = '';
    for (const label of labels) {
      if (label.name === matcher.name) {
        value = label.value;
        break;
      }
    }
    if (!matcher.matches(value)) return false;
  }
  return true;
}

/**
 * Equality matchers pushed into SQL; every matcher is still checked on the labels after. `host`
 * is the service's name for an /ingest series and a label like any other for the others.
 */
function pushedDown(matchers: readonly LabelMatcher[]): {
  metric: string | null;
  host: string | null;
  tags: Record<string, string>;
} {
  let metric: string | null = null;
  let host: string | null = null;
  const tags: Record<string, string> = {};
  for (const m of matchers) {
    if (m.type !== '=' || m.value === '') continue;
    if (m.name === '__name__') metric = m.value;
    else if (m.name === 'host') host = m.value;
    else tags[m.name] = m.value;
  }
  return { metric, host, tags };
}

/**
 * Samples of one stored series (from `samples` or `unaggregated_samples`), or its staleness
 * markers (`stale`, values NaN), as read, in ascending time order.
 */
type Points = {
  timestampsMs: Float64Array;
  values: Float64Array;
  stale?: true;
  /** No value is NaN, known as they were decoded (no pass over them needed). */
  nanFree?: true;
};

/** A series whose points are all in one list. */
function fromOneList(labels: Labels, points: Points): SourceSeries {
  const { timestampsMs, values } = points;
  // Without flags every NaN is a marker (SourceSeries): samples without a NaN need none, which
  // spares a flag array per series.
  if (points.stale !== true && (points.nanFree === true || !holdsNaN(values))) {
    return { labels, timestampsMs, values, markers: 0 };
  }
  // Every point flagged: a NaN that is no marker is a value.
  const stale = new Uint8Array(timestampsMs.length).fill(points.stale === true ? 1 : 0);
  return { labels, timestampsMs, values, stale };
}

function holdsNaN(values: Float64Array): boolean {
  for (let i = 0; i < values.length; i++) if (Number.isNaN(values[i])) return true;
  return false;
}

/**
 * One series out of several lists of points (the samples of each stored series that carries its
 * labels, then their unaggregated samples, then their staleness markers): in time order, one
 * point per millisecond, the markers flagged. At a millisecond held twice the earlier list wins:
 * a sample over a marker, and of two samples the older series' (a marker at a sample's time
 * ends nothing before that sample, which Prometheus itself refuses to hold).
 */
function merged(labels: Labels, lists: readonly Points[]): SourceSeries {
  let total = 0;
  for (const list of lists) total += list.timestampsMs.length;
  const times = new Float64Array(total);
  const values = new Float64Array(total);
  const ranks = new Float64Array(total);
  const flags = new Uint8Array(total);
  let at = 0;
  lists.forEach((list, rank) => {
    const end = at + list.timestampsMs.length;
    times.set(list.timestampsMs, at);
    values.set(list.values, at);
    ranks.fill(rank, at, end);
    if (list.stale === true) flags.fill(1, at, end);
    at = end;
  });
  const order = Array.from(times.keys()).sort(
    (a, b) => times[a]! - times[b]! || ranks[a]! - ranks[b]!,
  );
  const t: number[] = [];
  const v: number[] = [];
  const stale: number[] = [];
  for (const i of order) {
    if (t.length > 0 && t[t.length - 1] === times[i]) continue;
    t.push(times[i]!);
    v.push(values[i]!);
    stale.push(flags[i]!);
  }
  return {
    labels,
    timestampsMs: Float64Array.from(t),
    values: Float64Array.from(v),
    stale: Uint8Array.from(stale),
  };
}

/** Statements one selection runs at once (the pool holds DATABASE_POOL_MAX, 10 by default). */
const readConcurrency = 4;

const empty = new Float64Array(0);

/** How long a canceled read waits for the server to take the cancel (see `cancelable`). */
const cancelWaitMs = 2000;

/** Waits for `promise` (which never rejects), or `ms` at most. */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise,
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}

function canceled(signal: AbortSignal): PromqlError {
  return new PromqlError('canceled', 'query canceled', { cause: signal.reason });
}

/**
 * Settings for the transaction of a read's COPY: PostgreSQL compiles (JIT) the expressions and
 * the tuple deforming of a statement estimated past 40,000, without inlining or optimizing,
 * which cost more to compile than they saved. The default threshold, 100,000, left a PromQL read
 * of 250 series × 6 h (estimated ~56,000, 360,000 rows) interpreted: compiled, it took 88 ms of
 * the server's time against 100 (docs/benchmarks/promql.md, "PromQL"). Below ~120,000 rows the compile
 * (~6 ms) costs more than it saves, hence a threshold at about twice that. A server with JIT off
 * stays so.
 */
const bulkReadJit = `select set_config('jit_above_cost', '40000', true),
  set_config('jit_inline_above_cost', '-1', true),
  set_config('jit_optimize_above_cost', '-1', true)`;

/**
 * The database side of PromQL's SeriesSource, for one organization: series chosen by their
 * labels, samples read raw from `samples` and `unaggregated_samples` (see `select` for why
 * never from the rollups), staleness markers flagged.
 * Errors come out as the package's typed errors (DatabaseUnavailableError: retry).
 */
export function createPrometheusSeriesSource(
  db: Database,
  orgId: string,
  options: {
    /**
     * Where the query's samples are decoded: a pool's slabs, handed back once its answer is
     * written (createFloat64SlabPool). Without one, each read's slabs are its own.
     */
    slabs?: Float64SlabLease;
  } = {},
): SeriesSource {
  const { sql } = db;

  /**
   * Candidate series of the org narrowed by the equality matchers, then every matcher; stored
   * series whose labels read the same are one series.
   */
  async function matching(matchers: readonly LabelMatcher[]): Promise<SeriesRow[]> {
    const { metric, host, tags } = pushedDown(matchers);
    const hasTags = Object.keys(tags).length > 0;
    // An /ingest series matches on its service (name, tags); a labelled one on its labels.
    const ingestMatch = sql`s.labels is null
      ${host === null ? sql`` : sql`and v.name = ${host}`}
      ${hasTags ? sql`and v.tags @> ${sql.json(tags)}` : sql``}`;
    const labelled = host === null ? tags : { ...tags, host };
    const labelledMatch = sql`s.labels @> ${sql.json(labelled)}`;
    const rows = await sql<CandidateRow[]>`
      select s.id::text as id, s.metric, v.name as host, v.tags, s.labels
      from series s join services v on v.id = s.service_id
      where v.org_id = ${orgId}
        ${metric === null ? sql`` : sql`and s.metric = ${metric}`}
        ${host === null && !hasTags ? sql`` : sql`and ((${ingestMatch}) or ${labelledMatch})`}
      order by s.id
    `;
    const byLabels = new Map<string, SeriesRow>();
    for (const row of rows) {
      const labels = seriesLabels(row.metric, row.host, row.tags, row.labels);
      if (!matchesAll(labels, matchers)) continue;
      const key = labelsKey(labels);
      const same = byLabels.get(key);
      if (same === undefined) byLabels.set(key, { ids: [row.id], labels });
      else same.ids.push(row.id);
    }
    return [...byLabels.values()];
  }

  /** Of `ids`, those with a sample (of either table) or a staleness marker within `range`. */
  async function withPoints(ids: string[], range: TimeRange): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const from = new Date(range.startMs);
    const to = new Date(range.endMs);
    const rows = await sql<{ id: string }[]>`
      select s.id::text as id from unnest(${ids}::bigint[]) as s(id)
      where exists (
        select 1 from raw_samples(array[s.id], ${Math.ceil(range.startMs)}::bigint,
          ${Math.floor(range.endMs)}::bigint)
      ) or exists (
        select 1 from unaggregated_samples u
        where u.series_id = s.id and u.time >= ${from} and u.time <= ${to}
      ) or exists (
        select 1 from stale_markers m
        where m.series_id = s.id and m.time >= ${from} and m.time <= ${to}
      )
    `;
    return new Set(rows.map((r) => r.id));
  }

  async function matchingAny(
    sets: readonly (readonly LabelMatcher[])[],
    range: TimeRange,
  ): Promise<SeriesRow[]> {
    const byLabels = new Map<string, SeriesRow>();
    for (const set of sets.length === 0 ? [[]] : sets) {
      for (const row of await matching(set)) byLabels.set(labelsKey(row.labels), row);
    }
    const rows = [...byLabels.values()];
    const present = await withPoints(
      rows.flatMap((row) => row.ids),
      range,
    );
    return rows.filter((row) => row.ids.some((id) => present.has(id)));
  }

  /**
   * Runs `query`, canceled when `signal` aborts. PostgreSQL cancels whatever the connection's
   * backend runs when the request arrives, and a query may end just before: the request would
   * then fail the connection's next statement (this read's commit, or another query's). So once
   * a cancel is sent this settles only after the server has taken it (it closes the request's
   * connection after signaling the backend, and a backend signaled while idle ignores it), at
   * most `cancelWaitMs` later.
   */
  async function cancelable<T>(
    query: PromiseLike<T> & { cancel(): unknown },
    signal: AbortSignal,
  ): Promise<T> {
    let cancel: Promise<unknown> | undefined;
    const onAbort = (): void => {
      cancel = Promise.resolve(query.cancel()).catch(() => undefined);
    };
    signal.addEventListener('abort', onAbort);
    try {
      return await query;
    } catch (err) {
      if (signal.aborted) throw canceled(signal);
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (cancel !== undefined) await settledWithin(cancel, cancelWaitMs);
    }
  }

  /**
   * The samples of the stored series `ids` in `range`, per series id, in time order. One
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
   */
  async function readSamples(
    ids: string[],
    range: TimeRange,
    signal: AbortSignal,
  ): Promise<Map<string, Points>> {
    for (const id of ids) if (!/^[0-9]+$/.test(id)) throw new Error(`not a series id: ${id}`);
    // Stored times are whole milliseconds: the same samples as the range itself.
    const fromMs = Math.ceil(range.startMs);
    const toMs = Math.floor(range.endMs);
    if (!Number.isSafeInteger(fromMs) || !Number.isSafeInteger(toMs)) {
      throw new Error(`not a time range in milliseconds: ${range.startMs}…${range.endMs}`);
    }
    const slabs = options.slabs?.reader() ?? unpooledReader();
    try {
      return await readSamplesInto(ids, fromMs, toMs, slabs.allocate, signal);
    } finally {
      // Settled: the COPY has ended (or failed), and no row is decoded into the slabs any more.
      slabs.end();
    }
  }

  async function readSamplesInto(
    ids: string[],
    fromMs: number,
    toMs: number,
    allocate: Float64Allocator,
    signal: AbortSignal,
  ): Promise<Map<string, Points>> {
    // Times as 4-byte offsets from the range's start when it spans less than 2^31 ms (24.8 days).
    const timesAsOffsets = toMs - fromMs < 2 ** 31;
    const read = new Map<string, Points>();
    const reader = createCopyBinaryReader(([id, t, v]) => {
      if (!id || !t || !v) throw new Error('expected rows of (series_id, times, values)');
      const times = timesAsOffsets
        ? decodePackedOffsetsMs(t, fromMs, allocate)
        : decodePackedEpochMs(t, allocate);
      const { timesMs, values } = timeOrdered(times, decodeScaledCodes(v, times.length, allocate));
      // 8 bytes a value: scaled integers only, none of them NaN (a float8 takes 16 bytes).
      const nanFree = v.length === times.length * 8 ? true : undefined;
      read.set(id.readBigInt64BE(0).toString(), { timestampsMs: timesMs, values, nanFree });
    });
    // A connection of its own: the pool pipelines queries onto busy connections, and
    // postgres.js fails a query sent to one that is streaming a COPY (COPY_IN_PROGRESS).
    const connection = await sql.reserve();
    let inTransaction = false;
    try {
      await connection.unsafe('begin');
      inTransaction = true;
      await connection.unsafe(bulkReadJit);
      const query = connection.unsafe(`copy (
          select series_id,
            string_agg(${timesAsOffsets ? `int4send((time_ms - ${fromMs})::int4)` : 'int8send(time_ms)'},
              ''::bytea),
            string_agg(coalesce(int8send(scaled), '\\x0000000000000000'::bytea || float8send(value)),
              ''::bytea)
          from raw_scaled_samples('{${ids.join(',')}}'::bigint[], ${fromMs}, ${toMs})
          group by series_id
        ) to stdout (format binary)`);
      const copied = (async () => {
        const stream = await query.readable();
        // Chunks as they come ('data'), not as the async iterator reads them, which joins the
        // chunks waiting in the stream into one more copy. What the reader refuses fails the read
        // once the COPY has ended: a stream destroyed while the server sends leaves the
        // connection's socket paused (postgres.js pauses it when the stream refuses a chunk).
        let refused: Error | undefined;
        stream.on('data', (chunk: Buffer) => {
          if (refused !== undefined) return;
          try {
            reader.push(chunk);
          } catch (err) {
            refused =
              err instanceof Error ? err : new Error('unreadable COPY output', { cause: err });
          }
        });
        await finished(stream);
        if (refused !== undefined) throw refused;
        reader.end();
      })();
      await cancelable(Object.assign(copied, { cancel: () => query.cancel() }), signal);
      await connection.unsafe('commit');
      inTransaction = false;
    } finally {
      // A failed or canceled COPY leaves the transaction aborted: the connection goes back clean.
      if (inTransaction) await connection.unsafe('rollback').catch(() => undefined);
      connection.release();
    }
    return read;
  }

  /**
   * The unaggregated samples (NaN, ±Inf, beyond ±1e100) of the stored series `ids` in `range`:
   * few, so one statement, ordered. Like the markers, never canceled: it is quick, and it runs
   * on a pooled connection, where the statement a cancel reaches may be the one the pool sent
   * behind it, another query's.
   */
  async function readUnaggregated(ids: string[], range: TimeRange): Promise<Map<string, Points>> {
    const rows = await sql<{ id: string; t: Buffer; v: Buffer }[]>`
      select series_id::text as id, array_send(array_agg(time order by time)) as t,
        array_send(array_agg(value order by time)) as v
      from unaggregated_samples
      where series_id = any(${ids}::bigint[])
        and time >= ${new Date(range.startMs)} and time <= ${new Date(range.endMs)}
      group by series_id
    `;
    return new Map(
      rows.map((r) => [
        r.id,
        { timestampsMs: decodeTimestampArray(r.t), values: decodeFloat8Array(r.v) },
      ]),
    );
  }

  /** The staleness markers of the stored series `ids` in `range`, as points valued NaN. */
  async function readStaleMarkers(ids: string[], range: TimeRange): Promise<Map<string, Points>> {
    const rows = await sql<{ id: string; t: Buffer }[]>`
      select series_id::text as id, array_send(array_agg(time order by time)) as t
      from stale_markers
      where series_id = any(${ids}::bigint[])
        and time >= ${new Date(range.startMs)} and time <= ${new Date(range.endMs)}
      group by series_id
    `;
    return new Map(
      rows.map((r) => {
        const timestampsMs = decodeTimestampArray(r.t);
        const values = new Float64Array(timestampsMs.length).fill(NaN);
        return [r.id, { timestampsMs, values, stale: true as const }];
      }),
    );
  }

  /**
   * A selected series out of what was read for its stored series: `read` holds the samples,
   * the unaggregated samples and the markers, in the order a millisecond held twice is won.
   */
  function sourceSeries(
    row: SeriesRow,
    read: readonly ReadonlyMap<string, Points>[],
  ): SourceSeries {
    const lists: Points[] = [];
    for (const points of read) {
      for (const id of row.ids) {
        const list = points.get(id);
        if (list !== undefined) lists.push(list);
      }
    }
    const [only] = lists;
    if (lists.length === 1 && only !== undefined) return fromOneList(row.labels, only);
    if (lists.length === 0) return { labels: row.labels, timestampsMs: empty, values: empty };
    return merged(row.labels, lists);
  }

  const guarded =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await fn(...args);
      } catch (err) {
        throw translateDbError(err);
      }
    };

  return {
    /**
     * Raw samples only. samples_1m/samples_1h hold per-bucket avg/min/max/count/sum over
     * half-open minutes and hours; PromQL reads single samples (lookback) and closed windows
     * [t - range, t] at arbitrary steps, so no rollup gives an identical answer in general.
     */
    select: guarded(async (matchers, range, hints, signal): Promise<SourceSeries[]> => {
      if (signal.aborted) throw canceled(signal);
      let selected = await matching(matchers);
      if (selected.length > hints.maxSeries) selected = selected.slice(0, hints.maxSeries + 1);
      if (selected.length === 0) return [];
      // A few statements side by side: each reads its share of the series, so the server
      // spends more than one core on a query over many series. The markers and the
      // unaggregated samples, few, in one more each.
      const ids = selected.flatMap((row) => row.ids);
      const share = Math.ceil(ids.length / readConcurrency);
      const parts: string[][] = [];
      for (let i = 0; i < ids.length; i += share) parts.push(ids.slice(i, i + share));
      // The reads listen to a signal of their own, so that `signal` (shared by every selection
      // of a query) gets one listener per selection, not one per read: Node warns past ten.
      const reads = new AbortController();
      const onAbort = (): void => reads.abort(signal.reason);
      signal.addEventListener('abort', onAbort);
      const [markers, unaggregated, ...read] = await Promise.all([
        readStaleMarkers(ids, range),
        readUnaggregated(ids, range),
        ...parts.map((part) => readSamples(part, range, reads.signal)),
      ])
        .catch((err: unknown) => {
          // A read that fails once the query was canceled is canceled, whatever statement
          // noticed it.
          if (signal.aborted) throw canceled(signal);
          throw err;
        })
        .finally(() => signal.removeEventListener('abort', onAbort));
      const samples = new Map<string, Points>();
      for (const part of read) for (const [id, points] of part) samples.set(id, points);
      return selected.map((row) =>
        sourceSeries(row, [samples, unaggregated ?? new Map(), markers ?? new Map()]),
      );
    }),

    series: guarded(async (sets, range, limit) => {
      const rows = await matchingAny(sets, range);
      return rows.slice(0, limit).map((r) => r.labels);
    }),

    labelNames: guarded(async (sets, range) => {
      const names = new Set<string>();
      for (const row of await matchingAny(sets, range)) {
        for (const l of row.labels) names.add(l.name);
      }
      return [...names].sort();
    }),

    labelValues: guarded(async (name, sets, range) => {
      const values = new Set<string>();
      for (const row of await matchingAny(sets, range)) {
        for (const l of row.labels) if (l.name === name) values.add(l.value);
      }
      return [...values].sort();
    }),
  };
}
