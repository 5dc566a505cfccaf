import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The directory of the machine's PostgreSQL (≥ 15) server binaries, for the embedded database of
 * `npm start` and the test servers: PG_BIN when set, else Debian's /usr/lib/postgresql/<version>/bin
 * (newest first), else whatever `pg_config --bindir` names. Throws saying where it looked.
 */
export function findPostgresServerBinaries(): string {
  const candidates: string[] = [];
  const fromEnv = process.env['PG_BIN'];
  if (fromEnv !== undefined && fromEnv !== '') candidates.push(fromEnv);
  else {
    for (const version of ['17', '16', '15']) candidates.push(`/usr/lib/postgresql/${version}/bin`);
    try {
      candidates.push(
        execFileSync('pg_config', ['--bindir'], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        }).trim(),
      );
    } catch {
      // No pg_config on the PATH: the candidates so far are all there is.
    }
  }
  const found = candidates.find(
    (dir) => existsSync(join(dir, 'postgres')) && existsSync(join(dir, 'initdb')),
  );
  if (found !== undefined) return found;
  throw new Error(
    `no PostgreSQL ≥ 15 server binaries (postgres and initdb) in ${candidates.join(', ')}: ` +
      'install postgresql-15 (apt-get install postgresql-15), point PG_BIN at their directory, ' +
      'or set DATABASE_URL to a running server',
  );
}

/**
 * The TimescaleDB extension installed for the server binaries in `binDir`, if any: its version
 * (from the control file) when both the loader library and the control file are present. A
 * server of those binaries can then preload it (`shared_preload_libraries = 'timescaledb'`).
 * Looks beside Debian's layout (`<bin>/../lib`, `/usr/share/postgresql/<major>/extension`) and
 * asks `pg_config` of the same directory otherwise.
 */
export function findTimescaleExtension(binDir: string): { version: string } | undefined {
  const major = /postgresql\/(\d+)\/bin\/?$/.exec(binDir)?.[1];
  const candidates: { lib: string; share: string }[] = [];
  if (major !== undefined) {
    candidates.push({ lib: join(binDir, '..', 'lib'), share: `/usr/share/postgresql/${major}` });
  }
  const pgConfig = join(binDir, 'pg_config');
  if (existsSync(pgConfig)) {
    try {
      const ask = (flag: string) =>
        execFileSync(pgConfig, [flag], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        }).trim();
      candidates.push({ lib: ask('--pkglibdir'), share: ask('--sharedir') });
    } catch {
      // A pg_config that cannot answer: the Debian layout above is all there is.
    }
  }
  for (const { lib, share } of candidates) {
    const control = join(share, 'extension', 'timescaledb.control');
    if (!existsSync(join(lib, 'timescaledb.so')) || !existsSync(control)) continue;
    const version = /^default_version\s*=\s*'([^']+)'/m.exec(readFileSync(control, 'utf8'))?.[1];
    if (version !== undefined) return { version };
  }
  return undefined;
}

/**
 * The server settings that load TimescaleDB at start, with its telemetry off (it would try to
 * reach Timescale's servers), for servers whose configuration this project owns. PostgreSQL's
 * default of 8 worker processes is too few: TimescaleDB's launcher, a scheduler per database and
 * the storage jobs (11 of ours and 2 of its own, most due together after a migration) share them
 * with parallel queries, and a job that finds none fails to launch until its next run. On a
 * server we do not own, migrate warns of settings below what the jobs need (db's
 * `jobWorkerShortfall`).
 */
export const timescalePreloadSettings = [
  'shared_preload_libraries=timescaledb',
  'timescaledb.telemetry_level=off',
  'max_worker_processes=26',
  'timescaledb.max_background_workers=18',
] as const;

/**
 * The user a PostgreSQL server started by this process runs as: PostgreSQL refuses to run as
 * root, so as root the `postgres` user (or `nobody` when there is none); otherwise undefined
 * (stay who we are).
 */
export function postgresServerUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    const user = lookUpUser(name);
    if (user !== undefined) return user;
  }
  throw new Error(
    'running as root, and neither a `postgres` nor a `nobody` user exists to run PostgreSQL as',
  );
}

function lookUpUser(name: string): { uid: number; gid: number } | undefined {
  try {
    const id = (flag: string): number =>
      Number(
        execFileSync('id', [flag, name], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        }).trim(),
      );
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    // No `id` command or no such user: fall back to /etc/passwd (name:x:uid:gid:...).
  }
  try {
    const line = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith(`${name}:`));
    const [, , uid, gid] = line?.split(':') ?? [];
    return uid !== undefined && gid !== undefined
      ? { uid: Number(uid), gid: Number(gid) }
      : undefined;
  } catch {
    return undefined;
  }
}
