import type { Database } from './database.js';
import type { EnsurePartitionsResult } from './ensure-partitions.js';
import { ensurePartitions } from './ensure-partitions.js';
import type { PruneAlertHistoryResult } from './prune-alert-history.js';
import { pruneAlertHistory, pruneIdleWatermarks } from './prune-alert-history.js';
import type { RefreshRollupsResult } from './refresh-rollups.js';
import { refreshRollups } from './refresh-rollups.js';

export type MaintenanceOptions = {
  /** Resolved alerts and finished investigations are kept this many days. */
  alertRetentionDays: number;
  /** No sample older than this many days is accepted (RAW_RETENTION_DAYS). */
  rawRetentionDays: number;
};

export type MaintenanceResult = {
  partitions: EnsurePartitionsResult;
  rollups: RefreshRollupsResult;
  pruned: PruneAlertHistoryResult & { watermarks: number };
};

/** Alerts deleted per transaction, and transactions per run: a backlog drains over runs. */
const pruneBatchSize = 5_000;
const pruneBatchesPerRun = 10;

/**
 * Periodic storage upkeep, for one process to call about every minute: partitions (plain mode;
 * a no-op with TimescaleDB), rollups, then the alert history past retention and the
 * evaluator's watermarks of hosts silent for longer than the raw retention. Safe to run from
 * several processes at once; a run that fails (e.g. on a lock timeout) leaves nothing half done
 * and is simply retried next time.
 */
export async function runMaintenance(
  db: Database,
  now: Date,
  options: MaintenanceOptions,
): Promise<MaintenanceResult> {
  const partitions = await ensurePartitions(db, { now });
  const rollups = await refreshRollups(db, { now });
  const pruned = { alerts: 0, notifications: 0, investigations: 0, watermarks: 0 };
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
  return { partitions, rollups, pruned };
}
