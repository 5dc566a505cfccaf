import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase } from '@monitor/db';
import { ingestPath } from '@monitor/schemas';
import { getFreePort } from '@monitor/testkit';
import { startHttpProcess } from './bench-process.js';
import type { Cleanup } from './bench-run.js';
import type { CompareTarget } from './compare-target.js';
import { measuredProcess } from './compare-target.js';
import { monitorCommand } from './monitor-stack.js';
import { waitForLanded } from './wait-for-landed.js';

const pollIntervalMs = 100;
const orphanStopTimeoutMs = 15_000;

/**
 * The built service in one process, as `npm start` runs it (`monitor all`: in-process bus,
 * embedded PostgreSQL from the machine's server binaries), with a fresh data dir of its own
 * (gone with the process). Its 200 means the samples are stored.
 */
export async function startEmbeddedMonitor(options: {
  logDir: string;
  cleanup: Cleanup;
}): Promise<CompareTarget> {
  const dataDir = mkdtempSync(join(tmpdir(), 'monitor-bench-embedded-'));
  // As root the embedded server runs as `postgres`, which must be able to enter the directory.
  chmodSync(dataDir, 0o755);
  const apiKey = `mon_bench_${randomBytes(16).toString('hex')}`;
  const port = await getFreePort();
  const proc = await startHttpProcess({
    name: 'embedded',
    ...monitorCommand('dist', ['all']),
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '',
      PORT: String(port),
      MONITOR_DATA_DIR: dataDir,
      MONITOR_BOOTSTRAP_API_KEY: apiKey,
      // Far above anything this machine can send, so the rate limiter never answers 429.
      INGEST_RATE_LIMIT_PER_MINUTE: '1000000000',
      LOG_LEVEL: 'warn',
    },
    logDir: options.logDir,
    removeOnExit: dataDir,
    port,
    readyPath: '/healthz',
  });
  options.cleanup.add('embedded', () => proc.stop());
  const postgres = readPostmaster(join(dataDir, 'postgres'));
  let stopping: Promise<void> | undefined;
  const stopServer = (): Promise<void> =>
    (stopping ??= (async () => {
      await proc.stop();
      await stopOrphanedPostmaster(postgres.pid);
    })());
  options.cleanup.add('embedded and its PostgreSQL', stopServer);
  const db = createDatabase({ url: postgres.url, maxConnections: 1, applicationName: 'bench' });
  // Steps run newest first: the pool closes before its server stops.
  options.cleanup.add('embedded database pool', () => db.close());

  return {
    name: 'embedded',
    format: 'json',
    baseUrl: proc.baseUrl,
    path: ingestPath,
    headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey },
    measured: [
      measuredProcess('monitor all', proc),
      { name: 'postgres', pid: () => postgres.pid, tree: true },
    ],
    logged: [proc],
    waitForStored: async (args) => {
      const landed = await waitForLanded(db, { ...args, pollIntervalMs });
      return { stored: landed.stored, drained: landed.drained };
    },
    async stop() {
      // postgres.js ends a pool once; the cleanup's second close waits for the same end.
      await db.close();
      await stopServer();
    },
  };
}

/**
 * The embedded server's postmaster pid and URL from the files PostgreSQL and `monitor all`
 * keep beside its data: `postmaster.pid` (lines 1 and 4: pid and port) and the password file.
 */
function readPostmaster(root: string): { pid: number; url: string } {
  const lines = readFileSync(join(root, 'pgdata', 'postmaster.pid'), 'utf8').split('\n');
  const password = readFileSync(join(root, 'postgres.password'), 'utf8').trim();
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || !Number.isInteger(port))
    throw new Error(`no pid and port in ${root}/pgdata/postmaster.pid`);
  return {
    pid,
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
  };
}

/**
 * `monitor all` stops its PostgreSQL on the way out; if it was killed before it could, the
 * postmaster is left behind on a data dir about to be removed: stop it by its pid (fast
 * shutdown), and wait for it to go.
 */
async function stopOrphanedPostmaster(pid: number): Promise<void> {
  if (!signal(pid, 'SIGINT')) return;
  const deadline = Date.now() + orphanStopTimeoutMs;
  while (signal(pid, 0) && Date.now() < deadline) await sleep(100);
}

/** Sends `sig` (0: only checks that the process exists); false when there is no such process. */
function signal(pid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}
