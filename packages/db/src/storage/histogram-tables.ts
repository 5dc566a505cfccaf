/**
 * Migration 39's tables of native histograms, the same on both engines but for how the chunks
 * are partitioned (histograms/histogram-chunks.ts says how they are used).
 *
 * `histogram_samples`: the newest, each as written (a chunk of one in our layout), until the
 * writer's maintenance compacts them. A small plain table.
 */
export const histogramSamplesTable = `create table histogram_samples (
  series_id bigint not null,
  time timestamptz not null,
  histogram bytea not null,
  primary key (series_id, time)
)`;

/** `histogram_chunks`' columns: a series' `samples` histograms from `time` to `end_time`. */
export const histogramChunksColumns = `(
  series_id bigint not null,
  time timestamptz not null,
  end_time timestamptz not null,
  samples integer not null,
  chunk bytea not null
)`;

/** Its key: the first stored at a series' first time stands. */
export const histogramChunksKey = `create unique index histogram_chunks_series_id_time_key
  on histogram_chunks (series_id, time)`;
