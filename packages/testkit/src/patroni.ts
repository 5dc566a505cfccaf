import { chownSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findPostgresServerBinaries, postgresServerUser } from '@monitor/platform';
import { getFreePort } from './free-port.js';
import { createLogFile, waitUntilReady } from './postgres.js';
import { createServiceDir } from './service-dir.js';
import type { SupervisedProcess } from './supervised-process.js';
import { startSupervised } from './supervised-process.js';

/** One PostgreSQL node and the Patroni that manages it. */
type PatroniNode = {
  readonly name: string;
  /** The node's PostgreSQL, superuser, database `postgres`. */
  readonly url: string;
  readonly port: number;
  /** Patroni's REST API. */
  readonly apiUrl: string;
};

/**
 * A Patroni cluster on one etcd: a leader and synchronous standbys (`synchronous_mode`), failing
 * over when the leader's key expires (ttl 10 s, a loop every 2 s): what the deployment runs
 * (deploy/patroni), on this machine's PostgreSQL 15 and TimescaleDB.
 */
export type PatroniCluster = {
  readonly nodes: readonly PatroniNode[];
  /** Every node, libpq style, asking for the read-write one. */
  readonly url: string;
  /** The node Patroni reports as leader (waits for one, up to `timeoutMs`). */
  leader(options?: { timeoutMs?: number; not?: PatroniNode }): Promise<PatroniNode>;
  /** SIGKILL to the node's Patroni and its PostgreSQL together: the machine is gone. */
  kill(node: PatroniNode): Promise<void>;
  stop(): Promise<void>;
};

const patroniBinary = '/usr/bin/patroni';

