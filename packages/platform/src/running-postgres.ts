import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';

/**
 * The files of the embedded PostgreSQL of role `all`, shared by the server that keeps them and
 * the tools that find it (the CLI, the benchmark): under MONITOR_DATA_DIR a directory holding the
 * server's data (`pgdata`) and the password generated at its first start.
 */
export function embeddedPostgresDir(monitorDataDir: string): string {
  return join(monitorDataDir, 'postgres');
}

/** The password of the embedded server whose files are in `root`. */
export function postgresPasswordFile(root: string): string {
  return join(root, 'postgres.password');
}

/**
 * The pid, port and status PostgreSQL keeps in `postmaster.pid` (lines 1, 4 and 8:
 * LOCK_FILE_LINE_PID, _PORT and _PM_STATUS); the status is `ready` once it accepts connections.
 * The file is written at start and removed on a clean stop; undefined when there is none.
 */
export function readPostmasterPid(
  root: string,
): { pid: number; port: number; status: string } | undefined {
  let lines: string[];
  try {
    lines = readFileSync(join(root, 'pgdata', 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) return undefined;
  return { pid, port, status: lines[7]?.trim() ?? '' };
}

/**
 * The embedded PostgreSQL running on the files in `root`, or undefined. A `postmaster.pid` left
 * by a crash is stale: its pid is gone, or nothing accepts connections on its port.
 */
export async function findRunningPostgres(
  root: string,
): Promise<{ url: string; port: number; pid: number } | undefined> {
  const dir = resolve(root);
  const server = readPostmasterPid(dir);
  if (server?.status !== 'ready' || !isProcessAlive(server.pid) || !(await accepts(server.port))) {
    return undefined;
  }
  let password: string;
  try {
    password = readFileSync(postgresPasswordFile(dir), 'utf8').trim();
  } catch {
    return undefined;
  }
  return {
    port: server.port,
    pid: server.pid,
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${server.port}/postgres`,
  };
}

/**
 * Stops a postmaster by its pid with a fast shutdown (SIGINT: sessions end, a checkpoint is
 * written, everything committed stays) and waits for it to go. False when it still runs after
 * `timeoutMs`.
 */
export async function stopPostmaster(pid: number, timeoutMs: number): Promise<boolean> {
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return !isProcessAlive(pid);
  }
  const deadline = Date.now() + timeoutMs;
  while (isProcessAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, but another user's (the server runs as `postgres` when we are root).
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolveAccepts) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolveAccepts(ok);
    };
    socket.setTimeout(2_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
