import {
  histogramChunksColumns,
  histogramChunksKey,
  histogramSamplesTable,
} from '../histogram-tables.js';
import type { TransactionSql } from '../../core/database.js';
import { identifier, run } from '../ddl.js';
import { rawScaledSamplesFunction, readFunctions } from './read-functions.js';

/**
 * Version 3: samples and snapshots range-partitioned by day (partitions.ts keeps the daily
 * partitions), each with a DEFAULT partition for rows outside them.
 */
export async function createSampleTables(sql: TransactionSql): Promise<void> {
  await run(sql, [
    `create table samples (
      time timestamptz not null,
      service_id text not null,
      metric text not null,
      value double precision not null
    ) partition by range (time)`,
    // json, not jsonb: snapshots are written with every host sample and only ever read whole,
    // and parsing into jsonb doubled the writer's cost per batch (docs/benchmarks/ingest.md).
    `create table snapshots (
      time timestamptz not null,
      service_id text not null,
      containers json not null,
      processes json not null
    ) partition by range (time)`,
    // Rows outside every daily partition land here instead of being rejected;
    // ensurePartitions moves them out when their day's partition is created.
    `create table samples_default partition of samples default`,
    `create table snapshots_default partition of snapshots default`,
    // The dedup key: replays and an agent's own retries store each point once.
    `create unique index samples_service_id_metric_time_key on samples (service_id, metric, time)`,
    `create unique index snapshots_service_id_time_key on snapshots (service_id, time)`,
    // Rollup refreshes read time ranges. Samples arrive in roughly time order, so a BRIN index
    // finds them at almost no cost per insert (TimescaleDB makes a B-tree time index itself).
    `create index samples_time_idx on samples using brin (time)`,
  ]);
}

/** Column list of samples_1m and samples_1h as version 4 made them. */
const rollupColumns = `
  bucket timestamptz not null,
  service_id text not null,
  metric text not null,
  avg double precision not null,
  min double precision not null,
  max double precision not null,
  count bigint not null,
  sum double precision not null`;

/**
 * Version 4: samples_1m and samples_1h as tables with the continuous aggregates' columns,
 * refreshed by rollup-refresh.ts up to a watermark each.
 */
export async function createRollups(sql: TransactionSql): Promise<void> {
  await run(sql, [
    `create table samples_1m (${rollupColumns},
      constraint samples_1m_service_id_metric_bucket_key unique (service_id, metric, bucket))`,
    `create table samples_1h (${rollupColumns},
      constraint samples_1h_service_id_metric_bucket_key unique (service_id, metric, bucket))`,
    // Up to where each rollup is computed (exclusive; null: never refreshed). The refresh
    // recomputes from a lookback before it so late samples are counted.
    `create table rollup_watermarks (
      rollup text primary key,
      watermark timestamptz,
      refreshed_at timestamptz
    )`,
    `insert into rollup_watermarks (rollup) values ('samples_1m'), ('samples_1h')`,
  ]);
}

/** Column list of samples_1m and samples_1h keyed by series (version 16 on). */
const seriesRollupColumns = `
  bucket timestamptz not null,
  series_id bigint not null,
  avg double precision not null,
  min double precision not null,
  max double precision not null,
  count bigint not null,
  sum double precision not null`;

/** What the layout of version 15 is renamed to while its rows are copied into the new one. */
const previous = '_v15';

/** Version 16: samples and both rollups keyed by series id instead of (service, metric). */
export async function keySamplesBySeries(sql: TransactionSql): Promise<void> {
  await samplesBySeries(sql);
  for (const rollup of ['samples_1m', 'samples_1h']) await rollupBySeries(sql, rollup);
}

/**
 * Plain PostgreSQL: a new partitioned samples with the old one's partitions (same names and
 * bounds, the default one included), filled from the old rows, then the old table dropped.
 * Indexes are built once the rows are in, which is faster than maintaining them row by row.
 */
