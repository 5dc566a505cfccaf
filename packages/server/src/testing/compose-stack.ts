import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from '@monitor/db';
import { createDatabase } from '@monitor/db';
import { getFreePort } from '@monitor/testkit';
import type { ApiTarget } from './api-target.js';

const repoRoot = fileURLToPath(new URL('../../../..', import.meta.url));

/** Test-only compose files, read last: they publish the databases' ports on 127.0.0.1. */
const testDbComposeFile = 'tools/build-machine/compose-tests/compose.test-db.yml';
const testHaComposeFile = 'tools/build-machine/compose-tests/compose.test-ha.yml';
const testShardsComposeFile = 'tools/build-machine/compose-tests/compose.test-shards.yml';

/** The distributed stack of docker-compose.yml, up under a project name of its own. */
export type ComposeStack = ApiTarget & {
  /** The edge: the whole /api/v1 and the console at /. */
  readonly baseUrl: string;
  /** The stack's MONITOR_BOOTSTRAP_API_KEY (the default organization, every scope). */
  readonly bootstrapKey: string;
  /** `docker compose down -v`: the containers, the network and the volumes go. */
  down(): Promise<void>;
};

/** `docker compose` when the CLI has the plugin, else Debian's `docker-compose` (v1.29). */
function composeCommand(): string[] {
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0) {
    return ['docker', 'compose'];
  }
  if (spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0) {
    return ['docker-compose'];
  }
  throw new Error('neither `docker compose` nor `docker-compose` runs here');
}

/**
 * `docker compose up -d --no-build` of docker-compose.yml (plus the docker-compose.override.yml
 * of tools/build-machine/build-local-images.sh when there is one, as a plain `docker compose`
 * reads it), with the edge on a free 127.0.0.1 port and testDbComposeFile publishing the database
 * for the suites' setup. The images must be built (`docker compose build`). Resolves once the edge
 * answers an authenticated request; on failure the stack is taken down and the error holds the
 * services' last log lines.
 */
export async function startComposeStack(
  options: { upTimeoutMs?: number } = {},
): Promise<ComposeStack> {
  const dbPort = await getFreePort();
  const { stack } = await upComposeStack({
    files: ['docker-compose.yml', 'docker-compose.override.yml'],
    env: { MONITOR_TEST_DB_PORT: String(dbPort) },
    dbUrl: `postgres://monitor:monitor@127.0.0.1:${dbPort}/monitor`,
    upTimeoutMs: options.upTimeoutMs ?? 600_000,
  });
  return stack;
}

/** One Patroni node of the HA shape: a compose service running TimescaleDB under Patroni. */
type ComposeDbNode = {
  /** The compose service: `db` or `db-2`. */
  readonly service: string;
  /** Its Patroni REST API on 127.0.0.1. */
  readonly apiUrl: string;
};

/** The stack with docker-compose.ha.yml: the database as two Patroni nodes on etcd. */
export type HaComposeStack = ComposeStack & {
  /** The node whose Patroni answers 200 on /primary (waits up to `timeoutMs`, default 60 s). */
  leader(options?: { timeoutMs?: number; not?: ComposeDbNode }): Promise<ComposeDbNode>;
  /** Waits (up to `timeoutMs`) for a node whose Patroni answers 200 on /sync. */
  syncStandby(timeoutMs: number): Promise<ComposeDbNode>;
  /** `docker kill` (SIGKILL) of the node's container: PostgreSQL and Patroni die together. */
  kill(node: ComposeDbNode): Promise<void>;
  /** `docker inspect` of a service's container: whether it runs, and its exit code. */
  containerState(service: string): Promise<{ running: boolean; exitCode: number }>;
};

/**
 * The compose stack of docker-compose.yml and docker-compose.ha.yml (plus the overrides of
 * tools/build-machine/build-local-images.sh when there are any, read after both), with
 * testDbComposeFile and testHaComposeFile publishing both nodes' PostgreSQL and Patroni API on
 * 127.0.0.1.
 * `db` of the result names both nodes, read-write, as the roles' DATABASE_URL does. Resolves once
 * the edge answers, as startComposeStack.
 */
