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
 * of deploy/build-local-images.sh when there is one, as a plain `docker compose` reads it), with
 * the edge on a free 127.0.0.1 port and deploy/compose.test-db.yml publishing the database for
 * the suites' setup. The images must be built (`docker compose build`). Resolves once the edge
 * answers an authenticated request; on failure the stack is taken down and the error holds the
 * services' last log lines.
 */
export async function startComposeStack(
  options: { upTimeoutMs?: number } = {},
): Promise<ComposeStack> {
  const compose = composeCommand();
  const files = ['docker-compose.yml'];
  if (existsSync(join(repoRoot, 'docker-compose.override.yml'))) {
    files.push('docker-compose.override.yml');
  }
  files.push('deploy/compose.test-db.yml');
  const [port, dbPort] = [await getFreePort(), await getFreePort()];
  const bootstrapKey = `mon_compose_${randomBytes(16).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    COMPOSE_PROJECT_NAME: `monitor-test-${randomBytes(3).toString('hex')}`,
    MONITOR_PORT: String(port),
    MONITOR_TEST_DB_PORT: String(dbPort),
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
    const up = await run(['up', '-d', '--no-build'], options.upTimeoutMs ?? 600_000);
    if (up.code !== 0) throw new Error(`compose up failed (${up.code}):\n${up.output}`);
    db = createDatabase({
      url: `postgres://monitor:monitor@127.0.0.1:${dbPort}/monitor`,
      maxConnections: 2,
    });
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
    baseUrl,
    ingestUrl: baseUrl,
    apiUrl: baseUrl,
    db: pool,
    bootstrapKey,
    async down() {
      await pool.close();
      await down();
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