async function samplesBySeries(sql: TransactionSql): Promise<void> {
  const partitions = await sql<{ name: string; bound: string }[]>`
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'samples'::regclass
    order by 1
  `;
  // The old names are freed for the new objects (index names are unique per schema too).
  await run(sql, [
    `alter table samples rename to samples${previous}`,
    `alter index samples_time_idx rename to samples${previous}_time_idx`,
    ...partitions.map(
      (partition, i) =>
        `alter table ${identifier(partition.name)} rename to samples${previous}_part_${i}`,
    ),
    `create table samples (
      time timestamptz not null,
      series_id bigint not null,
      value double precision not null
    ) partition by range (time)`,
    ...partitions.map(
      (partition) =>
        `create table ${identifier(partition.name)} partition of samples ${partition.bound}`,
    ),
    `insert into samples (time, series_id, value)
      select s.time, r.id, s.value
      from samples${previous} s join series r on r.service_id = s.service_id and r.metric = s.metric`,
    `drop table samples${previous}`,
    // The dedup key: replays and an agent's own retries store each point once.
    `create unique index samples_series_id_time_key on samples (series_id, time)`,
    `create index samples_time_idx on samples using brin (time)`,
  ]);
}

async function rollupBySeries(sql: TransactionSql, rollup: string): Promise<void> {
  await run(sql, [
    `alter table ${rollup} rename to ${rollup}${previous}`,
    `create table ${rollup} (${seriesRollupColumns})`,
    `insert into ${rollup} (bucket, series_id, avg, min, max, count, sum)
      select o.bucket, r.id, o.avg, o.min, o.max, o.count, o.sum
      from ${rollup}${previous} o join series r on r.service_id = o.service_id and r.metric = o.metric`,
    `drop table ${rollup}${previous}`,
    `alter table ${rollup} add constraint ${rollup}_series_id_bucket_key unique (series_id, bucket)`,
  ]);
}

/** The complete buckets below each watermark, as the refresh writes them. */
const materializedRollup = {
  samples_1m: 'samples_1m_materialized',
  samples_1h: 'samples_1h_materialized',
} as const;

/**
 * Version 19: samples_1m and samples_1h become views that read like TimescaleDB's real-time
 * aggregates: the refreshed buckets below the rollup's watermark (kept in
 * `samples_1m_materialized` and `samples_1h_materialized`) plus, above it, buckets computed in
 * the query from the finer level (raw samples for minutes, minutes for hours). Query code reads
 * the same names the same way on both engines. Values are clamped to ±1e100 as the refresh
 * clamps them (see rollupValueBound), so a bucket reads the same before and after it is refreshed.
 */
export async function createRealTimeRollups(sql: TransactionSql): Promise<void> {
  await run(sql, [
    `alter table samples_1m rename to ${materializedRollup.samples_1m}`,
    `alter table samples_1h rename to ${materializedRollup.samples_1h}`,
    `alter table ${materializedRollup.samples_1m} rename constraint samples_1m_series_id_bucket_key
      to ${materializedRollup.samples_1m}_series_id_bucket_key`,
    `alter table ${materializedRollup.samples_1h} rename constraint samples_1h_series_id_bucket_key
      to ${materializedRollup.samples_1h}_series_id_bucket_key`,
    ...realTimeRollupViews('create', 'value'),
  ]);
}

const rollupWatermark = (rollup: string) =>
  `coalesce((select watermark from rollup_watermarks where rollup = '${rollup}'), '-infinity')`;

/** A rollup table's columns as the views show them, clamped to ±`bound` (rollupValueBound). */
const clampedColumns = (bound: string) => `bucket, series_id,
      least(greatest(sum, -${bound} * count), ${bound} * count) / count as avg,
      least(greatest(min, -${bound}), ${bound}) as min,
      least(greatest(max, -${bound}), ${bound}) as max,
      count,
      least(greatest(sum, -${bound} * count), ${bound} * count) as sum`;

