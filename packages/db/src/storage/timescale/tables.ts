import {
  histogramChunksColumns,
  histogramChunksKey,
  histogramSamplesTable,
} from '../histogram-tables.js';
import type { Queryable, TransactionSql } from '../../core/database.js';
import { identifier, run } from '../ddl.js';

/** Version 3: samples and snapshots as hypertables of daily chunks, samples compressible. */
export async function createSampleTables(sql: TransactionSql): Promise<void> {
  await run(sql, [
    `create table samples (
      time timestamptz not null,
      service_id text not null,
      metric text not null,
      value double precision not null
    )`,
    // json, not jsonb: snapshots are written with every host sample and only ever read whole,
    // and parsing into jsonb doubled the writer's cost per batch (docs/benchmarks/ingest.md).
    `create table snapshots (
      time timestamptz not null,
      service_id text not null,
      containers json not null,
      processes json not null
    )`,
    // The dedup key: replays and an agent's own retries store each point once.
    `create unique index samples_service_id_metric_time_key on samples (service_id, metric, time)`,
    `create unique index snapshots_service_id_time_key on snapshots (service_id, time)`,
    `select create_hypertable('samples', by_range('time', interval '1 day'))`,
    `select create_hypertable('snapshots', by_range('time', interval '1 day'))`,
    `alter table samples set (
      timescaledb.compress,
      timescaledb.compress_segmentby = 'service_id, metric',
      timescaledb.compress_orderby = 'time desc'
    )`,
    // Compression, refresh and retention jobs follow the configured policies: migrate() applies
    // them after the versioned migrations, every time it runs.
  ]);
}

/**
 * Version 4: samples_1m and samples_1h as continuous aggregates. Real-time aggregation
 * (materialized_only = false) adds what the refresh policy has not materialized yet, so reads
 * see the newest minute too.
 */
export async function createRollups(sql: TransactionSql): Promise<void> {
  await run(sql, [
    `create materialized view samples_1m
      with (timescaledb.continuous, timescaledb.materialized_only = false) as
      select time_bucket(interval '1 minute', time) as bucket, service_id, metric,
        avg(value) as avg, min(value) as min, max(value) as max,
        count(*) as count, sum(value) as sum
      from samples
      group by 1, 2, 3
      with no data`,
    // Hierarchical: built on samples_1m, so the average is weighted by each minute's count.
    `create materialized view samples_1h
      with (timescaledb.continuous, timescaledb.materialized_only = false) as
      select time_bucket(interval '1 hour', bucket) as bucket, service_id, metric,
        sum(sum) / sum(count) as avg, min(min) as min, max(max) as max,
        sum(count)::bigint as count, sum(sum) as sum
      from samples_1m
      group by 1, 2, 3
      with no data`,
  ]);
}

/** What the layout of version 15 is renamed to while its rows are copied into the new one. */
const previous = '_v15';
/**
 * TimescaleDB: a new samples hypertable (the old one's chunk interval, compression segmented by
 * series) filled from the old rows, compressed chunks included, then new continuous aggregates
 * over it. Their materialized rows are copied from the old ones, so rollup history older than
 * the raw samples kept (retention) survives; the first refresh (the policy, or maintenance's
 * refreshRollups, within a minute) recomputes the recent buckets and makes the copied ones the
 * aggregates' materialized part. Until then reads aggregate the raw samples.
 */
