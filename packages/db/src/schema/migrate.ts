import type { Database, TransactionSql } from '../core/database.js';
import { ensurePartitions } from './ensure-partitions.js';
import { migrations as allMigrations } from './migrations.js';
import type { Migration } from './migrations.js';
import type { StorageMode, StorageSettings } from './storage-settings.js';
import { defaultStorageRetention, storageModes } from './storage-settings.js';

export type MigrateOptions = {
  /** Raw samples are dropped after this many days (default 30). */
  rawRetentionDays?: number;
  /** Container and process snapshots are dropped after this many days (default 7). */
  snapshotRetentionDays?: number;
  /** TimescaleDB compresses sample chunks older than this many days (default 7). */
  compressAfterDays?: number;
  /**
   * `auto` (default): `timescale` when the server offers the timescaledb extension, else
   * `postgres`. Only the first migration decides; later runs keep the stored mode.
   */
  mode?: 'auto' | StorageMode;
  /** Clock for the initial partitions of plain mode (default: now). */
  now?: Date;
};

export type MigrateResult = {
  mode: StorageMode;
  /** Migrations this call applied, in order (empty when the schema was up to date). */
  applied: { version: number; name: string }[];
  /** Things an operator should know, e.g. why TimescaleDB was not used. */
  notes: string[];
};

/**
 * Serializes migrators across processes: every migration transaction takes it first, so two
 * services starting at once apply each migration exactly once.
 */
const migrationLockKey = 7_171_302_001;

/**
 * Brings the schema up to date and applies the retention settings. Safe to run concurrently
 * and repeatedly: each migration runs once, in its own transaction, under an advisory lock.
 */
export function migrate(db: Database, options: MigrateOptions = {}): Promise<MigrateResult> {
  return migrateWith(db, allMigrations, options);
}

/**
 * `migrate` with the given migrations only, for tests that need a database at an earlier
 * version (say, to migrate stored data from it).
 */
export async function migrateWith(
  db: Database,
  migrations: readonly Migration[],
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  const retention = retentionOf(options);
  const notes: string[] = [];
  const mode = await db.sql.begin(async (sql) => {
    await lock(sql);
    await checkSchema(sql);
    await sql`
      create table if not exists schema_migrations (
        version int primary key,
        name text not null,
        applied_at timestamptz not null default now()
      )
    `;
    await sql`
      create table if not exists storage_settings (
        singleton boolean primary key default true check (singleton),
        mode text not null check (mode in ('timescale', 'postgres')),
        raw_retention_days int,
        snapshot_retention_days int,
        compress_after_days int,
        updated_at timestamptz not null default now()
      )
    `;
    const [stored] = await sql<{ mode: string }[]>`select mode from storage_settings`;
    if (stored !== undefined) return toMode(stored.mode);
    const detected = await detectMode(sql, options.mode ?? 'auto', notes);
    await sql`insert into storage_settings (mode) values (${detected})`;
    return detected;
  });

  const applied: MigrateResult['applied'] = [];
  const done = new Set(
    (await db.sql<{ version: number }[]>`select version from schema_migrations`).map(
      (row) => row.version,
    ),
  );
  for (const migration of migrations) {
    if (done.has(migration.version)) continue;
    if (await applyOnce(db, migration, mode)) {
      applied.push({ version: migration.version, name: migration.name });
    }
  }

  await applyRetention(db, mode, retention);
  if (mode === 'postgres') await ensurePartitions(db, { now: options.now ?? new Date() });
  return { mode, applied, notes };
}

/** The mode of a fresh database: as requested, or from what the server offers. */
async function detectMode(
  sql: TransactionSql,
  requested: 'auto' | StorageMode,
  notes: string[],
): Promise<StorageMode> {
  if (requested === 'postgres') return 'postgres';
  const [row] = await sql<{ available: boolean }[]>`
    select exists (select 1 from pg_available_extensions where name = 'timescaledb') as available
  `;
  if (!row?.available) {
    if (requested === 'timescale') {
      throw new Error(
        'storage mode timescale requested, but the server has no timescaledb extension',
      );
    }
    return 'postgres';
  }
  try {
    await sql.savepoint((sp) => sp`create extension if not exists timescaledb`);
    return 'timescale';
  } catch (err) {
    // Installed but not loadable, typically missing from shared_preload_libraries.
    if (requested === 'timescale') throw err;
    notes.push(
      `timescaledb is installed but cannot be enabled (${(err as Error).message}); using plain PostgreSQL storage`,
    );
    return 'postgres';
  }
}

