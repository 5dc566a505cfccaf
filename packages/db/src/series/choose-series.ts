import type { LabelMatcher, Labels, TimeRange } from '@monitor/promql';
import { labelsFrom, labelsKey } from '@monitor/promql';
import type { Sql } from '../core/database.js';
import { keptTiers } from '../storage/kept-tiers.js';

/**
 * A series as PromQL sees it: its labels, and the stored series that carry them, oldest first
 * (usually one; more when an old series labelled by its service's tags and a new one with its
 * own labels read the same).
 */
export type ChosenSeries = { ids: string[]; labels: Labels };

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
export function storedSeriesLabels(
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
export function pushedDownMatchers(matchers: readonly LabelMatcher[]): {
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

/** Chooses an organization's series by their labels. Errors are postgres.js's, untranslated. */
export type SeriesChooser = {
  /**
   * The series matching every matcher, ordered by their oldest stored series; stored series
   * whose labels read the same are one series.
   */
  matching(matchers: readonly LabelMatcher[]): Promise<ChosenSeries[]>;
  /** The series matching any of the matcher lists (every series when there are none). */
  matchingAny(sets: readonly (readonly LabelMatcher[])[]): Promise<ChosenSeries[]>;
  /**
   * The series matching any of the matcher lists (every series when there are none) with a
   * sample or a staleness marker within `range`.
   */
  matchingAnyWithPoints(
    sets: readonly (readonly LabelMatcher[])[],
    range: TimeRange,
  ): Promise<ChosenSeries[]>;
};

export function createSeriesChooser(sql: Sql, orgId: string): SeriesChooser {
  /**
   * Candidate series of the org narrowed by the equality matchers, then every matcher; stored
   * series whose labels read the same are one series.
   */
  async function matching(matchers: readonly LabelMatcher[]): Promise<ChosenSeries[]> {
    const { metric, host, tags } = pushedDownMatchers(matchers);
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
    const byLabels = new Map<string, ChosenSeries>();
    for (const row of rows) {
      const labels = storedSeriesLabels(row.metric, row.host, row.tags, row.labels);
      if (!matchesAll(labels, matchers)) continue;
      const key = labelsKey(labels);
      const same = byLabels.get(key);
      if (same === undefined) byLabels.set(key, { ids: [row.id], labels });
      else same.ids.push(row.id);
    }
    return [...byLabels.values()];
  }

  /**
   * Of `ids`, those with a sample (of either table, a native histogram, or summarized by a kept tier's bucket that
   * overlaps the range: the raw samples may be gone) or a staleness marker within `range`.
   */
  async function withPoints(ids: string[], range: TimeRange): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const from = new Date(range.startMs);
    const to = new Date(range.endMs);
    // A bucket (e − w, e] overlaps the range when e > start and e − w < end: like Prometheus'
    // blocks, a bucket at the range's edge may list a series whose samples lie just outside.
    const inTiers = keptTiers.reduce(
      (others, tier) => sql`${others} or exists (
        select 1 from ${sql(tier.table)} t where t.series_id = s.id
          and t.bucket_ms > ${Math.floor(range.startMs)}::bigint
          and t.bucket_ms < ${Math.ceil(range.endMs) + tier.widthMs}::bigint
      )`,
      sql``,
    );
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
      ) or exists (
        select 1 from histogram_samples h
        where h.series_id = s.id and h.time >= ${from} and h.time <= ${to}
      ) or exists (
        select 1 from histogram_chunks h
        where h.series_id = s.id and h.time <= ${to} and h.end_time >= ${from}
      ) ${inTiers}
    `;
    return new Set(rows.map((r) => r.id));
  }

  async function matchingAny(sets: readonly (readonly LabelMatcher[])[]): Promise<ChosenSeries[]> {
    const byLabels = new Map<string, ChosenSeries>();
    for (const set of sets.length === 0 ? [[]] : sets) {
      for (const row of await matching(set)) byLabels.set(labelsKey(row.labels), row);
    }
    return [...byLabels.values()];
  }

  async function matchingAnyWithPoints(
    sets: readonly (readonly LabelMatcher[])[],
    range: TimeRange,
  ): Promise<ChosenSeries[]> {
    const rows = await matchingAny(sets);
    const present = await withPoints(
      rows.flatMap((row) => row.ids),
      range,
    );
    return rows.filter((row) => row.ids.some((id) => present.has(id)));
  }

  return { matching, matchingAny, matchingAnyWithPoints };
}
