/**
 * Migration 39's `histogram_samples`: the newest native histograms, each as written (a chunk of
 * one in our layout), until the writer's maintenance compacts them into `histogram_chunks`
 * (histograms/histogram-chunks.ts). A small plain table on both engines.
 */
export const histogramSamplesTable = `create table histogram_samples (
  series_id bigint not null,
  time timestamptz not null,
  histogram bytea not null,
  primary key (series_id, time)
)`;
