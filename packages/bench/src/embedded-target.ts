import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase } from '@monitor/db';
import { embeddedPostgresDir, findRunningPostgres, stopPostmaster } from '@monitor/platform';
import { ingestPath } from '@monitor/schemas';
import { getFreePort } from '@monitor/testkit';
import { startHttpProcess } from './bench-process.js';
import type { Cleanup } from './harness/cleanup.js';
import type { CompareTarget } from './compare-target.js';
import { measuredProcess } from './compare-target.js';
import { monitorCommand, tunedMonitorEnv } from './monitor-stack.js';
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
      ...tunedMonitorEnv(),
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
  // Healthy means its PostgreSQL is up: the server's own files say where.
  const postgres = await findRunningPostgres(embeddedPostgresDir(dataDir));
  if (postgres === undefined) throw new Error(`no running PostgreSQL under ${dataDir}`);
  let stopping: Promise<void> | undefined;
  const stopServer = (): Promise<void> =>
    (stopping ??= (async () => {
      await proc.stop();
      // `monitor all` stops its PostgreSQL on the way out; if it was killed before it could,
      // the postmaster is left on a data dir about to be removed.
      await stopPostmaster(postgres.pid, orphanStopTimeoutMs);
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
