import type postgres from '@monitor/postgres-driver';

/** A pool or a transaction (core/database.ts's Queryable, which imports this module). */
type Queryable = postgres.ISql;

/** What the PostgreSQL server behind a pool can do for storage, asked once per pool. */
export type ServerCapabilities = {
  /** `server_version`, e.g. `15.20 (Debian 15.20-0+deb12u1)`. */
  serverVersion: string;
  timescaledb: {
    /** The extension's files are installed (`pg_available_extensions`). */
    available: boolean;
    /**
     * Its loader is in `shared_preload_libraries`. Without it, `create extension` fails with
     * FATAL and the server closes the connection (see `timescaleNotPreloaded`).
     */
    preloaded: boolean;
    /** The version created in this database, if it is. */
    version: string | undefined;
  };
  /** TimescaleDB runs its jobs (policies) by itself: preloaded with background workers. */
  jobScheduler: boolean;
};

/** Why a server with TimescaleDB installed but not preloaded cannot use it, and the fix. */
export const timescaleNotPreloaded =
  "TimescaleDB is installed on the PostgreSQL server but not preloaded: add it to the server's " +
  "shared_preload_libraries (shared_preload_libraries = 'timescaledb' in postgresql.conf) and " +
  'restart the server';

/**
 * Asks the server without touching the extension: loading a library that was not preloaded
 * kills the session. `shared_preload_libraries` is readable by superusers and members of
 * pg_read_all_settings; for others the loader's own settings tell whether it was loaded.
 */
export async function probeServerCapabilities(sql: Queryable): Promise<ServerCapabilities> {
  const [row] = await sql<
    {
      server_version: string;
      available: boolean;
      version: string | null;
      loader_settings: boolean;
      workers: string | null;
    }[]
  >`
    select current_setting('server_version') as server_version,
      exists (select 1 from pg_available_extensions where name = 'timescaledb') as available,
      (select extversion from pg_extension where extname = 'timescaledb') as version,
      exists (select 1 from pg_settings where name = 'timescaledb.max_background_workers')
        as loader_settings,
      current_setting('timescaledb.max_background_workers', true) as workers
  `;
  if (row === undefined) throw new Error('the server answered no row');
  const preloaded = await sql<{ libraries: string }[]>`
    select current_setting('shared_preload_libraries') as libraries
  `.then(
    ([libraries]) =>
      (libraries?.libraries ?? '')
        .split(',')
        .map((name) => name.trim().replace(/^"|"$/g, ''))
        .includes('timescaledb'),
    () => row.loader_settings,
  );
  return {
    serverVersion: row.server_version,
    timescaledb: { available: row.available, preloaded, version: row.version ?? undefined },
    jobScheduler: preloaded && Number(row.workers ?? '0') > 0,
  };
}
