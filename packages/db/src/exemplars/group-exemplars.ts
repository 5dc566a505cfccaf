import type { Labels } from '@monitor/promql';
import { compareLabels } from '@monitor/promql';
import type { ChosenSeries } from '../series/choose-series.js';

/** One exemplar as stored: its own time, its value and its labels (a trace id, say). */
type StoredExemplar = {
  timeMs: number;
  value: number;
  labels: Record<string, string>;
};

/** A row of `exemplars`, its series by stored id. */
export type ExemplarRow = StoredExemplar & { seriesId: string };

/** A series as PromQL labels it, with its exemplars in time order. */
export type SeriesExemplars = { seriesLabels: Labels; exemplars: StoredExemplar[] };

/**
 * The rows of the stored series of `chosen`, as Prometheus' exemplar storage answers a select:
 * one entry per series with any, in `labels.Compare` order, exemplars ascending by time. A
 * series stored under several ids keeps one exemplar per time, its oldest id's, as one stored
 * series keeps the first (the unique key). Rows of other ids are ignored.
 */
export function groupExemplarsBySeries(
  chosen: readonly ChosenSeries[],
  rows: readonly ExemplarRow[],
): SeriesExemplars[] {
  // Each stored id's series, and its age among that series' ids (oldest first).
  const owners = new Map<string, { series: number; age: number }>();
  chosen.forEach((series, index) => {
    series.ids.forEach((id, age) => owners.set(id, { series: index, age }));
  });
  const found = chosen.map(() => [] as { exemplar: StoredExemplar; age: number }[]);
  for (const { seriesId, ...exemplar } of rows) {
    const owner = owners.get(seriesId);
    if (owner !== undefined) found[owner.series]!.push({ exemplar, age: owner.age });
  }
  const grouped: SeriesExemplars[] = [];
  chosen.forEach((series, index) => {
    const of = found[index]!;
    if (of.length === 0) return;
    of.sort((a, b) => a.exemplar.timeMs - b.exemplar.timeMs || a.age - b.age);
    const exemplars: StoredExemplar[] = [];
    for (const { exemplar } of of) {
      if (exemplars.at(-1)?.timeMs !== exemplar.timeMs) exemplars.push(exemplar);
    }
    grouped.push({ seriesLabels: series.labels, exemplars });
  });
  return grouped.sort((a, b) => compareLabels(a.seriesLabels, b.seriesLabels));
}
