import type { Database, TransactionSql } from '../core/database.js';
import { run } from './ddl.js';
import {
  compressMillisecondAggregates,
  millisecondAggregates,
  millisecondSamplesTable,
} from './timescale/millisecond-layout.js';
import { dropSampleKey, keepHeadUnindexed } from './timescale/head-chunks.js';
import { readFunctions } from './timescale/read-functions.js';
import {
  exemplarsHypertable,
  histogramChunksHypertable,
  materializationTable,
  staleMarkersHypertable,
  unaggregatedSamplesHypertable,
} from './timescale/tables.js';
import { timescaleNotPreloaded } from './server-capabilities.js';
import {
  freezeAggregate,
  rollupRetiredAtMs,
  writeRetiredBucketsFunctions,
} from './retired-rollups.js';

/** What the plain objects are renamed to while their rows are copied into the new ones. */
const plain = '_plain';

export type ConversionResult = {
  /** Rows copied into the new hypertables and aggregates. */
  samples: number;
  snapshots: number;
  staleMarkers: number;
  unaggregatedSamples: number;
  exemplars: number;
  histogramChunks: number;
  rollupBuckets: number;
};

/**
 * Moves a database made with plain PostgreSQL storage onto TimescaleDB, in one transaction:
 * samples and snapshots become hypertables, samples_1m and samples_1h continuous aggregates
 * whose materialized part starts with the rollup tables' rows (so rollup history older than the
 * raw samples kept survives). Nothing is lost: every row is copied before the plain objects are
 * dropped, and a failure rolls everything back. Run `migrate` afterwards for the jobs.
 */
export async function convertToTimescale(db: Database): Promise<ConversionResult> {
  const { timescaledb } = await db.capabilities();
  if (!timescaledb.available) {
    throw new Error('the PostgreSQL server has no timescaledb extension installed');
  }
  if (!timescaledb.preloaded) throw new Error(timescaleNotPreloaded);
  return await db.sql.begin(async (sql) => {
    await sql`set local lock_timeout = '30s'`;
    const [settings] = await sql<{ mode: string }[]>`
      select mode from storage_settings for update`;
    if (settings?.mode !== 'postgres') {
      throw new Error(
        `this database's storage is ${settings?.mode ?? 'not migrated yet'}, not plain PostgreSQL`,
      );
    }
    await sql`create extension if not exists timescaledb`;
    // Plain storage reads the rollups through views over samples (migration 19): they go
    // first, their tables stay until their rows are copied.
    await run(sql, [`drop view samples_1h`, `drop view samples_1m`]);
    const samples = await samplesToHypertable(sql);
    const snapshots = await snapshotsToHypertable(sql);
    const staleMarkers = await staleMarkersToHypertable(sql);
    const unaggregatedSamples = await unaggregatedSamplesToHypertable(sql);
    const exemplars = await laterTableToHypertable(
      sql,
      'exemplars',
      exemplarsHypertable,
      'series_id, time, value, labels',
    );
    const histogramChunks = await laterTableToHypertable(
      sql,
      'histogram_chunks',
      histogramChunksHypertable,
      'series_id, time, end_time, samples, chunk',
    );
    const rollupBuckets = await rollupsToAggregates(sql);
    // A retired rollup (migrations 36 and 37) stays retired: its rows, no refresh.
    let anyRetired = false;
    for (const rollup of ['samples_1m', 'samples_1h'] as const) {
      if ((await rollupRetiredAtMs(sql, rollup)) === undefined) continue;
      await freezeAggregate(sql, rollup);
      anyRetired = true;
    }
    if (anyRetired) await writeRetiredBucketsFunctions(sql, 'timescale');
    // The policies are stored as not yet applied: migrate() creates their jobs.
    await sql`update storage_settings set mode = 'timescale', policies = null, updated_at = now()`;
    return {
      samples,
      snapshots,
      staleMarkers,
      unaggregatedSamples,
      exemplars,
      histogramChunks,
      rollupBuckets,
    };
  });
}

async function samplesToHypertable(sql: TransactionSql): Promise<number> {
  await run(sql, [
    `alter table samples rename to samples${plain}`,
    `alter index samples_series_id_time_key rename to samples${plain}_series_id_time_key`,
    `alter index samples_time_idx rename to samples${plain}_time_idx`,
    ...millisecondSamplesTable,
    // The plain rows are unique already; the head layout has no key (head-chunks.ts).
    dropSampleKey,
  ]);
  // Copied in the chunks of migration 24's interval, as a database that was TimescaleDB all
  // along holds them, before the head layout shortens the chunks still to come.
  const copied = await sql.unsafe(
    `insert into samples (time, series_id, value, mantissa, scale)
      select (extract(epoch from time) * 1000)::bigint, series_id, value, mantissa, scale
      from samples${plain}`,
  );
  await run(sql, [`drop table samples${plain}`]);
  await keepHeadUnindexed(sql);
  return copied.count;
}

