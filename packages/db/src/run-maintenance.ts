import type { Database } from './database.js';
import type { EnsurePartitionsResult } from './ensure-partitions.js';
import { ensurePartitions } from './ensure-partitions.js';
import type { RefreshRollupsResult } from './refresh-rollups.js';
import { refreshRollups } from './refresh-rollups.js';

export type MaintenanceResult = {
  partitions: EnsurePartitionsResult;
  rollups: RefreshRollupsResult;
};

/**
 * Periodic storage upkeep, for one process to call about every minute: partitions (plain mode;
 * a no-op with TimescaleDB) then rollups. Safe to run from several processes at once; a run
 * that fails (e.g. on a lock timeout) leaves nothing half done and is simply retried next time.
 */
export async function runMaintenance(db: Database, now: Date): Promise<MaintenanceResult> {
  const partitions = await ensurePartitions(db, { now });
  const rollups = await refreshRollups(db, { now });
  return { partitions, rollups };
}
