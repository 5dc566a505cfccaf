import { PostgreSqlContainer } from '@testcontainers/postgresql';
import { execFile } from 'node:child_process';
import { closeSync, fstatSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { containerImage } from './container-images.js';
import { getFreePort } from './free-port.js';
import type { RunningService, ServiceLauncher } from './service.js';
import type { RestartableProcess } from './restartable-process.js';
import { startRestartableProcess } from './restartable-process.js';
import { createServiceDir, markOwner } from './service-dir.js';
import type { SupervisedProcess } from './supervised-process.js';
import { startSupervised } from './supervised-process.js';
import {
  findPostgresServerBinaries,
  findTimescaleExtension,
  postgresServerUser,
  timescalePreloadSettings,
} from '@monitor/platform';

const execFileAsync = promisify(execFile);

const readyTimeoutMs = 30_000;
/** A throwaway test server: durability off, room for many pools. */
const serverSettings = [
  'fsync=off',
  'synchronous_commit=off',
  'full_page_writes=off',
  'max_connections=200',
  'shared_buffers=128MB',
];

/**
 * PostgreSQL 15: the machine's server binaries on a free 127.0.0.1 port with a throwaway data dir
 * (durability off: fsync, synchronous_commit and full_page_writes), or a container of
 * postgres:15-alpine (or MONITOR_TESTKIT_POSTGRES_IMAGE). The URL connects as the superuser `postgres` without a password.
 */
export const postgresLauncher: ServiceLauncher = {
  async native() {
    const prepared = await prepareNativePostgres('postgres');
    const server = await launchPostgres(prepared, { removeOnExit: true });
    return {
      name: 'postgres',
      url: prepared.url,
      origin: 'native',
      stop: () => server.stop(),
    } satisfies RunningService;
  },

  async container() {
    const container = await new PostgreSqlContainer(containerImage('postgres')).start();
    return {
      name: 'postgres',
      url: container.getConnectionUri(),
      origin: 'container',
      stop: async () => {
        await container.stop();
      },
    };
  },
};

export type PreparedPostgres = {
  binDir: string;
  dir: string;
  dataDir: string;
  owner: { uid: number; gid: number } | undefined;
  port: number;
  url: string;
};

/** initdb of a fresh data dir (as the server's user) and a free port to serve it on. */
export async function prepareNativePostgres(
  name: string,
  binDir = findPostgresServerBinaries(),
): Promise<PreparedPostgres> {
  const owner = postgresServerUser();
  const dir = createServiceDir(name, owner);
  const dataDir = join(dir, 'data');
  try {
    await execFileAsync(
      join(binDir, 'initdb'),
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync'],
      { cwd: dir, env: { ...process.env, LC_ALL: 'C' }, ...asUser(owner) },
    );
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed in ${dataDir}: ${describeExecError(err)}`, { cause: err });
  }
  const port = await getFreePort();
  createLogFile(join(dir, 'postgres.log'));
  return {
    binDir,
    dir,
    dataDir,
    owner,
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
  };
}

/**
 * Runs the prepared server until `readyQuery` answers a row; `removeOnExit` also deletes its dir
 * when it ends. `settings` come after the throwaway defaults, so they may override them.
 */
export async function launchPostgres(
  prepared: PreparedPostgres,
  options: {
    removeOnExit: boolean;
    settings?: readonly string[];
    what?: string;
    readyQuery?: string;
  },
): Promise<SupervisedProcess> {
  const { binDir, dir, dataDir, port } = prepared;
  const { removeOnExit } = options;
  const server = startSupervised({
    command: join(binDir, 'postgres'),
    args: [
      ...['-D', dataDir, '-p', String(port), '-h', '127.0.0.1', '-k', dir],
      ...[...serverSettings, ...(options.settings ?? [])].flatMap((setting) => ['-c', setting]),
    ],
    cwd: dir,
    env: { ...stringEnv(), LC_ALL: 'C' },
    ...asUser(prepared.owner),
    logFile: join(dir, 'postgres.log'),
    ...(removeOnExit ? { removeOnExit: dir } : {}),
    // SIGINT is PostgreSQL's fast shutdown: abort sessions, checkpoint, exit.
    stopSignal: 'SIGINT',
  });
  if (!removeOnExit) markOwner(dir, server.pid);
  await waitForPostgres(prepared.url, {
    server,
    what: options.what ?? 'PostgreSQL',
    query: options.readyQuery ?? 'select 1',
  });
  return server;
}

/** A private native PostgreSQL that a test can stop and start again on the same port and data. */
export type RestartablePostgres = RestartableProcess & {
  /** The superuser's URL on database `postgres`. */
  readonly url: string;
};

/**
 * `timescale`: TimescaleDB preloaded as the servers we start have it (`timescalePreloadSettings`
 * of @monitor/platform); the extension is created by whoever migrates. `settings` (`name=value`)
 * come last, so they override both: a server as a user configured it, say.
 */
export async function startRestartablePostgres(
  options: { timescale?: boolean; settings?: readonly string[] } = {},
): Promise<RestartablePostgres> {
  const binDir = findPostgresServerBinaries();
  if (options.timescale === true && findTimescaleExtension(binDir) === undefined) {
    throw new Error(`the PostgreSQL in ${binDir} has no TimescaleDB`);
  }
  const prepared = await prepareNativePostgres(
    options.timescale === true ? 'timescale' : 'postgres',
    binDir,
  );
  const settings = [
    ...(options.timescale === true ? timescalePreloadSettings : []),
    ...(options.settings ?? []),
  ];
  const server = await startRestartableProcess(prepared.dir, () =>
    launchPostgres(prepared, { removeOnExit: false, settings }),
  );
  return { url: prepared.url, ...server };
}

function asUser(owner: { uid: number; gid: number } | undefined): { uid?: number; gid?: number } {
  return owner === undefined ? {} : { uid: owner.uid, gid: owner.gid };
}

/** Resolves once `query` returns a row on `url`; see `waitUntilReady`. */
async function waitForPostgres(
  url: string,
  options: { server: SupervisedProcess; what: string; query: string; timeoutMs?: number },
): Promise<void> {
  await waitUntilReady(options.server, {
    what: options.what,
    timeoutMs: options.timeoutMs ?? readyTimeoutMs,
    probe: async () => {
      const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => undefined });
      try {
        const rows = await sql.unsafe(options.query);
        if (rows.length === 0) throw new Error(`'${options.query}' returned no row`);
      } finally {
        await sql.end({ timeout: 1 });
      }
    },
  });
}

/**
 * Resolves once `probe` succeeds. When the process exits first or the deadline passes, stops it
 * and throws with the tail of its log. The log is held open from the start, because the
 * watchdog removes its dir (log included) as soon as the service dies.
 */
export async function waitUntilReady(
  server: SupervisedProcess,
  options: { what: string; timeoutMs: number; probe: () => Promise<void> },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let exitCode: number | undefined;
  void server.exited.then((code) => {
    exitCode = code;
  });
  let log = openIfExists(server.logFile);
  let lastError: unknown;
  try {
    while (exitCode === undefined && Date.now() < deadline) {
      log ??= openIfExists(server.logFile);
      try {
        await options.probe();
        return;
      } catch (err) {
        lastError = err;
      }
      await sleep(100);
    }
    const tail = log === undefined ? server.tail() : tailOf(log);
    await server.stop();
    const reason =
      exitCode === undefined
        ? `not ready within ${options.timeoutMs} ms (last error: ${describe(lastError)})`
        : `exited with code ${exitCode}`;
    throw new Error(`${options.what} ${reason}; last lines of its log:\n${tail}`);
  } finally {
    if (log !== undefined) closeSync(log);
  }
}

/**
 * Creates the (empty) log before the watchdog appends to it, so that `waitUntilReady` can hold it
 * open even when the service dies at once.
 */
export function createLogFile(path: string): string {
  writeFileSync(path, '');
  return path;
}

function openIfExists(path: string): number | undefined {
  try {
    return openSync(path, 'r');
  } catch {
    return undefined;
  }
}

function tailOf(fd: number, lines = 30): string {
  const size = fstatSync(fd).size;
  const length = Math.min(size, 16_384);
  const buffer = Buffer.alloc(length);
  readSync(fd, buffer, 0, length, size - length);
  return buffer.toString('utf8').split('\n').slice(-lines).join('\n');
}

/** The watchdog passes the environment on verbatim, so it must hold strings only. */
function stringEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
}

function describeExecError(err: unknown): string {
  if (
    err !== null &&
    typeof err === 'object' &&
    'stderr' in err &&
    typeof err.stderr === 'string' &&
    err.stderr !== ''
  ) {
    return err.stderr.trim();
  }
  return describe(err);
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
