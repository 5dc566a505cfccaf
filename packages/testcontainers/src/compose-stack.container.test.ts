import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  findSchemathesis,
  getFreePort,
  schemathesisInstallCommand,
  schemathesisVersion,
} from '@monitor/testkit';

/**
 * The distributed stack as `docker compose up -d` runs it (docker-compose.yml, plus the
 * docker-compose.override.yml of deploy/build-local-images.sh when there is one), reached only
 * through the edge on 127.0.0.1:$MONITOR_PORT: every role in its container, Kafka, PostgreSQL and
 * Redis in theirs. The images must be built (`docker compose build`); the test brings the stack
 * up under a project name of its own and takes it down with its volumes, whatever happens.
 */

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const key = `mon_compose_${randomBytes(16).toString('hex')}`;
const project = `monitor-test-${randomBytes(3).toString('hex')}`;
const upTimeoutMs = 600_000;

let baseUrl = '';
let env: NodeJS.ProcessEnv = {};
let compose: string[] = [];

/** `docker compose` when the CLI has the plugin, else Debian's `docker-compose` (v1.29). */
function composeCommand(): string[] {
  const plugin = spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' });
  if (plugin.status === 0) return ['docker', 'compose'];
  const v1 = spawnSync('docker-compose', ['version'], { stdio: 'ignore' });
  if (v1.status === 0) return ['docker-compose'];
  throw new Error('neither `docker compose` nor `docker-compose` runs here');
}

function run(args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const [command = 'docker', ...rest] = [...compose, ...args];
    const child = spawn(command, rest, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
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

async function api(path: string, init: RequestInit = {}): Promise<Response> {
  return await fetch(`${baseUrl}${path}`, {
    ...init,
    headers: { 'x-api-key': key, 'content-type': 'application/json', ...init.headers },
  });
}

beforeAll(async () => {
  compose = composeCommand();
  const port = await getFreePort();
  baseUrl = `http://127.0.0.1:${port}`;
  env = {
    ...process.env,
    COMPOSE_PROJECT_NAME: project,
    MONITOR_PORT: String(port),
    MONITOR_BOOTSTRAP_API_KEY: key,
  };
  const up = await run(['up', '-d', '--no-build'], upTimeoutMs);
  if (up.code !== 0) {
    const logs = await run(['logs', '--no-color', '--tail', '40'], 60_000);
    throw new Error(`compose up failed (${up.code}):\n${up.output}\n${logs.output.slice(-20_000)}`);
  }
  // The edge starts once gateway and api are healthy; the first requests may still race it.
  await vi.waitFor(
    async () => {
      expect((await api('/api/v1/services')).status).toBe(200);
    },
    { timeout: 60_000, interval: 500 },
  );
}, upTimeoutMs + 120_000);

afterAll(async () => {
  if (compose.length === 0) return;
  const down = await run(['down', '-v', '--remove-orphans'], 180_000);
  if (down.code !== 0) throw new Error(`compose down failed (${down.code}):\n${down.output}`);
}, 200_000);

describe('the compose stack behind its edge', () => {
  it('serves the web console at /', async () => {
    const res = await fetch(`${baseUrl}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toMatch(/<script[^>]+src="\/console\/assets\//);
  });

  it('lists a host sent to the gateway once the writer stored it (gateway, Kafka, writer, PostgreSQL, api)', async () => {
    const host = `compose-${randomBytes(4).toString('hex')}`;
    const ingest = await api('/api/v1/ingest', {
      method: 'POST',
      body: JSON.stringify({ host, metrics: { cpu_percent: 12.5, memory_percent: 40 } }),
    });
    expect(ingest.status).toBe(200);
    expect(await ingest.json()).toEqual({ status: 'ok', events_accepted: 2 });
    await vi.waitFor(
      async () => {
        const body = (await (await api('/api/v1/services')).json()) as {
          services: { name: string }[];
        };
        expect(body.services.map((service) => service.name)).toContain(host);
      },
      { timeout: 60_000, interval: 500 },
    );
  });

  it('answers a request without a key 401, and a bad ingest 422 naming the field, as problem+json', async () => {
    const anonymous = await fetch(`${baseUrl}/api/v1/services`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-type')).toMatch(/^application\/problem\+json/);

    const bad = await api('/api/v1/ingest', {
      method: 'POST',
      body: JSON.stringify({ host: 'web-1', metrics: { cpu_percent: 'high' } }),
    });
    expect(bad.status).toBe(422);
    expect(bad.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(JSON.stringify(await bad.json())).toContain('cpu_percent');
  });

  it(`passes schemathesis ${schemathesisVersion} over every operation of the served document`, async () => {
    const schemathesis = findSchemathesis();
    if (schemathesis === undefined) {
      throw new Error(
        `schemathesis ${schemathesisVersion} is not installed: run \`${schemathesisInstallCommand}\``,
      );
    }
    const workDir = await mkdtemp(join(tmpdir(), 'monitor-compose-schemathesis-'));
    try {
      const junit = join(workDir, 'junit.xml');
      const result = await new Promise<{ code: number | null; output: string }>(
        (resolve, reject) => {
          const child = spawn(
            schemathesis.command,
            [
              ...schemathesis.args,
              '--no-color',
              'run',
              `${baseUrl}/api/v1/openapi.json`,
              '--url',
              baseUrl,
              '--header',
              `X-API-Key: ${key}`,
              '--checks',
              'not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance',
              '--seed',
              '20261124',
              '--max-examples',
              '10',
              '--workers',
              '1',
              '--no-shrink',
              '--generation-database',
              'none',
              '--request-timeout',
              '10',
              '--report',
              'junit',
              '--report-junit-path',
              junit,
            ],
            {
              cwd: workDir,
              env: { ...process.env, NO_COLOR: '1', PYTHONUNBUFFERED: '1' },
              stdio: ['ignore', 'pipe', 'pipe'],
            },
          );
          let output = '';
          child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.once('error', reject);
          child.once('exit', (code) => resolve({ code, output }));
        },
      );
      expect(result.code, `schemathesis failed:\n${result.output.slice(-20_000)}`).toBe(0);
      const document = (await (await api('/api/v1/openapi.json')).json()) as {
        paths: Record<string, object>;
      };
      const operations = Object.values(document.paths).flatMap((item) => Object.keys(item)).length;
      const report = await readFile(junit, 'utf8');
      expect(report.match(/<testcase /g)?.length ?? 0).toBeGreaterThanOrEqual(operations);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }, 400_000);
});