export async function keySamplesBySeries(sql: TransactionSql): Promise<void> {
  const [dimension] = await sql<{ interval: string }[]>`
    select time_interval::text as interval from timescaledb_information.dimensions
    where hypertable_schema = current_schema() and hypertable_name = 'samples'
      and column_name = 'time'
  `;
  const chunkInterval = dimension?.interval ?? '1 day';
  await run(sql, [
    `alter table samples rename to samples${previous}`,
    `alter index samples_time_idx rename to samples${previous}_time_idx`,
    `alter index samples_service_id_metric_time_key
      rename to samples${previous}_service_id_metric_time_key`,
    `alter materialized view samples_1h rename to samples_1h${previous}`,
    `alter materialized view samples_1m rename to samples_1m${previous}`,
    `create table samples (
      time timestamptz not null,
      series_id bigint not null,
      value double precision not null
    )`,
  ]);
  await sql`select create_hypertable('samples', by_range('time', ${chunkInterval}::interval))`;
  await run(sql, [
    `insert into samples (time, series_id, value)
      select s.time, r.id, s.value
      from samples${previous} s join series r on r.service_id = s.service_id and r.metric = s.metric`,
    // The dedup key: replays and an agent's own retries store each point once.
    `create unique index samples_series_id_time_key on samples (series_id, time)`,
    `alter table samples set (
      timescaledb.compress,
      timescaledb.compress_segmentby = 'series_id',
      timescaledb.compress_orderby = 'time desc'
    )`,
    ...seriesAggregates,
  ]);
  // Materialized rows only: what the old aggregates computed from raw samples on the fly is
  // computed the same way from the new ones, and a copied bucket past the newest materialized
  // one would move the new aggregate's watermark (the newest materialized bucket) past samples
  // it has not materialized, hiding them.
  const materialized = (view: string) => materializationTable(sql, view);
  for (const rollup of ['samples_1m', 'samples_1h']) {
    await sql.unsafe(
      `insert into ${await materialized(rollup)} (bucket, series_id, avg, min, max, count, sum)
      select o.bucket, r.id, o.avg, o.min, o.max, o.count, o.sum
      from ${await materialized(`${rollup}${previous}`)} o
      join series r on r.service_id = o.service_id and r.metric = o.metric`,
    );
  }
  await run(sql, [
    `drop materialized view samples_1h${previous}`,
    `drop materialized view samples_1m${previous}`,
    `drop table samples${previous}`,
  ]);
  // Their jobs went with the old objects: migrate() adds them again after the versioned
  // migrations (applyTimescalePolicies re-creates missing jobs). The old chunks were
  // compressed: so are their copies, instead of taking the disk twice over until then.
  const [settings] = await sql<{ compress_after_hours: number | null }[]>`
    select coalesce((policies ->> 'compressAfterHours')::int, compress_after_days * 24)
      as compress_after_hours
    from storage_settings`;
  if (settings?.compress_after_hours != null) {
    await sql`
      select compress_chunk(c, if_not_compressed => true)
      from show_chunks('samples',
        older_than => make_interval(hours => ${settings.compress_after_hours}::int)) c
    `;
  }
}

/**
 * Version 19: nothing to do. samples_1m and samples_1h already are real-time aggregates (their
 * materialized buckets plus what the refresh has not reached yet); plain PostgreSQL gets views
 * that read the same way.
 */
export function createRealTimeRollups(): Promise<void> {
  return Promise.resolve();
}

/**
 * Version 20: the aggregates compressed like the raw samples (docs/benchmarks/storage.md, "Storage":
 * uncompressed, samples_1m took 72 bytes per raw sample, 86 % of the bytes on disk). Their
 * chunks get an interval of their own first: the default, 10 × the raw one, would keep a young
 * installation's whole history in one chunk that no compression job ever takes. Existing
 * chunks keep their interval; the compression jobs follow the policies (policies.ts).
 */
export async function compressRollups(sql: TransactionSql): Promise<void> {
  for (const [view, interval] of [
    ['samples_1m', '1 day'],
    ['samples_1h', '7 days'],
  ] as const) {
    await sql`
      select set_chunk_time_interval(${await materializationTable(sql, view)}::regclass,
        ${interval}::interval)
    `;
    await sql.unsafe(`alter materialized view ${view} set (timescaledb.compress,
      timescaledb.compress_segmentby = 'series_id', timescaledb.compress_orderby = 'bucket')`);
  }
}

/**
 * Version 21: the staleness markers, `(series_id, time)`, as a hypertable of daily chunks like
 * the samples', dropped by a retention job of the raw samples' retention (policies.ts). Never
 * compressed: markers are few, and are read by series and time only.
 */
export async function createStaleMarkers(sql: TransactionSql): Promise<void> {
  await run(sql, staleMarkersHypertable);
}

/** The stale_markers hypertable, empty, with its key (migration 21; the conversion). */
export const staleMarkersHypertable: readonly string[] = [
  `create table stale_markers (
    series_id bigint not null,
    time timestamptz not null
  )`,
  // One marker per series and time: replays and an agent's own retries store it once.
  `create unique index stale_markers_series_id_time_key on stale_markers (series_id, time)`,
  `select create_hypertable('stale_markers', by_range('time', interval '1 day'))`,
];

/**
 * Version 23: the values the aggregates skip (NaN, ±Inf, beyond ±1e100: see `isAggregatable`),
 * `(series_id, time, value)`, as a hypertable of daily chunks like the samples', dropped by a
 * retention job of the raw samples' retention (policies.ts). Never compressed: such values are
 * few, and are read by series and time only.
 */
export async function createUnaggregatedSamples(sql: TransactionSql): Promise<void> {
  await run(sql, unaggregatedSamplesHypertable);
}

/** The unaggregated_samples hypertable, empty, with its key (migration 23; the conversion). */
export const unaggregatedSamplesHypertable: readonly string[] = [
  `create table unaggregated_samples (
    series_id bigint not null,
    time timestamptz not null,
    value double precision not null
  )`,
  // The samples' dedup key: replays and an agent's own retries store each point once.
  `create unique index unaggregated_samples_series_id_time_key
    on unaggregated_samples (series_id, time)`,
  `select create_hypertable('unaggregated_samples', by_range('time', interval '1 day'))`,
];

