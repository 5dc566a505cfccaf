import type { LabelMatcher, Labels, SeriesSource, SourceSeries, TimeRange } from '@monitor/promql';
import { labelsFrom, labelsKey, PromqlError } from '@monitor/promql';
import type { Database } from '../core/database.js';
import { translateDbError } from '../core/database-errors.js';

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
 * markers (`stale`, values NaN), as read.
 */
type Points = { timestampsMs: Float64Array; values: Float64Array; stale?: true };

/**
 * The series with its samples in ascending time order: array_agg keeps the order rows came in,
 * page order, which SQL does not promise to be time order. Checked, and sorted here when it is
 * not, rather than sorting every series in the aggregate (which doubled the server's time).
 */
function inTimeOrder(labels: Labels, points: Points): SourceSeries {
  const { timestampsMs: t, values: v } = points;
  // Every point flagged: a NaN that is no marker is a value (SourceSeries).
  const stale = new Uint8Array(t.length).fill(points.stale === true ? 1 : 0);
  let sorted = true;
  for (let i = 1; i < t.length && sorted; i++) sorted = t[i - 1]! < t[i]!;
  if (sorted) return { labels, timestampsMs: t, values: v, stale };
  const order = Array.from(t.keys()).sort((a, b) => t[a]! - t[b]!);
  return {
    labels,
    timestampsMs: Float64Array.from(order, (i) => t[i]!),
    values: Float64Array.from(order, (i) => v[i]!),
    stale,
  };
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

/** PostgreSQL's epoch (2000-01-01) in Unix ms: timestamptz's binary form counts µs from it. */
const postgresEpochMs = 946_684_800_000;

/**
 * The element count of a one-dimensional array without nulls of 8-byte elements in
 * PostgreSQL's binary format (array_send: ndim, flags, element oid, length, lower bound, then
 * a 4-byte size and the 8 bytes of each element), and a view to read them; 0 for none.
 */
function binaryArray(bytes: Buffer | null): { length: number; view: DataView } {
  const view =
    bytes === null
      ? new DataView(new ArrayBuffer(4))
      : new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes === null || view.getInt32(0) === 0) return { length: 0, view };
  if (view.getInt32(0) !== 1 || view.getInt32(4) !== 0 || bytes.length < 20) {
    throw new Error('expected a one-dimensional array without nulls');
  }
  const length = view.getInt32(12);
  if (bytes.length !== 20 + length * 12) throw new Error('expected 8-byte array elements');
  return { length, view };
}

/** timestamptz[] (µs since 2000-01-01) as epoch ms. Loops written out: they run per sample. */
function decodeTimestampArray(bytes: Buffer | null): Float64Array {
  const { length, view } = binaryArray(bytes);
  const out = new Float64Array(length);
  for (let i = 0, at = 24; i < length; i++, at += 12) {
    out[i] = (view.getInt32(at) * 4_294_967_296 + view.getUint32(at + 4)) / 1000 + postgresEpochMs;
  }
  return out;
}

function decodeFloat8Array(bytes: Buffer | null): Float64Array {
  const { length, view } = binaryArray(bytes);
  const out = new Float64Array(length);
  for (let i = 0, at = 24; i < length; i++, at += 12) out[i] = view.getFloat64(at);
  return out;
}

const empty = new Float64Array(0);

function canceled(signal: AbortSignal): PromqlError {
  return new PromqlError('canceled', 'query canceled', { cause: signal.reason });
}

/**
 * The database side of PromQL's SeriesSource, for one organization: series chosen by their
 * labels, samples read raw from `samples` and `unaggregated_samples` (see `select` for why
 * never from the rollups), staleness markers flagged.
 * Errors come out as the package's typed errors (DatabaseUnavailableError: retry).
 */
export function createPrometheusSeriesSource(db: Database, orgId: string): SeriesSource {
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
        select 1 from samples x where x.series_id = s.id and x.time >= ${from} and x.time <= ${to}
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

  /** Runs `query`, canceled when `signal` aborts. */
  async function cancelable<T>(
    query: PromiseLike<T> & { cancel(): unknown },
    signal: AbortSignal,
  ): Promise<T> {
    const onAbort = (): void => void query.cancel();
    signal.addEventListener('abort', onAbort);
    try {
      return await query;
    } catch (err) {
      if (signal.aborted) throw canceled(signal);
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * The samples of the stored series `ids` in `range`, per series id, as binary arrays
   * (array_send): no per-row conversion on the server, no text parsing here. One statement for
   * all of them: the index finds every wanted row and the heap is read page by page, each page
   * once, however many of the wanted series share it (rows land time-major, so one series' hour
   * spans hundreds of pages, each shared with the other series written beside it). Rows come in
   * page order, which is time order as samples are written; `inTimeOrder` makes sure of it.
   */
  async function readSamples(
    ids: string[],
    range: TimeRange,
    signal: AbortSignal,
  ): Promise<Map<string, Points>> {
    const rows = await cancelable(
      sql<{ id: string; t: Buffer; v: Buffer }[]>`
        select series_id::text as id, array_send(array_agg(time)) as t,
          array_send(array_agg(sample_value(mantissa, scale, value))) as v
        from samples
        where series_id = any(${ids}::bigint[])
          and time >= ${new Date(range.startMs)} and time <= ${new Date(range.endMs)}
        group by series_id
      `,
      signal,
    );
    return new Map(
      rows.map((r) => [
        r.id,
        { timestampsMs: decodeTimestampArray(r.t), values: decodeFloat8Array(r.v) },
      ]),
    );
  }

  /**
   * The unaggregated samples (NaN, ±Inf, beyond ±1e100) of the stored series `ids` in `range`:
   * few, so one statement, ordered.
   */
  async function readUnaggregated(
    ids: string[],
    range: TimeRange,
    signal: AbortSignal,
  ): Promise<Map<string, Points>> {
    const rows = await cancelable(
      sql<{ id: string; t: Buffer; v: Buffer }[]>`
        select series_id::text as id, array_send(array_agg(time order by time)) as t,
          array_send(array_agg(value order by time)) as v
        from unaggregated_samples
        where series_id = any(${ids}::bigint[])
          and time >= ${new Date(range.startMs)} and time <= ${new Date(range.endMs)}
        group by series_id
      `,
      signal,
    );
    return new Map(
      rows.map((r) => [
        r.id,
        { timestampsMs: decodeTimestampArray(r.t), values: decodeFloat8Array(r.v) },
      ]),
    );
  }

  /** The staleness markers of the stored series `ids` in `range`, as points valued NaN. */
  async function readStaleMarkers(
    ids: string[],
    range: TimeRange,
    signal: AbortSignal,
  ): Promise<Map<string, Points>> {
    const rows = await cancelable(
      sql<{ id: string; t: Buffer }[]>`
        select series_id::text as id, array_send(array_agg(time order by time)) as t
        from stale_markers
        where series_id = any(${ids}::bigint[])
          and time >= ${new Date(range.startMs)} and time <= ${new Date(range.endMs)}
        group by series_id
      `,
      signal,
    );
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
    if (lists.length === 1 && only !== undefined) return inTimeOrder(row.labels, only);
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
      const [markers, unaggregated, ...read] = await Promise.all([
        readStaleMarkers(ids, range, signal),
        readUnaggregated(ids, range, signal),
        ...parts.map((part) => readSamples(part, range, signal)),
      ]);
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
