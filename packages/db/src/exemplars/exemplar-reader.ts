import type { LabelMatcher, TimeRange } from '@monitor/promql';
import type { Database } from '../core/database.js';
import { createSeriesChooser } from '../series/choose-series.js';
import type { SeriesExemplars } from './group-exemplars.js';
import { groupExemplarsBySeries } from './group-exemplars.js';

/** Bounds on one read, so that a broad selector over a long range does not scan without end. */
type ExemplarReadLimits = {
  /** The most series the selectors may match, with exemplars or not. */
  maxSeries: number;
  /** The most exemplars the answer may hold. */
  maxExemplars: number;
};

/** What one read found: the series with exemplars, or the limit it stopped at. */
export type ExemplarsRead = { series: SeriesExemplars[] } | { overLimit: keyof ExemplarReadLimits };

/** The exemplars of an organization's series, as `query_exemplars` answers them. */
export type ExemplarReader = {
  /**
   * The exemplars within `range` (both ends included) of the org's series that match any one of
   * `selectors` (every matcher of it), grouped by series (groupExemplarsBySeries).
   */
  read(
    orgId: string,
    selectors: readonly (readonly LabelMatcher[])[],
    range: TimeRange,
    limits: ExemplarReadLimits,
  ): Promise<ExemplarsRead>;
};

type Row = {
  series_id: string;
  time_ms: number;
  value: number;
  labels: Record<string, string>;
};

/**
 * Exemplars from `exemplars`, their series chosen by labels as PromQL chooses them
 * (choose-series.ts). Errors are postgres.js's: the package's index translates them.
 */
export function createExemplarReader(db: Database): ExemplarReader {
  const { sql } = db;
  return {
    async read(orgId, selectors, range, limits) {
      const chosen = await createSeriesChooser(sql, orgId).matchingAny(selectors);
      if (chosen.length > limits.maxSeries) return { overLimit: 'maxSeries' };
      const ids = chosen.flatMap((series) => series.ids);
      if (ids.length === 0) return { series: [] };
      // No order: the limit then stops the scan as soon as the answer is known to be too big.
      const rows = await sql<Row[]>`
        select series_id::text as series_id,
          (extract(epoch from time) * 1000)::float8 as time_ms, value, labels
        from exemplars
        where series_id = any(${ids}::bigint[])
          and time >= ${new Date(range.startMs)} and time <= ${new Date(range.endMs)}
        limit ${limits.maxExemplars + 1}
      `;
      if (rows.length > limits.maxExemplars) return { overLimit: 'maxExemplars' };
      return {
        series: groupExemplarsBySeries(
          chosen,
          rows.map((row) => ({
            seriesId: row.series_id,
            timeMs: row.time_ms,
            value: row.value,
            labels: row.labels,
          })),
        ),
      };
    },
  };
}
