import type { Database, TransactionSql } from '../core/database.js';
import type { EnsurePartitionsResult } from './postgres/partitions.js';
import { ensurePartitions } from './postgres/partitions.js';
import { pruneRollupTables, refreshRollupTables } from './postgres/rollup-refresh.js';
import * as postgresTables from './postgres/tables.js';
import type { RefreshRollupsResult, Rollup } from './rollups.js';
import { refreshContinuousAggregates } from './timescale/aggregate-refresh.js';
import { applyTimescalePolicies, refreshWindows } from './timescale/policies.js';
import type {
  StoredSampleMoveOptions,
  StoredSampleMoveResult,
} from './timescale/stored-sample-move.js';
import { moveStoredSamples } from './timescale/stored-sample-move.js';
import * as timescaleTables from './timescale/tables.js';
import { keepHeadUnindexed } from './timescale/head-chunks.js';
import { createPostgresKeptTiers, createTimescaleKeptTiers } from './kept-tiers.js';
import { recordPostgresRollupRetired, retireTimescaleRollup } from './retired-rollups.js';
import {
  createScaledSampleReads,
  indexSampleTimesByRange,
  scaleSampleValues,
} from './timescale/millisecond-layout.js';
import type { StorageMode, StoragePolicies } from './storage-mode.js';

export type { StorageMode, StoragePolicies } from './storage-mode.js';

/** What one periodic maintenance run did to storage. */
export type StorageUpkeep = {
  partitions: EnsurePartitionsResult;
  rollups: RefreshRollupsResult;
  /** Rollup rows deleted past their retention (plain PostgreSQL; TimescaleDB's jobs do it). */
  rollupRowsPruned: number;
};

/** One storage mode: everything in which TimescaleDB and plain PostgreSQL differ. */
export type StorageEngine = {
  readonly mode: StorageMode;
  /** As `monitor_storage_info{engine}` and the start log name it. */
  readonly engineName: 'timescaledb' | 'postgresql';
  /** Migration 3: the samples and snapshots tables. */
  createSampleTables(sql: TransactionSql): Promise<void>;
  /** Migration 4: samples_1m and samples_1h. */
  createRollups(sql: TransactionSql): Promise<void>;
  /** Migration 16: samples and rollups keyed by series id. */
  keySamplesBySeries(sql: TransactionSql): Promise<void>;
  /** Migration 19: samples_1m and samples_1h read as real-time aggregates on both engines. */
  createRealTimeRollups(sql: TransactionSql): Promise<void>;
  /** Migration 20: the rollups compressible where the engine compresses. */
  compressRollups(sql: TransactionSql): Promise<void>;
  /** Migration 21: the staleness markers' table, kept as long as the raw samples. */
  createStaleMarkers(sql: TransactionSql): Promise<void>;
  /** Migration 23: the values the aggregates skip, kept as long as the raw samples. */
  createUnaggregatedSamples(sql: TransactionSql): Promise<void>;
  /**
   * Migration 24: sample values as scaled integers (and on TimescaleDB times as epoch
   * milliseconds, in a new layout the old one moves into), read through the read functions.
   */
  scaleSampleValues(sql: TransactionSql): Promise<void>;
  /**
   * Migration 25: samples_1m's jobs made again for its shorter materialized window
   * (TimescaleDB); plain PostgreSQL has no such jobs.
   */
  remakeMinuteAggregateJobs(sql: TransactionSql): Promise<void>;
  /** Migration 30: `raw_scaled_samples`, the read function that leaves decoding to the reader. */
  createScaledSampleReads(sql: TransactionSql): Promise<void>;
  /** Migration 31: `samples` by time through a BRIN index (TimescaleDB; plain PostgreSQL has one). */
  indexSampleTimesByRange(sql: TransactionSql): Promise<void>;
  /**
   * Migration 33: the newest samples in short chunks with no per-row index, compressed soon
   * after (TimescaleDB; plain PostgreSQL keeps its unique key, see timescale/head-chunks.ts).
   */
  keepHeadUnindexed(sql: TransactionSql): Promise<void>;
  /** Migration 35: the rollup tiers kept beyond the raw retention (kept-tiers.ts). */
  createKeptTiers(sql: TransactionSql): Promise<void>;
  /** Migrations 36 and 37: samples_1m, then samples_1h no longer refreshed (retired-rollups.ts). */
  retireRollup(sql: TransactionSql, rollup: Rollup): Promise<void>;
  /** Migration 38: the exemplars' table, kept `EXEMPLAR_RETENTION_DAYS`. */
  createExemplars(sql: TransactionSql): Promise<void>;
  /** Migration 39: the native histograms' tables, their chunks kept as long as the raw samples. */
  createHistogramTables(sql: TransactionSql): Promise<void>;
  /** After every migration run: the policies as jobs (TimescaleDB) or nothing to do. */
  applyPolicies(
    sql: TransactionSql,
    policies: StoragePolicies,
    applied: StoragePolicies | undefined,
  ): Promise<void>;
  /** After every migration run: what must exist before samples arrive (plain: partitions). */
  prepare(db: Database, options: { now: Date; policies: StoragePolicies }): Promise<void>;
  /** Brings the rollups up to `now` at once (tests; a server without a job scheduler). */
  refreshRollups(
    db: Database,
    options: { now: Date; policies: StoragePolicies },
  ): Promise<RefreshRollupsResult>;
  /** The storage upkeep the server does not do by itself, for the writer about every minute. */
  maintain(db: Database, options: { now: Date; policies: StoragePolicies }): Promise<StorageUpkeep>;
  /**
   * Moves a few batches of what migration 24 left in the previous layout (`storage_moves`),
   * for the writer's maintenance; resumable, reads stay right meanwhile.
   */
  moveStoredSamples(
    db: Database,
    options: StoredSampleMoveOptions,
  ): Promise<StoredSampleMoveResult>;
};

