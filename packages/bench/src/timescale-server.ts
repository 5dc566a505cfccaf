import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { createDatabase } from '@monitor/db';
import {
  findPostgresServerBinaries,
  findTimescaleExtension,
  postgresServerUser,
  timescalePreloadSettings,
} from '@monitor/platform';
import { getFreePort, startSupervised } from '@monitor/testkit';
import type { Cleanup } from './harness/cleanup.js';

const execFileAsync = promisify(execFile);
const readyTimeoutMs = 60_000;

/**
 * The storage benchmark's server: measured sizes must not depend on durability settings (they
 * change no relation's size), so the load runs without fsync; memory is sized so that the load
 * and the aggregates' refresh are not bound by a small cache.
 */
const serverSettings = [
  ...timescalePreloadSettings,
  'fsync=off',
  'synchronous_commit=off',
  'full_page_writes=off',
  'shared_buffers=2GB',
  'work_mem=64MB',
  'maintenance_work_mem=1GB',
  'max_wal_size=8GB',
  'checkpoint_timeout=30min',
  // The policies' jobs are paused in the bench's database; the scheduler itself stays on, as
  // on any server our users run.
  'timescaledb.max_background_workers=8',
  'max_worker_processes=16',
];

type TimescaleServer = {
  /** The superuser's URL on database `postgres`. */
  url: string;
  /** TimescaleDB's version, from the extension's control file. */
  version: string;
  logFile: string;
};

/**
 * PostgreSQL from the machine's server binaries with TimescaleDB preloaded, on a free
 * 127.0.0.1 port, in a throwaway data dir (gone with the process), run as `postgres` when this
 * process is root (the server refuses root). Like testkit's PostgreSQL launcher, with the
 * extension loaded and its background workers on.
 */
export async function startTimescaleServer(options: {
  logDir: string;
  cleanup: Cleanup;
}): Promise<TimescaleServer> {
  const binDir = findPostgresServerBinaries();
  const extension = findTimescaleExtension(binDir);
  if (extension === undefined) {
    throw new Error(
      `no TimescaleDB for the server in ${binDir}: tools/build-machine/timescaledb/install-from-source.sh builds it`,
    );
  }
  const owner = postgresServerUser();
  const dir = mkdtempSync(join(tmpdir(), 'monitor-bench-timescale-'));
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
  const dataDir = join(dir, 'data');
  const asOwner = owner === undefined ? {} : { uid: owner.uid, gid: owner.gid };
  try {
    await execFileAsync(
      join(binDir, 'initdb'),
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync'],
      { cwd: dir, env: { ...process.env, LC_ALL: 'C' }, ...asOwner },
    );
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed in ${dataDir}: ${(err as Error).message}`, { cause: err });
  }
  const port = await getFreePort();
  const logFile = join(options.logDir, 'timescaledb.log');
  const server = startSupervised({
    command: join(binDir, 'postgres'),
    args: [
      ...['-D', dataDir, '-p', String(port), '-h', '127.0.0.1', '-k', dir],
      ...serverSettings.flatMap((setting) => ['-c', setting]),
    ],
    cwd: dir,
    env: { PATH: process.env['PATH'] ?? '', LC_ALL: 'C' },
    ...asOwner,
    logFile,
    removeOnExit: dir,
    // PostgreSQL's fast shutdown: abort sessions, checkpoint, exit.
    stopSignal: 'SIGINT',
  });
  options.cleanup.add('timescaledb', () => server.stop());
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitForServer(url, server);
  return { url, version: extension.version, logFile };
}

async function waitForServer(
  url: string,
  server: { exited: Promise<number>; tail(): string },
): Promise<void> {
  let exitCode: number | undefined;
  void server.exited.then((code) => (exitCode = code));
  const deadline = Date.now() + readyTimeoutMs;
  let lastError: unknown;
  while (exitCode === undefined && Date.now() < deadline) {
    const db = createDatabase({ url, maxConnections: 1, connectTimeoutSeconds: 2 });
    try {
      await db.ping();
      return;
    } catch (err) {
      lastError = err;
    } finally {
      await db.close({ timeoutSeconds: 1 });
    }
    await sleep(200);
  }
  const reason =
    exitCode === undefined
      ? `not ready in ${readyTimeoutMs} ms (${String(lastError)})`
      : `exited with ${exitCode}`;
  throw new Error(`TimescaleDB ${reason}:\n${server.tail()}`);
}
