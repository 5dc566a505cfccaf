import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { findTimescaleExtension, timescalePreloadSettings } from '@monitor/platform';
import { getFreePort } from './free-port.js';
import type { PreparedPostgres } from './postgres.js';
import { createLogFile, launchPostgres, prepareNativePostgres } from './postgres.js';
import { createServiceDir } from './service-dir.js';
import type { SupervisedProcess } from './supervised-process.js';

const execFileAsync = promisify(execFile);

/** One server of a replicated pair. */
type ReplicaServer = {
  /** The superuser's URL on database `postgres`, this server only. */
  readonly url: string;
  readonly port: number;
  /** SIGKILL to the postmaster: no shutdown checkpoint, no goodbye to clients or the standby. */
  kill(): Promise<void>;
  stop(): Promise<void>;
};

/**
 * A primary and a streaming standby made by `pg_basebackup` from it: physical replication, so
 * everything follows (TimescaleDB's catalog, hypertables, compressed chunks, job state).
 */
export type ReplicatedPostgres = {
  readonly primary: ReplicaServer;
  readonly standby: ReplicaServer & {
    /** `pg_promote()`: the standby becomes a primary (what a failover manager does). */
    promote(): Promise<void>;
  };
  /** Both hosts, libpq style, asking for the read-write one: what a role is given. */
  readonly url: string;
  stop(): Promise<void>;
};

/**
 * Starts a primary and a standby of the machine's PostgreSQL 15 (with TimescaleDB preloaded
 * when `timescale`), the standby synchronous unless `synchronous` is false: a commit the
 * primary acknowledged is on the standby too. Durable settings (fsync and synchronous commit
 * on) so that a kill loses only what a real crash loses.
 */
export async function startReplicatedPostgres(
  options: { timescale?: boolean; synchronous?: boolean } = {},
): Promise<ReplicatedPostgres> {
  const primaryPrepared = await prepareNativePostgres('pg-primary');
  const extension = options.timescale ? findTimescaleExtension(primaryPrepared.binDir) : undefined;
  if (options.timescale && extension === undefined) {
    throw new Error(`the PostgreSQL in ${primaryPrepared.binDir} has no TimescaleDB`);
  }
  const settings = [
    'fsync=on',
    'full_page_writes=on',
    'synchronous_commit=on',
    'wal_level=replica',
    'max_wal_senders=5',
    'wal_keep_size=256MB',
    'hot_standby=on',
    ...(options.timescale ? [...timescalePreloadSettings, 'max_worker_processes=26'] : []),
  ];
  const started: SupervisedProcess[] = [];
  const stopAll = async () => {
    for (const server of started.reverse()) await server.stop();
  };
  try {
    const primary = await launchPostgres(primaryPrepared, {
      removeOnExit: true,
      settings,
      what: 'PostgreSQL primary',
    });
    started.push(primary);
    if (options.timescale) await execute(primaryPrepared.url, 'create extension timescaledb');

    const standbyPrepared = await prepareStandby(primaryPrepared);
    const standby = await launchPostgres(standbyPrepared, {
      removeOnExit: true,
      settings,
      what: 'PostgreSQL standby',
    });
    started.push(standby);
    if (options.synchronous ?? true) {
      // Only once the standby streams: a primary with a synchronous standby that never
      // connects waits on every commit.
      await execute(
        primaryPrepared.url,
        "alter system set synchronous_standby_names = '*'",
        'select pg_reload_conf()',
      );
      await waitFor(
        primaryPrepared.url,
        "select 1 from pg_stat_replication where sync_state = 'sync'",
      );
    } else {
      await waitFor(
        primaryPrepared.url,
        "select 1 from pg_stat_replication where state = 'streaming'",
      );
    }
    const server = (prepared: PreparedPostgres, supervised: SupervisedProcess): ReplicaServer => ({
      url: prepared.url,
      port: prepared.port,
      kill: () => killPostmaster(prepared, supervised),
      stop: () => supervised.stop(),
    });
    return {
      primary: server(primaryPrepared, primary),
      standby: {
        ...server(standbyPrepared, standby),
        promote: () => execute(standbyPrepared.url, 'select pg_promote(wait => true)'),
      },
      url:
        `postgres://postgres@127.0.0.1:${primaryPrepared.port},127.0.0.1:${standbyPrepared.port}` +
        '/postgres?target_session_attrs=read-write',
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** A base backup of the running primary, set up (`-R`) to stream from it. */
async function prepareStandby(primary: PreparedPostgres): Promise<PreparedPostgres> {
  const dir = createServiceDir('pg-standby', primary.owner);
  const dataDir = join(dir, 'data');
  await execFileAsync(
    join(primary.binDir, 'pg_basebackup'),
    [
      ...['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres'],
      ...['-D', dataDir, '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync'],
    ],
    {
      cwd: dir,
      env: { ...process.env, LC_ALL: 'C' },
      ...(primary.owner === undefined ? {} : { uid: primary.owner.uid, gid: primary.owner.gid }),
    },
  );
  const port = await getFreePort();
  createLogFile(join(dir, 'postgres.log'));
  return {
    binDir: primary.binDir,
    dir,
    dataDir,
    owner: primary.owner,
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
  };
}

async function killPostmaster(
  prepared: PreparedPostgres,
  supervised: SupervisedProcess,
): Promise<void> {
  const pid = Number(readFileSync(join(prepared.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  process.kill(pid, 'SIGKILL');
  // The backends notice their postmaster's death and exit; the watchdog then removes the dir.
  await supervised.exited;
}

async function execute(url: string, ...statements: string[]): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    for (const statement of statements) await sql.unsafe(statement);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function waitFor(url: string, query: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    while ((await sql.unsafe(query)).length === 0) {
      if (Date.now() > deadline) throw new Error(`'${query}' returned no row in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}
