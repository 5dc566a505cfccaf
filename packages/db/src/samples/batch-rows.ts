import type { SeriesName } from './series-ids.js';
import type { UnaggregatedRows } from './unaggregated-samples.js';

/**
 * One entry per metric value. `mantissas` and `scales` are filled by `scaleValues` once the
 * series ids are known: a value is stored as `mantissa / 10^scale`, or as the float8 `value`
 * where its scale is `unscaled` (scaled-value.ts).
 */
export type SampleColumns = {
  timesMs: number[];
  seriesIds: number[];
  values: number[];
  mantissas: number[];
  scales: number[];
};

/** Samples and snapshots of a batch, flattened. */
export type BatchRows = {
  /**
   * One entry per metric value. A series id the cache did not have is -(i + 1) for entry i of
   * `series.missing` until `resolveMissingSeries` replaced it.
   */
  samples: SampleColumns;
  /** The values `samples` does not take (`isAggregatable`), series ids as in `samples`. */
  unaggregated: UnaggregatedRows;
  /** One entry per staleness marker, series ids as in `samples`. */
  staleMarkers: { timesMs: number[]; seriesIds: number[] };
  /** One entry per exemplar, series ids as in `samples`, labels as JSON text. */
  exemplars: { timesMs: number[]; seriesIds: number[]; values: number[]; labels: string[] };
  /** One entry per native histogram, series ids as in `samples`, each a chunk of one, in hex. */
  histograms: { timesMs: number[]; seriesIds: number[]; chunks: string[] };
  /** The batch's distinct series missing from the cache. */
  series: { missing: (SeriesName & { generation: number })[] };
  snapshots: { times: string[]; serviceIds: string[]; containers: string[]; processes: string[] };
};
