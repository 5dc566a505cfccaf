import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '@monitor/platform';
import {
  findPostgresServerBinaries,
  findRunningPostgres,
  findTimescaleExtension,
  isProcessAlive,
  postgresPasswordFile,
  postgresServerUser,
  readPostmasterPid,
  stopPostmaster,
  timescalePreloadSettings,
} from '@monitor/platform';

const execFileAsync = promisify(execFile);

export type EmbeddedPostgres = {
  url: string;
  /** Fast shutdown (SIGINT): sessions end, a checkpoint is written, the server exits. */
  stop(): Promise<void>;
};

/**
 * The single-machine default when DATABASE_URL is unset: the machine's PostgreSQL server
 * binaries (PG_BIN, Debian's /usr/lib/postgresql/<version>/bin, or `pg_config --bindir`) on a
 * private port of 127.0.0.1, data kept in `dataDir` across restarts, password authentication
 * with a password generated at first start and kept beside the data. PostgreSQL refuses to run
 * as root, so as root it runs as the `postgres` user (or `nobody`). This process owns the
 * server's configuration: where the machine's PostgreSQL has TimescaleDB installed, the server
 * preloads it (telemetry off), unless `timescaledb` is `off`.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  logger: Logger;
  timescaledb?: 'auto' | 'off';
}): Promise<EmbeddedPostgres> {
  const binDir = findPostgresServerBinaries();
  const timescale = options.timescaledb === 'off' ? undefined : findTimescaleExtension(binDir);
  const owner = postgresServerUser();
  const root = resolve(options.dataDir);
  const dataDir = join(root, 'pgdata');
  const passwordFile = postgresPasswordFile(root);
  // Parents stay traversable (the server may run as another user); the data itself is private.
  mkdirSync(dirname(root), { recursive: true });
  mkdirSync(root, { recursive: true, mode: 0o700 });
  if (owner) assertTraversable(root, owner);
  const asOwner = owner === undefined ? {} : { uid: owner.uid, gid: owner.gid };

  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    options.logger.info({ dataDir }, 'initializing the embedded PostgreSQL data directory');
    const password = randomBytes(24).toString('base64url');
    writeFileSync(passwordFile, password, { mode: 0o600 });
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (owner) {
      chownSync(root, owner.uid, owner.gid);
      chownSync(dataDir, owner.uid, owner.gid);
      chownSync(passwordFile, owner.uid, owner.gid);
    }
    await execFileAsync(
      join(binDir, 'initdb'),
      [
        '-D',
        dataDir,
        '-U',
        'postgres',
        '--auth=scram-sha-256',
        `--pwfile=${passwordFile}`,
        '-E',
        'UTF8',
        '--no-locale',
      ],
      { env: { ...process.env, LC_ALL: 'C' }, ...asOwner },
    ).catch((err: unknown) => {
      throw new Error(
        `initdb failed in ${dataDir}: ${err instanceof Error ? err.message : String(err)}`,
      );
    });
  }
  const password = readFileSync(passwordFile, 'utf8').trim();
  await stopServerLeftByCrash(root, options.logger);
  const port = await freePort();
  const log = openSync(join(root, 'postgres.log'), 'a');
  if (owner) chownSync(join(root, 'postgres.log'), owner.uid, owner.gid);
  const preload = timescale === undefined ? [] : timescalePreloadSettings.flatMap((s) => ['-c', s]);
  const server = spawn(
    join(binDir, 'postgres'),
    ['-D', dataDir, '-p', String(port), '-h', '127.0.0.1', '-k', root, ...preload],
    { stdio: ['ignore', log, log], env: { ...process.env, LC_ALL: 'C' }, ...asOwner },
  );
  const exited = new Promise<number | null>((resolveExit) => server.once('exit', resolveExit));
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  await waitUntilAccepting(port, exited, root);
  // Once per start, so a newcomer can point psql or the CLI's DATABASE_URL at it: the URL
  // without its password, and the file the password is kept in (no secret in any log line).
  options.logger.info(
    {
      port,
      dataDir,
      databaseUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
      passwordFile,
      timescaledb: timescale?.version ?? null,
    },
    // One message either way: TimescaleDB's version (or null) is in its field.
    'embedded PostgreSQL started',
  );
  writeFileSync(join(root, ownerFileName), String(process.pid));
  return {
    url,
    async stop() {
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGINT');
      await exited;
      rmSync(join(root, ownerFileName), { force: true });
    },
  };
}

/**
 * The embedded PostgreSQL of `dataDir` for a one-shot command: the running one when there is
 * one (`stop` leaves it running), else one started for the command (`stop` stops it).
 */
