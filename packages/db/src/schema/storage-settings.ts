import type { Queryable } from '../core/database.js';
import type { StorageMode, StoragePolicies } from '../storage/storage-mode.js';
import { storageModes } from '../storage/storage-mode.js';

/** The one row of `storage_settings`: the mode chosen at the first migration, the policies. */
export type StorageSettings = {
  mode: StorageMode;
  /** The policies last applied (by `migrate`). */
  policies: StoragePolicies;
};

export const defaultStoragePolicies = {
  rawRetentionDays: 30,
  snapshotRetentionDays: 7,
  exemplarRetentionDays: 7,
  rollup1mRetentionDays: 90,
  rollup1hRetentionDays: 730,
  // Raw chunks are 6 hours (migration 24) and compressed whole: a chunk waits half its
  // interval on average while it fills, then this, then half the job's 15 minutes. An
  // uncompressed row weighs ~110 bytes against ~3 compressed, so every hour here costs ~0.15
  // bytes per sample at steady state (30 days), 7 % of VictoriaMetrics' whole figure: a chunk is
  // compressed as soon as it ended. Samples that arrive later (a scrape's jitter, a writer's
  // backlog, an agent's buffer) still land, in the compressed chunk (TimescaleDB 2.11+: the job
  // compresses them at its next run), and still reach the aggregates.
  compressAfterHours: 0,
  jobIntervalSeconds: undefined,
} as const satisfies StoragePolicies;

/** A row of `storage_settings` as stored. */
export type StorageSettingsRow = {
  mode: string;
  policies: Partial<StoragePolicies> | null;
  raw_retention_days: number | null;
  snapshot_retention_days: number | null;
  compress_after_days: number | null;
};

/**
 * The storage settings, or undefined before the first migration. Not for use inside a
 * transaction that may run before the table exists (the failed read would abort it).
 */
async function readStorageSettings(db: { sql: Queryable }): Promise<StorageSettings | undefined> {
  const rows = await db.sql<StorageSettingsRow[]>`select * from storage_settings`.catch(
    (err: unknown) => {
      if ((err as { code?: unknown }).code === '42P01') return [];
      throw err;
    },
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  return { mode: parseStorageMode(row.mode), policies: policiesOf(row) };
}

/** Like `readStorageSettings`, for maintenance code that needs a migrated database. */
export async function requireStorageSettings(db: { sql: Queryable }): Promise<StorageSettings> {
  const settings = await readStorageSettings(db);
  if (settings === undefined)
    throw new Error('the database is not migrated: run `monitor migrate`');
  return settings;
}

/** The stored policies; a database last migrated before they were one column has columns. */
export function policiesOf(row: StorageSettingsRow): StoragePolicies {
  const stored = row.policies ?? {};
  return {
    rawRetentionDays:
      stored.rawRetentionDays ?? row.raw_retention_days ?? defaultStoragePolicies.rawRetentionDays,
    snapshotRetentionDays:
      stored.snapshotRetentionDays ??
      row.snapshot_retention_days ??
      defaultStoragePolicies.snapshotRetentionDays,
    exemplarRetentionDays:
      stored.exemplarRetentionDays ?? defaultStoragePolicies.exemplarRetentionDays,
    rollup1mRetentionDays:
      stored.rollup1mRetentionDays ?? defaultStoragePolicies.rollup1mRetentionDays,
    rollup1hRetentionDays:
      stored.rollup1hRetentionDays ?? defaultStoragePolicies.rollup1hRetentionDays,
    compressAfterHours:
      stored.compressAfterHours ??
      (row.compress_after_days === null ? undefined : row.compress_after_days * 24) ??
      defaultStoragePolicies.compressAfterHours,
    jobIntervalSeconds: stored.jobIntervalSeconds ?? undefined,
  };
}

export function parseStorageMode(value: string): StorageMode {
  if ((storageModes as readonly string[]).includes(value)) return value as StorageMode;
  throw new Error(
    `storage_settings.mode is '${value}', expected one of ${storageModes.join(', ')}`,
  );
}

/** Which storage runs, as the start log and `monitor_storage_info` say it. */
export type StorageInfo = {
  engine: 'timescaledb' | 'postgresql';
  /** TimescaleDB's version, or PostgreSQL's for plain storage. */
  version: string;
};

/** The storage of a migrated database. */
export async function readStorageInfo(db: { sql: Queryable }): Promise<StorageInfo> {
  const { mode } = await requireStorageSettings(db);
  const [row] = await db.sql<{ timescaledb: string | null; postgresql: string }[]>`
    select (select extversion from pg_extension where extname = 'timescaledb') as timescaledb,
      current_setting('server_version') as postgresql
  `;
  return mode === 'timescale'
    ? { engine: 'timescaledb', version: row?.timescaledb ?? 'unknown' }
    : { engine: 'postgresql', version: (row?.postgresql ?? 'unknown').split(' ')[0] ?? 'unknown' };
}
