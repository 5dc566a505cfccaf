import type { Database, TransactionSql } from '../core/database.js';
import type { StorageEngine, StorageMode, StoragePolicies } from '../storage/engine.js';
import { storageEngine } from '../storage/engine.js';
import type { ServerCapabilities } from '../storage/server-capabilities.js';
import { timescaleNotPreloaded } from '../storage/server-capabilities.js';
import type { WorkerSettingShortfall } from '../storage/timescale/job-workers.js';
import { jobWorkerShortfall, readJobWorkerSettings } from '../storage/timescale/job-workers.js';
import { migrations as allMigrations } from './migrations.js';
import type { Migration } from './migrations.js';
import type { StorageSettingsRow } from './storage-settings.js';
import { defaultStoragePolicies, parseStorageMode, policiesOf } from './storage-settings.js';

export type MigrateOptions = Partial<StoragePolicies> & {
  /**
   * `auto` (default): `timescale` when the server offers the timescaledb extension preloaded,
   * else `postgres` (with a note saying why). `timescale` insists: without a usable TimescaleDB
   * it throws a `StorageModeError`. Only the first migration decides; later runs keep the
   * stored mode.
   */
  mode?: 'auto' | StorageMode;
  /** Clock for the initial partitions of plain mode (default: now). */
  now?: Date;
};

export type MigrateResult = {
  mode: StorageMode;
  engine: StorageEngine;
  /** The TimescaleDB version in use (timescale mode). */
  timescaledbVersion: string | undefined;
  /** Migrations this call applied, in order (empty when the schema was up to date). */
  applied: { version: number; name: string }[];
  /** Things an operator should know, e.g. why TimescaleDB was not used. */
  notes: string[];
  /**
   * Server settings too low for TimescaleDB to start every storage job when it is due (some
   * would "fail to start"), each with its value and the value it needs, and how many jobs there
   * are; undefined when they suffice, or without TimescaleDB's job scheduler.
   */
  jobWorkers: { jobs: number; tooLow: WorkerSettingShortfall[] } | undefined;
};

/** The storage mode asked for cannot run on this server; the message says what to do. */
class StorageModeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StorageModeError';
  }
}

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
 * `migrate` up to (not including) `version`: a database as an older release left it, for a
 * benchmark of what the next migrations do to its data.
 */
export function migrateBefore(
  db: Database,
  version: number,
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  return migrateWith(
    db,
    allMigrations.filter((migration) => migration.version < version),
    options,
  );
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
  const policies = policiesFrom(options);
  const requested = options.mode ?? 'auto';
  const capabilities = await db.capabilities();
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
    await sql`alter table storage_settings add column if not exists policies jsonb`;
    const [stored] = await sql<{ mode: string }[]>`select mode from storage_settings`;
    if (stored !== undefined) {
      const mode = parseStorageMode(stored.mode);
      checkStoredMode(mode, requested, capabilities, notes);
      return mode;
    }
    const detected = chooseMode(requested, capabilities, notes);
    if (detected === 'timescale') await sql`create extension if not exists timescaledb`;
    await sql`insert into storage_settings (mode) values (${detected})`;
    return detected;
  });
  const engine = storageEngine(mode);

  const applied: MigrateResult['applied'] = [];
  const done = new Set(
    (await db.sql<{ version: number }[]>`select version from schema_migrations`).map(
      (row) => row.version,
    ),
  );
  for (const migration of migrations) {
    if (done.has(migration.version)) continue;
    if (await applyOnce(db, migration, engine)) {
      applied.push({ version: migration.version, name: migration.name });
    }
  }

  await applyPolicies(db, engine, policies);
  await engine.prepare(db, { now: options.now ?? new Date(), policies });
  const [extension] = await db.sql<{ version: string }[]>`
    select extversion as version from pg_extension where extname = 'timescaledb'
  `;
  return {
    mode,
    engine,
    timescaledbVersion: mode === 'timescale' ? extension?.version : undefined,
    applied,
    notes,
    jobWorkers:
      mode === 'timescale' && capabilities.jobScheduler ? await jobWorkers(db) : undefined,
  };
}

/** The worker settings that cannot run this database's storage jobs, if any. */
async function jobWorkers(db: Database): Promise<MigrateResult['jobWorkers']> {
  const settings = await readJobWorkerSettings(db);
  const tooLow = jobWorkerShortfall(settings);
  return tooLow.length === 0 ? undefined : { jobs: settings.jobs, tooLow };
}

/**
 * The mode of a fresh database: as requested, or from what the server offers. Never tries
 * `create extension` on a server that has not preloaded TimescaleDB: its loader answers with
 * FATAL and the server closes the connection.
 */
function chooseMode(
  requested: 'auto' | StorageMode,
  capabilities: ServerCapabilities,
  notes: string[],
): StorageMode {
  if (requested === 'postgres') return 'postgres';
  const { available, preloaded } = capabilities.timescaledb;
  if (!available) {
    if (requested === 'timescale') {
      throw new StorageModeError(
        'storage mode timescale requested, but the PostgreSQL server has no timescaledb ' +
          'extension installed',
      );
    }
    return 'postgres';
  }
  if (!preloaded) {
    if (requested === 'timescale') throw new StorageModeError(timescaleNotPreloaded);
    notes.push(`${timescaleNotPreloaded}; using plain PostgreSQL storage meanwhile`);
    return 'postgres';
  }
  return 'timescale';
}

