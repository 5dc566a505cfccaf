import type { Database, MigrateOptions } from '@monitor/db';
import { createDatabase, migrate } from '@monitor/db';
import { pausePolicyJobs } from '@monitor/db/bench';
import { createTestDatabase } from '@monitor/testkit';
import type { Cleanup } from './cleanup.js';
import { logProgress } from './progress.js';
import { startTimescaleServer } from '../timescale-server.js';

/** A fresh database on a PostgreSQL server with TimescaleDB, and a pool on it. */
export type TimescaleDatabase = {
  /** TimescaleDB's version, for the report's settings. */
  version: string;
  url: string;
  db: Database;
};

/**
 * The target of the storage benchmarks: the machine's PostgreSQL with TimescaleDB started for
 * the run, a fresh database on it, a pool of `maxConnections`; each stopped or closed by `cleanup`.
 */
export async function startTimescaleDatabase(options: {
  logDir: string;
  cleanup: Cleanup;
  /** Prefix of the database's name. */
  prefix: string;
  maxConnections: number;
  applicationName?: string;
}): Promise<TimescaleDatabase> {
  const server = await startTimescaleServer({ logDir: options.logDir, cleanup: options.cleanup });
  const database = await createTestDatabase(server.url, options.prefix);
  const db = createDatabase({
    url: database.url,
    maxConnections: options.maxConnections,
    ...(options.applicationName === undefined ? {} : { applicationName: options.applicationName }),
  });
  options.cleanup.add('database pool', () => db.close());
  return { version: server.version, url: database.url, db };
}

/** Migrates `db` in storage mode `mode`; throws when migrate chose another one. */
export async function migrateInMode(
  db: Database,
  mode: 'timescale' | 'postgres',
  options: Omit<MigrateOptions, 'mode'> = {},
): Promise<void> {
  logProgress(`migrating (${mode} mode)`);
  const migrated = await migrate(db, { ...options, mode });
  if (migrated.mode !== mode) throw new Error(`migrate chose ${migrated.mode}`);
}

/**
 * The PromQL benches' database: migrated in TimescaleDB mode with the policies' jobs paused (the
 * bench does what they would, when it means to), its version noted in the report's settings.
 */
export async function migrateForQueries(
  target: TimescaleDatabase,
  settings: { timescaledb?: string },
): Promise<void> {
  settings.timescaledb = target.version;
  await migrateInMode(target.db, 'timescale');
  await pausePolicyJobs(target.db);
}
