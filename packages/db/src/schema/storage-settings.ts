import type { Queryable } from '../core/database.js';

/**
 * How time series are stored, decided once at the first migration:
 * - `timescale`: hypertables, continuous aggregates, compression and retention policies;
 * - `postgres`: daily range partitions and rollup tables refreshed by `refreshRollups`.
 * Both expose the same tables and views with the same columns: query code never branches on it.
 */
export type StorageMode = 'timescale' | 'postgres';

export const storageModes = ['timescale', 'postgres'] as const satisfies readonly StorageMode[];

/** The one row of `storage_settings`. */
export type StorageSettings = {
  mode: StorageMode;
  /** Raw samples older than this are dropped (retention policy or partition maintenance). */
  rawRetentionDays: number;
  /** Container and process snapshots older than this are dropped. */
  snapshotRetentionDays: number;
  /** TimescaleDB compresses sample chunks older than this; unused in plain mode. */
  compressAfterDays: number;
};

type SettingsRow = {
  mode: string;
  raw_retention_days: number | null;
  snapshot_retention_days: number | null;
  compress_after_days: number | null;
};

/**
 * The storage settings, or undefined before the first migration. Not for use inside a
 * transaction that may run before the table exists (the failed read would abort it).
 */
async function readStorageSettings(db: { sql: Queryable }): Promise<StorageSettings | undefined> {
  const rows = await db.sql<SettingsRow[]>`
    select mode, raw_retention_days, snapshot_retention_days, compress_after_days
    from storage_settings
  `.catch((err: unknown) => {
    if ((err as { code?: unknown }).code === '42P01') return [];
    throw err;
  });
  const row = rows[0];
  if (row === undefined) return undefined;
  return {
    mode: toStorageMode(row.mode),
    rawRetentionDays: row.raw_retention_days ?? defaultStorageRetention.rawRetentionDays,
    snapshotRetentionDays:
      row.snapshot_retention_days ?? defaultStorageRetention.snapshotRetentionDays,
    compressAfterDays: row.compress_after_days ?? defaultStorageRetention.compressAfterDays,
  };
}

/** Like `readStorageSettings`, for maintenance code that needs a migrated database. */
export async function requireStorageSettings(db: { sql: Queryable }): Promise<StorageSettings> {
  const settings = await readStorageSettings(db);
  if (settings === undefined)
    throw new Error('the database is not migrated: run `monitor migrate`');
  return settings;
}

export const defaultStorageRetention = {
  rawRetentionDays: 30,
  snapshotRetentionDays: 7,
  compressAfterDays: 7,
} as const;

function toStorageMode(value: string): StorageMode {
  if ((storageModes as readonly string[]).includes(value)) return value as StorageMode;
  throw new Error(
    `storage_settings.mode is '${value}', expected one of ${storageModes.join(', ')}`,
  );
}
