import type { Database } from '../core/database.js';
import { requireStorageSettings } from '../schema/storage-settings.js';
import type { StorageUpkeep } from '../storage/engine.js';
import { storageEngine } from '../storage/engine.js';
import type { StoredSampleMoveResult } from '../storage/timescale/stored-sample-move.js';
import type { RefreshRollupsResult, RollupChunkSetAside } from '../storage/rollups.js';
import type { PruneAlertHistoryResult } from './prune-alert-history.js';
import { pruneAlertHistory, pruneIdleWatermarks } from './prune-alert-history.js';
import { pruneLateSampleWrites } from '../samples/late-sample-writes.js';
import type { KeptTierUpkeep } from '../storage/kept-tiers.js';
import { maintainKeptTiers } from '../storage/kept-tiers.js';
import type { HistogramCompaction } from '../histograms/histogram-chunks.js';
import { compactHistogramChunks } from '../histograms/histogram-chunks.js';

export type MaintenanceOptions = {
  /** Resolved alerts and finished investigations are kept this many days. */
  alertRetentionDays: number;
  /** No sample older than this many days is accepted (RAW_RETENTION_DAYS). */
  rawRetentionDays: number;
  /**
   * Told of each organization's rollup window that was set aside because its data made the
   * statement fail (the others moved on): log it at ERROR, since a human must look at that
   * data, and count it. Without it, a run that set something aside rejects with a
   * `RollupsSetAsideError` once all its work is done, so the failure is never silent.
   */
  onRollupSetAside?: (chunk: RollupChunkSetAside) => void;
  /**
   * Batches (a chunk each) of the storage move after migration 24 done per run
   * (STORAGE_MOVE_BATCHES_PER_RUN); 0 leaves the move for later.
   */
  storageMoveBatchesPerRun: number;
};

/** What a maintenance run set aside, when nobody was told of it (see `onRollupSetAside`). */
export class RollupsSetAsideError extends Error {
  readonly chunks: readonly RollupChunkSetAside[];
  constructor(chunks: readonly RollupChunkSetAside[]) {
    const orgs = [...new Set(chunks.map((chunk) => chunk.orgId))];
    super(
      `rollups of ${orgs.length} organization(s) set aside because their data failed the ` +
        `statement (the others were refreshed): ${orgs.join(', ')}; first error: ` +
        (chunks[0]?.message ?? ''),
    );
    this.name = 'RollupsSetAsideError';
    this.chunks = chunks;
  }
}

export type MaintenanceResult = StorageUpkeep & {
  pruned: PruneAlertHistoryResult & { watermarks: number; lateSampleWrites: number };
  /** What the storage move after migration 24 did in this run. */
  moved: StoredSampleMoveResult;
  /** The rollup tiers stored, compressed and pruned in this run. */
  tiers: KeptTierUpkeep;
  /** The native histograms' single rows merged into chunks in this run. */
  histograms: HistogramCompaction;
};

/**
 * Hours of buckets each tier stores per run at most: a database that starts keeping tiers
 * catches up a day a minute; at steady state a run has an hour to store, or none.
 */
const tierFillWindowsPerRun = 24;
/** …and spends about this long on it, so that a run stays well within its minute. */
const tierFillBudgetMs = 20_000;

/**
 * Brings the rollups not retired yet up to `now` at once, whatever the storage mode (complete
 * buckets; TimescaleDB's real-time aggregation also shows the current one). A database migrated
 * to the end has none left (storage/retired-rollups.ts). Must not run inside a transaction
 * (TimescaleDB's refresh refuses to).
 */
export async function refreshRollups(
  db: Database,
  options: { now: Date },
): Promise<RefreshRollupsResult> {
  const { mode, policies } = await requireStorageSettings(db);
  return await storageEngine(mode).refreshRollups(db, { now: options.now, policies });
}

/**
 * Late writes are kept a day: the query cache keeps an entry an hour at most, and a write
 * matters only to entries computed before it committed.
 */
const lateSampleWritesKeptMs = 24 * 3_600_000;

/** Alerts deleted per transaction, and transactions per run: a backlog drains over runs. */
const pruneBatchSize = 5_000;
const pruneBatchesPerRun = 10;

/**
 * Periodic upkeep, for one process to call about every minute: the storage upkeep that the
 * server does not do by itself (plain PostgreSQL: partitions, rollups and their retention;
 * TimescaleDB: nothing while its job scheduler runs), then the alert history past retention and the
 * evaluator's watermarks of hosts silent for longer than the raw retention, and the native
 * histograms compacted (histogram-chunks.ts). Safe to run from
 * several processes at once; a run that fails (e.g. on a lock timeout) leaves nothing half done
 * and is simply retried next time. One organization's data can never stop the rollups of the
 * others: what fails is set aside and reported (`onRollupSetAside`).
 */
export async function runMaintenance(
  db: Database,
  now: Date,
  options: MaintenanceOptions,
): Promise<MaintenanceResult> {
  const { mode, policies } = await requireStorageSettings(db);
  const engine = storageEngine(mode);
  const storage = await engine.maintain(db, { now, policies });
  // After the refresh: the move finishes an aggregate once a refresh has covered its rows.
  const moved = await engine.moveStoredSamples(db, {
    now,
    policies,
    maxBatches: options.storageMoveBatchesPerRun,
  });
  const tiers = await maintainKeptTiers(db, {
    now,
    policies,
    mode,
    maxWindows: tierFillWindowsPerRun,
    budgetMs: tierFillBudgetMs,
  });
  const histograms = await compactHistogramChunks(db, { now });
  const { rollups } = storage;
  const pruned = {
    alerts: 0,
    notifications: 0,
    investigations: 0,
    watermarks: 0,
    lateSampleWrites: 0,
  };
  for (let batch = 0; batch < pruneBatchesPerRun; batch++) {
    const result = await pruneAlertHistory(db, {
      now,
      retentionDays: options.alertRetentionDays,
      batchSize: pruneBatchSize,
    });
    pruned.alerts += result.alerts;
    pruned.notifications += result.notifications;
    pruned.investigations += result.investigations;
    if (result.alerts < pruneBatchSize && result.investigations < pruneBatchSize) break;
  }
  pruned.watermarks = await pruneIdleWatermarks(db, {
    now,
    rawRetentionDays: options.rawRetentionDays,
    batchSize: pruneBatchSize,
  });
  pruned.lateSampleWrites = await pruneLateSampleWrites(db, now, lateSampleWritesKeptMs);
  if (options.onRollupSetAside === undefined) {
    if (rollups.setAside.length > 0) throw new RollupsSetAsideError(rollups.setAside);
  } else {
    for (const chunk of rollups.setAside) options.onRollupSetAside(chunk);
  }
  return { ...storage, pruned, moved, tiers, histograms };
}