const bound = '1e100::float8';

/**
 * A rollup's view over its table below its watermark and, above it, its buckets of `width`
 * computed from the raw samples' `value` (an SQL expression), clamped as the refresh clamps.
 */
function viewOverRawSamples(
  verb: 'create' | 'create or replace',
  rollup: 'samples_1m' | 'samples_1h',
  width: string,
  value: string,
): string {
  return `${verb} view ${rollup} as
      select ${clampedColumns(bound)} from ${materializedRollup[rollup]}
      where bucket < ${rollupWatermark(rollup)}
      union all
      select date_bin(interval '${width}', time, timestamptz '2000-01-01 00:00:00+00') as bucket,
        series_id, sum(v) / count(*) as avg, min(v) as min, max(v) as max, count(*) as count,
        sum(v) as sum
      from (
        select time, series_id, least(greatest(${value}, -${bound}), ${bound}) as v from samples
        where time >= ${rollupWatermark(rollup)}
      ) clamped
      group by 1, 2`;
}

/**
 * The views of samples_1m and samples_1h (see createRealTimeRollups), aggregating `value`: the
 * SQL expression of a sample's value (the float8 column until migration 24,
 * `sample_value(…)` since).
 */
function realTimeRollupViews(verb: 'create' | 'create or replace', value: string): string[] {
  return [
    viewOverRawSamples(verb, 'samples_1m', '1 minute', value),
    `${verb} view samples_1h as
      select ${clampedColumns(bound)} from ${materializedRollup.samples_1h}
      where bucket < ${rollupWatermark('samples_1h')}
      union all
      select date_bin(interval '1 hour', bucket, timestamptz '2000-01-01 00:00:00+00') as bucket,
        series_id, sum(sum) / sum(count) as avg, min(min) as min, max(max) as max,
        sum(count)::bigint as count, sum(sum) as sum
      from samples_1m
      where bucket >= ${rollupWatermark('samples_1h')}
      group by 1, 2`,
  ];
}

/**
 * Version 36 (issue 57): samples_1m is no longer refreshed (../retired-rollups.ts). Its
 * view shows what was materialized, which ROLLUP_1M_RETENTION_DAYS prunes; samples_1h's newest
 * hours are computed from the raw samples, no longer from minutes.
 */
export async function retireMinuteRollup(sql: TransactionSql): Promise<void> {
  await run(sql, [
    `create or replace view samples_1m as
      select ${clampedColumns(bound)} from ${materializedRollup.samples_1m}`,
    viewOverRawSamples(
      'create or replace',
      'samples_1h',
      '1 hour',
      'sample_value(mantissa, scale, value)',
    ),
  ]);
}

/**
 * Version 37 (issues 56 and 57): samples_1h is no longer refreshed either (../retired-rollups.ts):
 * its view shows what was materialized, which ROLLUP_1H_RETENTION_DAYS prunes.
 */
export async function retireHourRollup(sql: TransactionSql): Promise<void> {
  await run(sql, [
    `create or replace view samples_1h as
      select ${clampedColumns(bound)} from ${materializedRollup.samples_1h}`,
  ]);
}

/**
 * Version 24: sample values as scaled integers (storage/scaled-value.ts), the rollup views
 * reading the decoded value, and the read functions every reader reads through
 * (../read-functions.ts). Nothing stored moves: the rollup tables hold decoded values already,
 * and the raw rows stored before keep their float8 `value` and read back through it. Rewriting
 * them would gain nothing here (plain PostgreSQL compresses nothing) and cost: a row of
 * `(mantissa, scale)` takes 56 bytes with its header against 48 for one of `value`, and every
 * updated row leaves a dead one. Times stay timestamptz for the same reason.
 */