export async function startHaComposeStack(
  options: { upTimeoutMs?: number } = {},
): Promise<HaComposeStack> {
  const [dbPort, dbApiPort, db2Port, db2ApiPort] = [
    await getFreePort(),
    await getFreePort(),
    await getFreePort(),
    await getFreePort(),
  ];
  const { stack, run } = await upComposeStack({
    files: [
      'docker-compose.yml',
      'docker-compose.ha.yml',
      'docker-compose.override.yml',
      'docker-compose.ha.override.yml',
      testHaComposeFile,
    ],
    env: {
      MONITOR_TEST_DB_PORT: String(dbPort),
      MONITOR_TEST_DB_API_PORT: String(dbApiPort),
      MONITOR_TEST_DB2_PORT: String(db2Port),
      MONITOR_TEST_DB2_API_PORT: String(db2ApiPort),
    },
    dbUrl:
      `postgres://monitor:monitor@127.0.0.1:${dbPort},127.0.0.1:${db2Port}/monitor` +
      '?target_session_attrs=read-write',
    upTimeoutMs: options.upTimeoutMs ?? 600_000,
  });
  const nodes: ComposeDbNode[] = [
    { service: 'db', apiUrl: `http://127.0.0.1:${dbApiPort}` },
    { service: 'db-2', apiUrl: `http://127.0.0.1:${db2ApiPort}` },
  ];
  const answering = async (
    path: string,
    timeoutMs: number,
    not?: ComposeDbNode,
  ): Promise<ComposeDbNode> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const node of nodes) {
        if (node.service === not?.service) continue;
        const status = await fetch(`${node.apiUrl}${path}`, {
          signal: AbortSignal.timeout(2_000),
        }).then(
          (response) => response.status,
          () => 0,
        );
        if (status === 200) return node;
      }
      if (Date.now() > deadline) throw new Error(`no Patroni node answered 200 on ${path} in time`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const containerId = async (service: string): Promise<string> => {
    // `--all`: a killed container is listed too (docker-compose 1.29 and v2 both take it).
    const result = await run(['ps', '-q', '--all', service], 60_000);
    const id = result.output.trim().split('\n').pop() ?? '';
    if (result.code !== 0 || !/^[0-9a-f]{12,}$/.test(id)) {
      throw new Error(`no container for ${service}: ${result.output}`);
    }
    return id;
  };
  return {
    ...stack,
    leader: (leaderOptions = {}) =>
      answering('/primary', leaderOptions.timeoutMs ?? 60_000, leaderOptions.not),
    syncStandby: (timeoutMs) => answering('/sync', timeoutMs),
    async kill(node) {
      const id = await containerId(node.service);
      const result = await runCommand(
        ['docker', 'kill', '--signal', 'KILL', id],
        process.env,
        60_000,
      );
      if (result.code !== 0) throw new Error(`docker kill ${id} failed: ${result.output}`);
    },
    async containerState(service) {
      const id = await containerId(service);
      const result = await runCommand(
        ['docker', 'inspect', '--format', '{{.State.Running}} {{.State.ExitCode}}', id],
        process.env,
        60_000,
      );
      const [running, exitCode] = result.output.trim().split(' ');
      return { running: running === 'true', exitCode: Number(exitCode) };
    },
  };
}

/** The stack with docker-compose.shards.yml: samples over the shards s0 (`db`), s1 and s2. */
export type ShardsComposeStack = ComposeStack & {
  /** Each shard's database on 127.0.0.1, s0 (the control database, `db` of the stack) first. */
  readonly shardDbs: readonly Database[];
};

/**
 * The compose stack of docker-compose.yml and docker-compose.shards.yml (plus the overrides of
 * tools/build-machine/build-local-images.sh when there are any, read after both), with
 * testDbComposeFile and testShardsComposeFile publishing the three shards' PostgreSQL on
 * 127.0.0.1. Resolves once the edge answers, as startComposeStack.
 */
