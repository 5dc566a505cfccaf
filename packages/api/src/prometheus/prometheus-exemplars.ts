import type { SeriesExemplars } from '@monitor/db';
import { labelsToRecord } from '@monitor/promql';
import { formatSampleValue } from './prometheus-answer.js';

/** A label object with its keys in name order, as Go writes a map (jsonb keeps its own order). */
function sortedLabels(labels: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

/** `query_exemplars`' data as Prometheus 2.42 writes it (prometheusExemplarsDataSchema). */
export function prometheusExemplars(series: readonly SeriesExemplars[]): unknown[] {
  return series.map(({ seriesLabels, exemplars }) => ({
    seriesLabels: labelsToRecord(seriesLabels),
    exemplars: exemplars.map((exemplar) => ({
      labels: sortedLabels(exemplar.labels),
      value: formatSampleValue(exemplar.value),
      timestamp: exemplar.timeMs / 1000,
    })),
  }));
}