/**
 * Version 38: the exemplars agents send with their samples (a trace id beside a latency, say),
 * `(series_id, time, value, labels)`, as a hypertable of daily chunks dropped by a retention
 * job of their own (`EXEMPLAR_RETENTION_DAYS`, policies.ts). Never compressed: they are few
 * beside the samples, and short-lived.
 */
export async function createExemplars(sql: TransactionSql): Promise<void> {
  await run(sql, exemplarsHypertable);
}

/** The exemplars hypertable, empty, with its key (migration 38; the conversion). */
export const exemplarsHypertable: readonly string[] = [
  `create table exemplars (
    series_id bigint not null,
    time timestamptz not null,
    value double precision not null,
    labels jsonb not null
  )`,
  // One exemplar per series and time, the first stored: Prometheus keeps a series' exemplars
  // in time order and drops one at a time it has already; replays and retries store it once.
  `create unique index exemplars_series_id_time_key on exemplars (series_id, time)`,
  `select create_hypertable('exemplars', by_range('time', interval '1 day'))`,
];

/**
 * Version 39: native histograms. `histogram_samples` holds each as written (a chunk of one in our
 * layout, `encodeHistogramChunk`), a small plain table the writer's maintenance empties into
 * `histogram_chunks`: a series' histograms 120 a chunk (histogram-chunks.ts), by series and first
 * time, a hypertable of daily chunks dropped with the raw samples. Neither is compressed by
 * TimescaleDB: the layout is compressed already (PostgreSQL's TOAST compresses what it can of a
 * chunk past 128 bytes).
 */
export async function createHistogramTables(sql: TransactionSql): Promise<void> {
  await run(sql, [histogramSamplesTable, ...histogramChunksHypertable]);
}

/** The histogram chunks' hypertable, empty, with its key (migration 39; the conversion). */
export const histogramChunksHypertable: readonly string[] = [
  `create table histogram_chunks ${histogramChunksColumns} with (toast_tuple_target = 128)`,
  histogramChunksKey,
  `select create_hypertable('histogram_chunks', by_range('time', interval '1 day'))`,
];

/**
 * samples_1m and samples_1h keyed by series, as migration 16 made them (the rollups of
 * migration 4 were keyed by service and metric), aggregating `value`: the SQL expression of a
 * sample's value (the float8 column until migration 24, `sample_value(…)` since). Real-time
 * aggregation (materialized_only = false) adds what the refresh has not materialized yet;
 * samples_1h is built on samples_1m, so its average is weighted by each minute's count.
 */
function seriesAggregateViews(value: string): readonly string[] {
  return [
    `create materialized view samples_1m
      with (timescaledb.continuous, timescaledb.materialized_only = false) as
      select time_bucket(interval '1 minute', time) as bucket, series_id,
        avg(${value}) as avg, min(${value}) as min, max(${value}) as max,
        count(*) as count, sum(${value}) as sum
      from samples
      group by 1, 2
      with no data`,
    `create materialized view samples_1h
      with (timescaledb.continuous, timescaledb.materialized_only = false) as
      select time_bucket(interval '1 hour', bucket) as bucket, series_id,
        sum(sum) / sum(count) as avg, min(min) as min, max(max) as max,
        sum(count)::bigint as count, sum(sum) as sum
      from samples_1m
      group by 1, 2
      with no data`,
  ];
}

/** The aggregates as migration 16 made them, over the float8 `value` column. */
const seriesAggregates: readonly string[] = seriesAggregateViews('value');

/** The hypertable that holds a continuous aggregate's materialized rows, quoted for SQL. */
export async function materializationTable(sql: Queryable, view: string): Promise<string> {
  const [table] = await sql<{ schema: string; name: string }[]>`
    select materialization_hypertable_schema as schema, materialization_hypertable_name as name
    from timescaledb_information.continuous_aggregates
    where view_schema = current_schema() and view_name = ${view}
  `;
  if (table === undefined) throw new Error(`no materialization hypertable for ${view}`);
  return `${identifier(table.schema)}.${identifier(table.name)}`;
}

/**
 * Version 25: samples_1m's refresh and compression jobs removed, so that migrate() makes them
 * again (applyTimescalePolicies re-creates missing jobs) for the shorter materialized window of
 * policies.ts: 3 hours before the raw retention instead of 12. Its rows already materialized
 * stay; nothing else changes.
 */
export async function remakeMinuteAggregateJobs(sql: TransactionSql): Promise<void> {
  await sql`select remove_continuous_aggregate_policy('samples_1m'::regclass, if_exists => true)`;
  await sql`select remove_compression_policy('samples_1m'::regclass, if_exists => true)`;
}