export async function startShardsComposeStack(
  options: { upTimeoutMs?: number } = {},
): Promise<ShardsComposeStack> {
  const [dbPort, s1Port, s2Port] = [await getFreePort(), await getFreePort(), await getFreePort()];
  const { stack } = await upComposeStack({
    files: [
      'docker-compose.yml',
      'docker-compose.shards.yml',
      'docker-compose.override.yml',
      'docker-compose.shards.override.yml',
      testShardsComposeFile,
    ],
    env: {
      MONITOR_TEST_DB_PORT: String(dbPort),
      MONITOR_TEST_DB_S1_PORT: String(s1Port),
      MONITOR_TEST_DB_S2_PORT: String(s2Port),
    },
    dbUrl: `postgres://monitor:monitor@127.0.0.1:${dbPort}/monitor`,
    upTimeoutMs: options.upTimeoutMs ?? 600_000,
  });
  const others = [s1Port, s2Port].map((port) =>
    createDatabase({
      url: `postgres://monitor:monitor@127.0.0.1:${port}/monitor`,
      maxConnections: 1,
      connectTimeoutSeconds: 3,
    }),
  );
  return {
    ...stack,
    shardDbs: [stack.db, ...others],
    async down() {
      await Promise.all(others.map((db) => db.close({ timeoutSeconds: 5 })));
      await stack.down();
    },
  };
}

/**
 * `up -d --no-build` of `files` (those that exist; testDbComposeFile after them) under a
 * project name of its own, with a random bootstrap key and the edge on a free port; waits for
 * the edge to answer an authenticated request.
 */
async function upComposeStack(o: {
  files: string[];
  env: Record<string, string>;
  dbUrl: string;
  upTimeoutMs: number;
}): Promise<{
  stack: ComposeStack;
  run: (args: string[], timeoutMs: number) => ReturnType<typeof runCommand>;
}> {
  const compose = composeCommand();
  const files = o.files.filter((file) => existsSync(join(repoRoot, file)));
  files.push(testDbComposeFile);
  const port = await getFreePort();
  const bootstrapKey = `mon_compose_${randomBytes(16).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...o.env,
    COMPOSE_PROJECT_NAME: `monitor-test-${randomBytes(3).toString('hex')}`,
    MONITOR_PORT: String(port),
    MONITOR_BOOTSTRAP_API_KEY: bootstrapKey,
  };
  const run = (args: string[], timeoutMs: number) =>
    runCommand([...compose, ...files.flatMap((file) => ['-f', file]), ...args], env, timeoutMs);
  const down = async () => {
    const result = await run(['down', '-v', '--remove-orphans'], 180_000);
    if (result.code !== 0)
      throw new Error(`compose down failed (${result.code}):\n${result.output}`);
  };

  const baseUrl = `http://127.0.0.1:${port}`;
  let db: Database | undefined;
  try {
    const up = await run(['up', '-d', '--no-build'], o.upTimeoutMs);
    if (up.code !== 0) throw new Error(`compose up failed (${up.code}):\n${up.output}`);
    db = createDatabase({ url: o.dbUrl, maxConnections: 2, connectTimeoutSeconds: 3 });
    // The edge starts once gateway and api are healthy; the first requests may still race it.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const status = await fetch(`${baseUrl}/api/v1/services`, {
        headers: { 'x-api-key': bootstrapKey },
      }).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200) break;
      if (Date.now() > deadline) throw new Error(`the edge answered ${status} for 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } catch (error) {
    const logs = await run(['logs', '--no-color', '--tail', '40'], 60_000);
    await db?.close();
    await down();
    throw new Error(`${(error as Error).message}\n${logs.output.slice(-20_000)}`, {
      cause: error,
    });
  }
  const pool = db;
  return {
    run,
    stack: {
      baseUrl,
      ingestUrl: baseUrl,
      apiUrl: baseUrl,
      db: pool,
      bootstrapKey,
      async down() {
        await pool.close({ timeoutSeconds: 5 });
        await down();
      },
    },
  };
}

function runCommand(
  command: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const [program = 'docker', ...args] = command;
    const child = spawn(program, args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