async function applyOnce(db: Database, migration: Migration, mode: StorageMode): Promise<boolean> {
  return await db.sql.begin(async (sql) => {
    await lock(sql);
    const [row] = await sql`select 1 from schema_migrations where version = ${migration.version}`;
    if (row !== undefined) return false; // another process applied it while we waited
    await migration.up(sql, { mode });
    await sql`
      insert into schema_migrations (version, name, applied_at)
      values (${migration.version}, ${migration.name}, now())
    `;
    return true;
  });
}

type Retention = Omit<StorageSettings, 'mode'>;

/** Records the retention settings and, in TimescaleDB mode, (re)creates the policies. */
async function applyRetention(
  db: Database,
  mode: StorageMode,
  retention: Retention,
): Promise<void> {
  await db.sql.begin(async (sql) => {
    await lock(sql);
    const [row] = await sql<
      {
        raw_retention_days: number | null;
        snapshot_retention_days: number | null;
        compress_after_days: number | null;
      }[]
    >`
      select raw_retention_days, snapshot_retention_days, compress_after_days
      from storage_settings
    `;
    if (
      row?.raw_retention_days === retention.rawRetentionDays &&
      row.snapshot_retention_days === retention.snapshotRetentionDays &&
      row.compress_after_days === retention.compressAfterDays
    ) {
      return;
    }
    if (mode === 'timescale') {
      await sql`select remove_retention_policy('samples', if_exists => true)`;
      await sql`
        select add_retention_policy('samples',
          drop_after => make_interval(days => ${retention.rawRetentionDays}::int))
      `;
      await sql`select remove_retention_policy('snapshots', if_exists => true)`;
      await sql`
        select add_retention_policy('snapshots',
          drop_after => make_interval(days => ${retention.snapshotRetentionDays}::int))
      `;
      await sql`select remove_compression_policy('samples', if_exists => true)`;
      await sql`
        select add_compression_policy('samples',
          compress_after => make_interval(days => ${retention.compressAfterDays}::int))
      `;
    }
    await sql`
      update storage_settings set
        raw_retention_days = ${retention.rawRetentionDays},
        snapshot_retention_days = ${retention.snapshotRetentionDays},
        compress_after_days = ${retention.compressAfterDays},
        updated_at = now()
    `;
  });
}

/**
 * Refuses to migrate into a system schema: with search_path = pg_catalog (as the PGlite
 * test engine starts up with) the tables would land in pg_catalog and TimescaleDB's functions,
 * installed in public, would not be found.
 */
async function checkSchema(sql: TransactionSql): Promise<void> {
  const [row] = await sql<{ schema: string | null; path: string }[]>`
    select current_schema() as schema, current_setting('search_path') as path
  `;
  if (row?.schema == null || row.schema.startsWith('pg_')) {
    throw new Error(
      `refusing to migrate into schema ${String(row?.schema)} (search_path is ${row?.path ?? '?'}): ` +
        'set search_path to the schema the tables belong in, e.g. "$user", public',
    );
  }
}

async function lock(sql: TransactionSql): Promise<void> {
  await sql.unsafe(`select pg_advisory_xact_lock(${migrationLockKey})`);
}

function retentionOf(options: MigrateOptions): Retention {
  const retention = {
    rawRetentionDays: options.rawRetentionDays ?? defaultStorageRetention.rawRetentionDays,
    snapshotRetentionDays:
      options.snapshotRetentionDays ?? defaultStorageRetention.snapshotRetentionDays,
    compressAfterDays: options.compressAfterDays ?? defaultStorageRetention.compressAfterDays,
  };
  for (const [name, value] of Object.entries(retention)) {
    if (!Number.isInteger(value) || value < 1) {
      throw new RangeError(`${name} must be a positive integer, got ${String(value)}`);
    }
  }
  return retention;
}

function toMode(value: string): StorageMode {
  if ((storageModes as readonly string[]).includes(value)) return value as StorageMode;
  throw new Error(`storage_settings.mode is '${value}'`);
}
