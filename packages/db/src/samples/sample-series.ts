import type { TransactionSql } from '../core/database.js';
import type { SeriesName } from './series-ids.js';
import { resolveSeriesIds, seriesKey } from './series-ids.js';
import type { BatchRows } from './batch-rows.js';
import type { StoredService } from './service-projection.js';

export type LearnedSeries = SeriesName & { generation: number; id: number };

/**
 * Fills in the series ids the cache did not have (one statement for all of the batch's, which
 * creates the new series) and returns them, for the cache once the batch committed.
 */
export async function resolveMissingSeries(
  tx: TransactionSql,
  rows: BatchRows,
): Promise<LearnedSeries[]> {
  const { missing } = rows.series;
  if (missing.length === 0) return [];
  const resolved = await resolveSeriesIds(tx, missing);
  for (const seriesIds of [
    rows.samples.seriesIds,
    rows.staleMarkers.seriesIds,
    rows.unaggregated.seriesIds,
    rows.exemplars.seriesIds,
    rows.histograms.seriesIds,
  ]) {
    for (let i = 0; i < seriesIds.length; i++) {
      const value = seriesIds[i] ?? 0;
      if (value < 0) seriesIds[i] = resolved[-value - 1] ?? 0;
    }
  }
  return missing.map((name, slot) => ({ ...name, id: resolved[slot] ?? 0 }));
}

/** A service's series ids as `toRows` finds them: cached, or placeholders of missing ones. */
export type ServiceSeriesIds = {
  service: StoredService;
  cached: ReadonlyMap<string, number> | undefined;
  missing: Map<string, number>;
};

/** The id of a series, or the placeholder of a missing one (added to `rows.series.missing`). */
export function seriesIdOf(
  series: ServiceSeriesIds,
  metric: string,
  labels: string | null,
  rows: BatchRows,
): number {
  const key = seriesKey(metric, labels);
  const id = series.cached?.get(key) ?? series.missing.get(key);
  if (id !== undefined) return id;
  const { service } = series;
  rows.series.missing.push({
    serviceId: service.id,
    generation: service.seriesGeneration,
    metric,
    labels,
  });
  const placeholder = -rows.series.missing.length;
  series.missing.set(key, placeholder);
  return placeholder;
}