export async function startPatroniCluster(
  options: { nodes?: number; timescale?: boolean } = {},
): Promise<PatroniCluster> {
  const owner = postgresServerUser();
  const binDir = findPostgresServerBinaries();
  const started: SupervisedProcess[] = [];
  const stop = async (): Promise<void> => {
    // Patroni stops its PostgreSQL; etcd last, so that they can still talk to it.
    for (const process of started.reverse()) await process.stop();
  };
  try {
    const etcd = await startEtcd();
    started.push(etcd.process);
    const scope = `monitor-${Date.now().toString(36)}`;
    const nodes: (PatroniNode & { process: SupervisedProcess; dataDir: string })[] = [];
    for (let i = 0; i < (options.nodes ?? 2); i++) {
      const name = `node${i}`;
      const dir = createServiceDir(`patroni-${name}`, owner);
      const [port, apiPort] = [await getFreePort(), await getFreePort()];
      const dataDir = join(dir, 'data');
      const config = join(dir, 'patroni.yml');
      writeFileSync(
        config,
        patroniConfig({
          scope,
          name,
          dir,
          dataDir,
          binDir,
          port,
          apiPort,
          etcd: etcd.endpoint,
          timescale: options.timescale ?? false,
        }),
      );
      if (owner !== undefined) chownSync(config, owner.uid, owner.gid);
      const logFile = createLogFile(join(dir, 'patroni.log'));
      const process = startSupervised({
        command: patroniBinary,
        args: [config],
        cwd: dir,
        env: { PATH: '/usr/bin:/bin', HOME: dir, LC_ALL: 'C' },
        ...(owner === undefined ? {} : { uid: owner.uid, gid: owner.gid }),
        logFile,
        removeOnExit: dir,
        stopSignal: 'SIGTERM',
        stopTimeoutMs: 30_000,
      });
      started.push(process);
      nodes.push({
        name,
        url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
        port,
        apiUrl: `http://127.0.0.1:${apiPort}`,
        process,
        dataDir,
      });
      // One at a time: the first bootstraps the cluster, the next clone it.
      await waitUntilReady(process, {
        what: `Patroni ${name}`,
        timeoutMs: 90_000,
        probe: async () => {
          const health = await fetch(`${nodes[i]!.apiUrl}/health`);
          if (health.status !== 200) throw new Error(`/health answered ${health.status}`);
        },
      });
    }
    const cluster: PatroniCluster = {
      nodes: nodes.map(({ name, url, port, apiUrl }) => ({ name, url, port, apiUrl })),
      url:
        `postgres://postgres:postgres@${nodes.map((node) => `127.0.0.1:${node.port}`).join(',')}` +
        '/postgres?target_session_attrs=read-write',
      async leader(leaderOptions = {}) {
        const deadline = Date.now() + (leaderOptions.timeoutMs ?? 60_000);
        for (;;) {
          for (const node of cluster.nodes) {
            if (node.name === leaderOptions.not?.name) continue;
            const answer = await fetch(`${node.apiUrl}/primary`).catch(() => undefined);
            if (answer?.status === 200) return node;
          }
          if (Date.now() > deadline) throw new Error('no Patroni leader in time');
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      },
      async kill(node) {
        const running = nodes.find((candidate) => candidate.name === node.name);
        if (running === undefined) throw new Error(`no node ${node.name}`);
        const postmaster = Number(
          readFileSync(join(running.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0],
        );
        const patroni = pidRunning(join(running.dataDir, '..', 'patroni.yml'));
        process.kill(patroni, 'SIGKILL');
        process.kill(postmaster, 'SIGKILL');
        await running.process.exited;
      },
      stop,
    };
    // Synchronous mode needs a standby that streams before a commit is acknowledged.
    if (nodes.length > 1) await waitForSyncStandby(cluster);
    return cluster;
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The pid of the process whose command line names `config` (Patroni's, under its watchdog). */
function pidRunning(config: string): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv.includes(config) && argv.some((arg) => arg.endsWith('patroni')))
        return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no process runs ${config}`);
}

async function waitForSyncStandby(cluster: PatroniCluster): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    for (const node of cluster.nodes) {
      const answer = await fetch(`${node.apiUrl}/sync`).catch(() => undefined);
      if (answer?.status === 200) return;
    }
    if (Date.now() > deadline) throw new Error('no synchronous standby in time');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function startEtcd(): Promise<{ process: SupervisedProcess; endpoint: string }> {
  const dir = createServiceDir('etcd');
  const [clientPort, peerPort] = [await getFreePort(), await getFreePort()];
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  mkdirSync(join(dir, 'data'), { recursive: true, mode: 0o700 });
  const process = startSupervised({
    command: '/usr/bin/etcd',
    args: [
      ...['--name', 'etcd0', '--data-dir', join(dir, 'data')],
      ...['--listen-client-urls', client, '--advertise-client-urls', client],
      ...['--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer],
      ...['--initial-cluster', `etcd0=${peer}`],
    ],
    cwd: dir,
    env: { PATH: '/usr/bin:/bin' },
    logFile: createLogFile(join(dir, 'etcd.log')),
    removeOnExit: dir,
  });
  await waitUntilReady(process, {
    what: 'etcd',
    timeoutMs: 30_000,
    probe: async () => {
      const health = await fetch(`${client}/health`);
      if (health.status !== 200) throw new Error(`/health answered ${health.status}`);
    },
  });
  return { process, endpoint: `127.0.0.1:${clientPort}` };
}

function patroniConfig(o: {
  scope: string;
  name: string;
  dir: string;
  dataDir: string;
  binDir: string;
  port: number;
  apiPort: number;
  etcd: string;
  timescale: boolean;
}): string {
  const timescale = o.timescale
    ? `
        shared_preload_libraries: timescaledb
        timescaledb.telemetry_level: 'off'
        max_worker_processes: 26`
    : '';
  return `scope: ${o.scope}
name: ${o.name}
restapi:
  listen: 127.0.0.1:${o.apiPort}
  connect_address: 127.0.0.1:${o.apiPort}
etcd3:
  hosts: ${o.etcd}
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 2
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_level: replica
        wal_log_hints: 'on'
        hot_standby: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
        max_connections: 200${timescale}
  initdb:
  - encoding: UTF8
  - no-locale
  pg_hba:
  - local all all trust
  - host replication replicator 127.0.0.1/32 trust
  - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${o.port}
  connect_address: 127.0.0.1:${o.port}
  data_dir: ${o.dataDir}
  bin_dir: ${o.binDir}
  pgpass: ${join(o.dir, 'pgpass')}
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: replicator
      password: replicator
  parameters:
    unix_socket_directories: ${o.dir}
`;
}