/** A database keeps its mode; says what to do when the server or the request disagree. */
function checkStoredMode(
  stored: StorageMode,
  requested: 'auto' | StorageMode,
  capabilities: ServerCapabilities,
  notes: string[],
): void {
  const { available, preloaded } = capabilities.timescaledb;
  if (stored === 'timescale' && !preloaded) {
    throw new StorageModeError(
      `${timescaleNotPreloaded}: this database keeps its samples in TimescaleDB`,
    );
  }
  if (stored === 'postgres' && requested === 'timescale') {
    throw new StorageModeError(
      'storage mode timescale requested, but this database was created with plain PostgreSQL ' +
        'storage: move it with `monitor storage convert-to-timescaledb` (npm run monitor -- ' +
        'storage convert-to-timescaledb; nothing is lost), or start with STORAGE_MODE=auto',
    );
  }
  if (stored === 'postgres' && requested === 'auto' && available && preloaded) {
    notes.push(
      'TimescaleDB is available, but this database was created with plain PostgreSQL storage ' +
        'and keeps it: to move it, stop the service and run `monitor storage ' +
        'convert-to-timescaledb` (npm run monitor -- storage convert-to-timescaledb; nothing is lost)',
    );
  }
}

/**
 * TimescaleDB's jobs (refresh, compression) take locks on the objects a migration changes; when
 * both wait for each other, the server aborts one with a deadlock. A migration is one
 * transaction, so it is tried again then (a few times), instead of failing the start.
 */
async function applyOnce(
  db: Database,
  migration: Migration,
  engine: StorageEngine,
): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await applyInTransaction(db, migration, engine);
    } catch (err) {
      if ((err as { code?: unknown }).code !== '40P01' || attempt >= 5) throw err;
    }
  }
}

async function applyInTransaction(
  db: Database,
  migration: Migration,
  engine: StorageEngine,
): Promise<boolean> {
  return await db.sql.begin(async (sql) => {
    await lock(sql);
    const [row] = await sql`select 1 from schema_migrations where version = ${migration.version}`;
    if (row !== undefined) return false; // another process applied it while we waited
    await migration.up(sql, { engine });
    await sql`
      insert into schema_migrations (version, name, applied_at)
      values (${migration.version}, ${migration.name}, now())
    `;
    return true;
  });
}

/** Records the policies and lets the engine turn them into jobs where it has any. */
async function applyPolicies(
  db: Database,
  engine: StorageEngine,
  policies: StoragePolicies,
): Promise<void> {
  await db.sql.begin(async (sql) => {
    await lock(sql);
    const [row] = await sql<StorageSettingsRow[]>`select * from storage_settings`;
    const applied = row?.policies == null ? undefined : policiesOf(row);
    await engine.applyPolicies(sql, policies, applied);
    await sql`
      update storage_settings set
        policies = ${sql.json(toJson(policies))},
        raw_retention_days = ${policies.rawRetentionDays},
        snapshot_retention_days = ${policies.snapshotRetentionDays},
        updated_at = now()
    `;
  });
}

function toJson(policies: StoragePolicies): Record<string, number> {
  return Object.fromEntries(
    Object.entries(policies).filter((entry): entry is [string, number] => entry[1] !== undefined),
  );
}

/**
 * Refuses to migrate into a system schema: with search_path = pg_catalog the tables would land
 * in pg_catalog and TimescaleDB's functions, installed in public, would not be found.
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

function policiesFrom(options: MigrateOptions): StoragePolicies {
  const policies: StoragePolicies = {
    rawRetentionDays: options.rawRetentionDays ?? defaultStoragePolicies.rawRetentionDays,
    snapshotRetentionDays:
      options.snapshotRetentionDays ?? defaultStoragePolicies.snapshotRetentionDays,
    exemplarRetentionDays:
      options.exemplarRetentionDays ?? defaultStoragePolicies.exemplarRetentionDays,
    rollup1mRetentionDays:
      options.rollup1mRetentionDays ?? defaultStoragePolicies.rollup1mRetentionDays,
    rollup1hRetentionDays:
      options.rollup1hRetentionDays ?? defaultStoragePolicies.rollup1hRetentionDays,
    compressAfterHours: options.compressAfterHours ?? defaultStoragePolicies.compressAfterHours,
    jobIntervalSeconds: options.jobIntervalSeconds,
  };
  for (const [name, value] of Object.entries(policies)) {
    if (value === undefined && name === 'jobIntervalSeconds') continue;
    // A chunk may be compressed as soon as it ended; everything else lasts a while.
    const least = name === 'compressAfterHours' ? 0 : 1;
    if (!Number.isInteger(value) || (value as number) < least) {
      const what = least === 0 ? 'a non-negative' : 'a positive';
      throw new RangeError(`${name} must be ${what} integer, got ${String(value)}`);
    }
  }
  // A refresh window of at least a day that stays inside each rollup's retention.
  for (const name of ['rollup1mRetentionDays', 'rollup1hRetentionDays'] as const) {
    if (policies[name] < 2)
      throw new RangeError(`${name} must be at least 2, got ${policies[name]}`);
  }
  return policies;
}
