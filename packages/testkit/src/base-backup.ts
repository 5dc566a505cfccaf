import { execFile } from 'node:child_process';
import { chmodSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { findTimescaleExtension, timescalePreloadSettings } from '@monitor/platform';
import { getFreePort } from './free-port.js';
import type { PreparedPostgres } from './postgres.js';
import { createLogFile, launchPostgres, prepareNativePostgres } from './postgres.js';
import { createServiceDir, markOwner } from './service-dir.js';
import type { SupervisedProcess } from './supervised-process.js';

const execFileAsync = promisify(execFile);

/** A server started from a restored base backup. */
type RestoredPostgres = {
  /** The superuser's URL on database `postgres`. */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
};

/** A `pg_basebackup` in plain format, WAL included (`-X stream`): restorable on its own. */
type BaseBackup = {
  /** The backup's directory (with its `backup_manifest`). */
  readonly dir: string;
  /** `pg_verifybackup`: every file against the manifest, and the WAL it needs. */
  verify(): Promise<void>;
  /**
   * The documented restore: the backup copied into a new data directory (mode 0700, the
   * server's user), and PostgreSQL started on it, which replays the WAL to the backup's end.
   */
  restore(): Promise<RestoredPostgres>;
};

/** A running PostgreSQL (TimescaleDB preloaded when asked) that base backups are taken of. */
export type BackupSource = {
  /** The superuser's URL on database `postgres`. */
  readonly url: string;
  /** `pg_basebackup -X stream --checkpoint=fast` of the running server. */
  baseBackup(): Promise<BaseBackup>;
  /** Stops the source, every restored server and removes every backup. */
  stop(): Promise<void>;
};

/**
 * The machine's PostgreSQL 15 with durable settings (fsync, full page writes), TimescaleDB
 * preloaded and its extension in `postgres` when `timescale`: the primary of the backup and
 * restore procedure in docs/database-ha.md.
 */
export async function startBackupSource(
  options: { timescale?: boolean } = {},
): Promise<BackupSource> {
  const prepared = await prepareNativePostgres('pg-backup-source');
  if (options.timescale && findTimescaleExtension(prepared.binDir) === undefined)
    throw new Error(`the PostgreSQL in ${prepared.binDir} has no TimescaleDB`);
  const settings = [
    'fsync=on',
    'full_page_writes=on',
    'synchronous_commit=on',
    'wal_level=replica',
    'max_wal_senders=5',
    ...(options.timescale ? [...timescalePreloadSettings, 'max_worker_processes=26'] : []),
  ];
  const servers: SupervisedProcess[] = [];
  const backupDirs: string[] = [];
  const stop = async (): Promise<void> => {
    for (const server of servers.reverse()) await server.stop();
    for (const dir of backupDirs) rmSync(dir, { recursive: true, force: true });
  };
  try {
    servers.push(
      await launchPostgres(prepared, { removeOnExit: true, settings, what: 'backup source' }),
    );
    if (options.timescale) {
      const sql = postgres(prepared.url, { max: 1, onnotice: () => undefined });
      try {
        await sql`create extension if not exists timescaledb`;
      } finally {
        await sql.end({ timeout: 5 });
      }
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const asOwner = prepared.owner === undefined ? {} : prepared.owner;
  const run = (command: string, args: string[], cwd: string) =>
    execFileAsync(command, args, { cwd, env: { ...process.env, LC_ALL: 'C' }, ...asOwner });

  return {
    url: prepared.url,
    async baseBackup() {
      const parent = createServiceDir('pg-base-backup', prepared.owner);
      // Owned by this process while it lives, so no other run takes it for an orphan.
      markOwner(parent, process.pid);
      backupDirs.push(parent);
      const dir = join(parent, 'backup');
      await run(
        join(prepared.binDir, 'pg_basebackup'),
        [
          ...['-h', '127.0.0.1', '-p', String(prepared.port), '-U', 'postgres'],
          ...['-D', dir, '-X', 'stream', '--checkpoint=fast'],
        ],
        parent,
      );
      return {
        dir,
        async verify() {
          await run(join(prepared.binDir, 'pg_verifybackup'), [dir], parent);
        },
        async restore() {
          const restoredDir = createServiceDir('pg-restored', prepared.owner);
          const dataDir = join(restoredDir, 'data');
          await run('/bin/cp', ['-a', dir, dataDir], restoredDir);
          chmodSync(dataDir, 0o700);
          const port = await getFreePort();
          createLogFile(join(restoredDir, 'postgres.log'));
          const restored: PreparedPostgres = {
            binDir: prepared.binDir,
            dir: restoredDir,
            dataDir,
            owner: prepared.owner,
            port,
            url: `postgres://postgres@127.0.0.1:${port}/postgres`,
          };
          const server = await launchPostgres(restored, {
            removeOnExit: true,
            settings,
            what: 'restored PostgreSQL',
          });
          servers.push(server);
          return { url: restored.url, port, stop: () => server.stop() };
        },
      };
    },
    stop,
  };
}
