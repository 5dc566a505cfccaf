import type { LabelMatcher, Labels, SeriesSource, SourceSeries, TimeRange } from '@monitor/promql';
import { labelsFrom, PromqlError } from '@monitor/promql';
import type { Database } from '../core/database.js';
import { translateDbError } from '../core/database-errors.js';

/** A stored series with its labels as PromQL sees them. */
type SeriesRow = { id: string; labels: Labels };

type CandidateRow = { id: string; metric: string; host: string; tags: Record<string, string> };

/**
 * The label set of a stored series (CONTRACT, "Prometheus-compatible reading"): the service's
 * tags, `host` = the service's name, `__name__` = the metric. The agent protocols store a
 * series' labels as those tags on write (remote-write: every label but `__name__`; `host` from
 * the `host` label or the `instance` without its port), so a series written with a `host` label
 * reads back with exactly the labels it was written with.
 */
function seriesLabels(metric: string, host: string, tags: Record<string, string>): Labels {
  return labelsFrom({ ...tags, host, __name__: metric });
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

/** Equality matchers pushed into SQL; every matcher is still checked on the labels after. */
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
 * The series with its samples in ascending time order: array_agg keeps the order rows came in,
 * page order, which SQL does not promise to be time order. Checked, and sorted here when it is
 * not, rather than sorting every series in the aggregate (which doubled the server's time).
 */
function inTimeOrder(series: {
  labels: Labels;
  timestampsMs: Float64Array;
  values: Float64Array;
}): SourceSeries {
  const { timestampsMs: t, values: v } = series;
  let sorted = true;
  for (let i = 1; i < t.length && sorted; i++) sorted = t[i - 1]! < t[i]!;
  if (sorted) return series;
  const order = Array.from(t.keys()).sort((a, b) => t[a]! - t[b]!);
  return {
    labels: series.labels,
    timestampsMs: Float64Array.from(order, (i) => t[i]!),
    values: Float64Array.from(order, (i) => v[i]!),
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

function canceled(signal: AbortSignal): PromqlError {
  return new PromqlError('canceled', 'query canceled', { cause: signal.reason });
}

/**
 * The database side of PromQL's SeriesSource, for one organization: series chosen by their
 * labels, samples read raw from `samples` (see `select` for why never from the rollups).
 * Errors come out as the package's typed errors (DatabaseUnavailableError: retry).
 */
export function createPrometheusSeriesSource(db: Database, orgId: string): SeriesSource {
  const { sql } = db;

  /** Candidate series of the org narrowed by the equality matchers, then every matcher. */
  async function matching(matchers: readonly LabelMatcher[]): Promise<SeriesRow[]> {
    const { metric, host, tags } = pushedDown(matchers);
    const rows = await sql<CandidateRow[]>`
      select s.id::text as id, s.metric, v.name as host, v.tags
      from series s join services v on v.id = s.service_id
      where v.org_id = ${orgId}
        ${metric === null ? sql`` : sql`and s.metric = ${metric}`}
        ${host === null ? sql`` : sql`and v.name = ${host}`}
        ${Object.keys(tags).length === 0 ? sql`` : sql`and v.tags @> ${sql.json(tags)}`}
    `;
    const out: SeriesRow[] = [];
    for (const row of rows) {
      const labels = seriesLabels(row.metric, row.host, row.tags);
      if (matchesAll(labels, matchers)) out.push({ id: row.id, labels });
    }
    return out;
  }

  /** Of `ids`, those with a sample within `range`. */
  async function withSamples(ids: string[], range: TimeRange): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await sql<{ id: string }[]>`
      select s.id::text as id from unnest(${ids}::bigint[]) as s(id)
      where exists (
        select 1 from samples x where x.series_id = s.id
          and x.time >= ${new Date(range.startMs)} and x.time <= ${new Date(range.endMs)}
      )
    `;
    return new Set(rows.map((r) => r.id));
  }

  async function matchingAny(
    sets: readonly (readonly LabelMatcher[])[],
    range: TimeRange,
  ): Promise<SeriesRow[]> {
    const byId = new Map<string, SeriesRow>();
    for (const set of sets.length === 0 ? [[]] : sets) {
      for (const row of await matching(set)) byId.set(row.id, row);
    }
    const present = await withSamples([...byId.keys()], range);
    return [...byId.values()].filter((row) => present.has(row.id));
  }

  /**
   * The samples of `part` in `range`, per series, as binary arrays (array_send): no per-row
   * conversion on the server, no text parsing here. One statement for all of `part`: the index
   * finds every wanted row and the heap is read page by page, each page once, however many of
   * the wanted series share it (rows land time-major, so one series' hour spans hundreds of
   * pages, each shared with the other series written beside it). Rows come in page order,
   * which is time order as samples are written; `inTimeOrder` makes sure of it.
   */
  async function readSamples(
    part: SeriesRow[],
    range: TimeRange,
    signal: AbortSignal,
  ): Promise<SourceSeries[]> {
    const query = sql<{ id: string; t: Buffer; v: Buffer }[]>`
      select series_id::text as id, array_send(array_agg(time)) as t,
        array_send(array_agg(value)) as v
      from samples
      where series_id = any(${part.map((p) => p.id)}::bigint[])
        and time >= ${new Date(range.startMs)} and time <= ${new Date(range.endMs)}
      group by series_id
    `;
    const onAbort = (): void => void query.cancel();
    signal.addEventListener('abort', onAbort);
    let rows;
    try {
      rows = await query;
    } catch (err) {
      if (signal.aborted) throw canceled(signal);
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    const samples = new Map(rows.map((r) => [r.id, r]));
    return part.map((s) => {
      const row = samples.get(s.id);
      return inTimeOrder({
        labels: s.labels,
        timestampsMs: decodeTimestampArray(row?.t ?? null),
        values: decodeFloat8Array(row?.v ?? null),
      });
    });
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
      // spends more than one core on a query over many series.
      const share = Math.ceil(selected.length / readConcurrency);
      const parts: SeriesRow[][] = [];
      for (let i = 0; i < selected.length; i += share) parts.push(selected.slice(i, i + share));
      const read = await Promise.all(parts.map((part) => readSamples(part, range, signal)));
      return read.flat();
    }),

    series: guarded(async (sets, range, limit) => {
      const rows = await matchingAny(sets, range);
      return rows.slice(0, limit).map((r) => r.labels);
    }),

    labelNames: guarded(async (sets, range) => {
      const names = new Set<string>();
      for (const row of await matchingAny(sets, range))
        for (const l of row.labels) names.add(l.name);
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