const noPartitions: EnsurePartitionsResult = {
  created: [],
  dropped: [],
  rowsMovedFromDefault: 0,
  rowsPurgedFromDefault: 0,
};

const timescaleEngine: StorageEngine = {
  mode: 'timescale',
  engineName: 'timescaledb',
  createSampleTables: timescaleTables.createSampleTables,
  createRollups: timescaleTables.createRollups,
  keySamplesBySeries: timescaleTables.keySamplesBySeries,
  createRealTimeRollups: timescaleTables.createRealTimeRollups,
  compressRollups: timescaleTables.compressRollups,
  createStaleMarkers: timescaleTables.createStaleMarkers,
  createUnaggregatedSamples: timescaleTables.createUnaggregatedSamples,
  scaleSampleValues,
  remakeMinuteAggregateJobs: timescaleTables.remakeMinuteAggregateJobs,
  createScaledSampleReads,
  indexSampleTimesByRange,
  keepHeadUnindexed,
  createKeptTiers: createTimescaleKeptTiers,
  retireRollup: retireTimescaleRollup,
  createExemplars: timescaleTables.createExemplars,
  createHistogramTables: timescaleTables.createHistogramTables,
  applyPolicies: applyTimescalePolicies,
  prepare: () => Promise.resolve(),
  refreshRollups: (db, { now, policies }) =>
    refreshContinuousAggregates(db, { now, windows: refreshWindows(policies) }),
  async maintain(db, options) {
    // Chunks, compression, retention and refresh are the scheduler's jobs. A server that runs
    // no scheduler (timescaledb.max_background_workers = 0) gets its aggregates refreshed here.
    const { jobScheduler } = await db.capabilities();
    const rollups = jobScheduler
      ? { mode: 'timescale' as const, refreshed: [], setAside: [] }
      : await timescaleEngine.refreshRollups(db, options);
    return { partitions: noPartitions, rollups, rollupRowsPruned: 0 };
  },
  moveStoredSamples,
};

const postgresEngine: StorageEngine = {
  mode: 'postgres',
  engineName: 'postgresql',
  createSampleTables: postgresTables.createSampleTables,
  createRollups: postgresTables.createRollups,
  keySamplesBySeries: postgresTables.keySamplesBySeries,
  createRealTimeRollups: postgresTables.createRealTimeRollups,
  compressRollups: postgresTables.compressRollups,
  createStaleMarkers: postgresTables.createStaleMarkers,
  createUnaggregatedSamples: postgresTables.createUnaggregatedSamples,
  scaleSampleValues: postgresTables.scaleSampleValues,
  remakeMinuteAggregateJobs: postgresTables.remakeMinuteAggregateJobs,
  createScaledSampleReads: postgresTables.createScaledSampleReads,
  indexSampleTimesByRange: () => Promise.resolve(),
  // Partitions are a day long and never compressed: reads of a few series need the key.
  keepHeadUnindexed: () => Promise.resolve(),
  createKeptTiers: createPostgresKeptTiers,
  async retireRollup(sql, rollup) {
    await recordPostgresRollupRetired(sql, rollup);
    await (rollup === 'samples_1m'
      ? postgresTables.retireMinuteRollup(sql)
      : postgresTables.retireHourRollup(sql));
  },
  createExemplars: postgresTables.createExemplars,
  createHistogramTables: postgresTables.createHistogramTables,
  // Retention is applied by maintain(), from the stored policies; there are no jobs to create.
  applyPolicies: () => Promise.resolve(),
  async prepare(db, { now, policies }) {
    await ensurePartitions(db, {
      now,
      rawRetentionDays: policies.rawRetentionDays,
      snapshotRetentionDays: policies.snapshotRetentionDays,
      exemplarRetentionDays: policies.exemplarRetentionDays,
    });
  },
  refreshRollups: (db, { now }) => refreshRollupTables(db, { now }),
  async maintain(db, { now, policies }) {
    const partitions = await ensurePartitions(db, {
      now,
      rawRetentionDays: policies.rawRetentionDays,
      snapshotRetentionDays: policies.snapshotRetentionDays,
      exemplarRetentionDays: policies.exemplarRetentionDays,
    });
    const rollups = await refreshRollupTables(db, { now });
    const rollupRowsPruned = await pruneRollupTables(db, { now, policies });
    return { partitions, rollups, rollupRowsPruned };
  },
  // Nothing to move: see postgresTables.scaleSampleValues.
  moveStoredSamples: () => Promise.resolve({ batches: 0, pending: 0 }),
};

/** The engine of a storage mode. */
export function storageEngine(mode: StorageMode): StorageEngine {
  return mode === 'timescale' ? timescaleEngine : postgresEngine;
}