export async function scaleSampleValues(sql: TransactionSql): Promise<void> {
  await run(sql, [
    `alter table samples
      add column mantissa bigint,
      add column scale smallint,
      alter column value drop not null`,
    ...realTimeRollupViews('create or replace', 'sample_value(mantissa, scale, value)'),
    ...readFunctions,
  ]);
}

/**
 * Version 25: nothing to do. Plain PostgreSQL has no jobs: maintenance refreshes its rollup
 * tables every minute (rollup-refresh.ts), not just before the raw retention.
 */
export function remakeMinuteAggregateJobs(): Promise<void> {
  return Promise.resolve();
}

/** Version 30: `raw_scaled_samples` (../read-functions.ts). */
export async function createScaledSampleReads(sql: TransactionSql): Promise<void> {
  await sql.unsafe(rawScaledSamplesFunction);
}

/** Version 20: nothing to do; plain PostgreSQL has no compression. */
export function compressRollups(): Promise<void> {
  return Promise.resolve();
}

/**
 * Version 21: the staleness markers, `(series_id, time)`, range-partitioned by day like the
 * samples (partitions.ts keeps their daily partitions and drops them with the raw retention),
 * with a DEFAULT partition for rows outside them.
 */
export async function createStaleMarkers(sql: TransactionSql): Promise<void> {
  await run(sql, [
    `create table stale_markers (
      series_id bigint not null,
      time timestamptz not null
    ) partition by range (time)`,
    `create table stale_markers_default partition of stale_markers default`,
    // One marker per series and time: replays and an agent's own retries store it once.
    `create unique index stale_markers_series_id_time_key on stale_markers (series_id, time)`,
  ]);
}

/**
 * Version 23: the values the aggregates skip (NaN, ±Inf, beyond ±1e100: see `isAggregatable`),
 * `(series_id, time, value)`, range-partitioned by day like the samples (partitions.ts keeps
 * their daily partitions and drops them with the raw retention), with a DEFAULT partition for
 * rows outside them. The rollups read `samples` only, so they never see these.
 */
export async function createUnaggregatedSamples(sql: TransactionSql): Promise<void> {
  await run(sql, [
    `create table unaggregated_samples (
      series_id bigint not null,
      time timestamptz not null,
      value double precision not null
    ) partition by range (time)`,
    `create table unaggregated_samples_default partition of unaggregated_samples default`,
    // The samples' dedup key: replays and an agent's own retries store each point once.
    `create unique index unaggregated_samples_series_id_time_key
      on unaggregated_samples (series_id, time)`,
  ]);
}

/**
 * Version 38: the exemplars agents send with their samples, `(series_id, time, value, labels)`,
 * range-partitioned by day like the samples (partitions.ts keeps their daily partitions and
 * drops them after `EXEMPLAR_RETENTION_DAYS`), with a DEFAULT partition for rows outside them.
 */
export async function createExemplars(sql: TransactionSql): Promise<void> {
  await run(sql, [
    `create table exemplars (
      series_id bigint not null,
      time timestamptz not null,
      value double precision not null,
      labels jsonb not null
    ) partition by range (time)`,
    `create table exemplars_default partition of exemplars default`,
    // One exemplar per series and time, the first stored (as Prometheus keeps them).
    `create unique index exemplars_series_id_time_key on exemplars (series_id, time)`,
  ]);
}

/**
 * Version 39: native histograms, as the TimescaleDB engine keeps them (`histogram_samples` as
 * written, `histogram_chunks` once compacted), the chunks range-partitioned by day like the
 * samples and dropped with them (partitions.ts).
 */
export async function createHistogramTables(sql: TransactionSql): Promise<void> {
  await run(sql, [
    histogramSamplesTable,
    `create table histogram_chunks ${histogramChunksColumns} partition by range (time)`,
    `create table histogram_chunks_default partition of histogram_chunks default`,
    `alter table histogram_chunks_default set (toast_tuple_target = 128)`,
    histogramChunksKey,
  ]);
}
