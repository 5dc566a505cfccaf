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
      const query = sql<{ id: string; t: number[]; v: number[] }[]>`
        select series_id::text as id,
          array_agg((extract(epoch from time) * 1000)::float8 order by time) as t,
          array_agg(value order by time) as v
        from samples
        where series_id = any(${selected.map((s) => s.id)}::bigint[])
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
      return selected.map((s) => {
        const row = samples.get(s.id);
        return { labels: s.labels, timestampsMs: row?.t ?? [], values: row?.v ?? [] };
      });
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