export async function useEmbeddedPostgres(options: {
  dataDir: string;
  logger: Logger;
  timescaledb?: 'auto' | 'off';
}): Promise<EmbeddedPostgres & { startedHere: boolean }> {
  const running = await findRunningPostgres(options.dataDir);
  if (running !== undefined) {
    options.logger.info(
      { port: running.port, dataDir: options.dataDir },
      'using the running embedded PostgreSQL',
    );
    return { url: running.url, stop: () => Promise.resolve(), startedHere: false };
  }
  return { ...(await startEmbeddedPostgres(options)), startedHere: true };
}

/** The pid of the monitor process that started the embedded server, beside its data. */
const ownerFileName = 'monitor.pid';

/**
 * A monitor process killed with SIGKILL (or a crash) leaves its PostgreSQL running, holding the
 * data directory: the next start would fail on its lock. Such a server is stopped (SIGINT, a
 * fast shutdown: everything committed stays) before a new one starts. One whose monitor process
 * still runs is left alone, and starting is refused with the reason.
 */
async function stopServerLeftByCrash(root: string, logger: Logger): Promise<void> {
  const server = readPostmasterPid(root);
  if (server === undefined || !isProcessAlive(server.pid)) return;
  const owner = Number(readText(join(root, ownerFileName)));
  if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isMonitorProcess(owner)) {
    throw new Error(
      `the embedded PostgreSQL in ${root} belongs to a running monitor process (pid ${owner}): ` +
        'stop it first, or set MONITOR_DATA_DIR to another directory',
    );
  }
  logger.warn(
    { pid: server.pid, dataDir: root },
    'an embedded PostgreSQL was left running by a monitor process that is gone; stopping it first',
  );
  if (!(await stopPostmaster(server.pid, 60_000))) {
    throw new Error(`the embedded PostgreSQL left running (pid ${server.pid}) did not stop`);
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Alive and a Node.js process (not a reused pid of something else). */
function isMonitorProcess(pid: number): boolean {
  if (!isProcessAlive(pid)) return false;
  const cmdline = readText(`/proc/${pid}/cmdline`);
  return cmdline === '' || cmdline.includes('node');
}

async function waitUntilAccepting(
  port: number,
  exited: Promise<number | null>,
  root: string,
): Promise<void> {
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  // Crash recovery of a killed server's data happens before `ready`: give it time.
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (exitCode !== undefined) {
      throw new Error(
        `the embedded PostgreSQL exited (${exitCode}); see ${join(root, 'postgres.log')}`,
      );
    }
    // Not the socket file: it appears while the server still answers "the database system is
    // starting up"; the status turns `ready` once connections are accepted.
    const server = readPostmasterPid(root);
    if (server?.port === port && server.status === 'ready') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `the embedded PostgreSQL did not start within 60 s; see ${join(root, 'postgres.log')}`,
  );
}

/**
 * As root, PostgreSQL runs as another user, which must be able to enter every directory above
 * the data: a private parent (a 0700 home or mktemp directory) would otherwise fail deep inside
 * initdb with "Permission denied". Says which directory and what to do instead.
 */
function assertTraversable(root: string, owner: { uid: number; gid: number }): void {
  for (let dir = dirname(root); ; dir = dirname(dir)) {
    const { mode, uid, gid } = statSync(dir);
    const bit = uid === owner.uid ? 0o100 : gid === owner.gid ? 0o010 : 0o001;
    if ((mode & bit) === 0) {
      throw new Error(
        `running as root, the embedded PostgreSQL runs as uid ${owner.uid}, which cannot enter ` +
          `${dir}: set MONITOR_DATA_DIR to a directory it can reach (e.g. /var/lib/monitor), ` +
          `run as a regular user, or set DATABASE_URL`,
      );
    }
    if (dir === dirname(dir)) return;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolvePort(port));
    });
  });
}