async function snapshotsToHypertable(sql: TransactionSql): Promise<number> {
  await run(sql, [
    `alter table snapshots rename to snapshots${plain}`,
    `alter index snapshots_service_id_time_key rename to snapshots${plain}_service_id_time_key`,
    `create table snapshots (
      time timestamptz not null,
      service_id text not null,
      containers json not null,
      processes json not null
    )`,
    `select create_hypertable('snapshots', by_range('time', interval '1 day'))`,
  ]);
  const copied = await sql.unsafe(
    `insert into snapshots (time, service_id, containers, processes)
     select time, service_id, containers, processes from snapshots${plain}`,
  );
  await run(sql, [
    `create unique index snapshots_service_id_time_key on snapshots (service_id, time)`,
    `drop table snapshots${plain}`,
  ]);
  return copied.count;
}

async function staleMarkersToHypertable(sql: TransactionSql): Promise<number> {
  await run(sql, [
    `alter table stale_markers rename to stale_markers${plain}`,
    `alter index stale_markers_series_id_time_key
      rename to stale_markers${plain}_series_id_time_key`,
    ...staleMarkersHypertable,
  ]);
  const copied = await sql.unsafe(
    `insert into stale_markers (series_id, time) select series_id, time from stale_markers${plain}`,
  );
  await run(sql, [`drop table stale_markers${plain}`]);
  return copied.count;
}

async function unaggregatedSamplesToHypertable(sql: TransactionSql): Promise<number> {
  await run(sql, [
    `alter table unaggregated_samples rename to unaggregated_samples${plain}`,
    `alter index unaggregated_samples_series_id_time_key
      rename to unaggregated_samples${plain}_series_id_time_key`,
    ...unaggregatedSamplesHypertable,
  ]);
  const copied = await sql.unsafe(
    `insert into unaggregated_samples (series_id, time, value)
      select series_id, time, value from unaggregated_samples${plain}`,
  );
  await run(sql, [`drop table unaggregated_samples${plain}`]);
  return copied.count;
}

/**
 * A table a later migration made (exemplars: 38, histogram_chunks: 39) as its hypertable, rows
 * and all. A database before that migration has none: the migrate after the conversion makes it.
 */
async function laterTableToHypertable(
  sql: TransactionSql,
  table: 'exemplars' | 'histogram_chunks',
  hypertable: readonly string[],
  columns: string,
): Promise<number> {
  const [found] = await sql<{ exists: boolean }[]>`
    select to_regclass(${table}) is not null as exists`;
  if (found?.exists !== true) return 0;
  await run(sql, [
    `alter table ${table} rename to ${table}${plain}`,
    `alter index ${table}_series_id_time_key rename to ${table}${plain}_series_id_time_key`,
    ...hypertable,
  ]);
  const copied = await sql.unsafe(
    `insert into ${table} (${columns}) select ${columns} from ${table}${plain}`,
  );
  await run(sql, [`drop table ${table}${plain}`]);
  return copied.count;
}

/**
 * The continuous aggregates of the millisecond layout (timescale/millisecond-layout.ts), their
 * materialized part seeded with the rollup tables' complete buckets (those below each
 * watermark); newer buckets are computed from the raw samples, as real-time aggregation does.
 * Then the read functions over them.
 */
async function rollupsToAggregates(sql: TransactionSql): Promise<number> {
  await run(sql, millisecondAggregates);
  await compressMillisecondAggregates(sql);
  let copied = 0;
  for (const rollup of ['samples_1m', 'samples_1h'] as const) {
    const result = await sql.unsafe(
      `insert into ${await materializationTable(sql, rollup)}
         (bucket, series_id, min, max, count, sum)
       select (extract(epoch from r.bucket) * 1000)::bigint, r.series_id, r.min, r.max, r.count,
         r.sum
       from ${rollup}_materialized r
       where r.bucket < coalesce(
         (select watermark from rollup_watermarks where rollup = $1), '-infinity')`,
      [rollup],
    );
    copied += result.count;
  }
  await run(sql, [
    `drop table samples_1h_materialized`,
    `drop table samples_1m_materialized`,
    `drop table rollup_watermarks`,
    ...readFunctions,
  ]);
  return copied;
}
