import { PostgreSqlContainer } from '@testcontainers/postgresql';
import postgres from 'postgres';
import {
  findPostgresServerBinaries,
  findTimescaleExtension,
  timescalePreloadSettings,
} from '@monitor/platform';
import { containerImage } from './container-images.js';
import { launchPostgres, prepareNativePostgres } from './postgres.js';
import type { ServiceLauncher } from './service.js';

/**
 * Settings of the test server beyond the preload: the launcher looks for new databases every
 * second instead of every minute (tests clone databases from a migrated template and need
 * their job schedulers at once), and there are workers enough for a scheduler per database of
 * the suites that run at a time plus their jobs.
 */
const testServerSettings = [
  ...timescalePreloadSettings,
  'timescaledb.bgw_launcher_poll_time=1000',
  'max_worker_processes=40',
  'timescaledb.max_background_workers=32',
];

/** What a machine without the extension must do; also printed by `npm run services -- up`. */
const timescaleInstallHint =
  'install TimescaleDB for PostgreSQL 15: Timescale’s package timescaledb-2-postgresql-15, or ' +
  'tools/build-machine/timescaledb/install-from-source.sh <timescaledb-2.28.3.tar.gz> ' +
  '(as root; .ci/run does)';

/**
 * TimescaleDB for tests: a real server, background workers on.
 * - Natively: the machine's PostgreSQL 15 with the TimescaleDB it has installed, preloaded, on
 *   a free 127.0.0.1 port with a throwaway data dir (like the `postgres` service). Without the
 *   extension it refuses to start and says how to install it.
 * - In a container: the official image (or MONITOR_TESTKIT_TIMESCALE_IMAGE).
 * The URL connects as the superuser `postgres`; the extension exists in database `postgres`.
 */
export const timescaleLauncher: ServiceLauncher = {
  async native() {
    const binDir = findPostgresServerBinaries();
    const extension = findTimescaleExtension(binDir);
    if (extension === undefined) {
      throw new Error(`the PostgreSQL in ${binDir} has no TimescaleDB: ${timescaleInstallHint}`);
    }
    const prepared = await prepareNativePostgres('timescale', binDir);
    const server = await launchPostgres(prepared, {
      removeOnExit: true,
      settings: testServerSettings,
      what: `TimescaleDB ${extension.version}`,
      readyQuery: 'select 1',
    });
    try {
      await createExtension(prepared.url);
    } catch (err) {
      await server.stop();
      throw err;
    }
    return { name: 'timescale', url: prepared.url, origin: 'native', stop: () => server.stop() };
  },

  async container() {
    const container = await new PostgreSqlContainer(containerImage('timescale')).start();
    const url = container.getConnectionUri();
    // The image preloads the library; the extension still has to exist in the test database.
    try {
      await createExtension(url);
    } catch (err) {
      await container.stop();
      throw err;
    }
    return {
      name: 'timescale',
      url,
      origin: 'container',
      stop: async () => {
        await container.stop();
      },
    };
  },
};

async function createExtension(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    await sql.unsafe('create extension if not exists timescaledb');
  } finally {
    await sql.end({ timeout: 1 });
  }
}
