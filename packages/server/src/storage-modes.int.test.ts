// @services postgres
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase } from '@monitor/db';
import { createTestDatabase, getFreePort, startRestartablePostgres } from '@monitor/testkit';
import type { TestDatabase } from '@monitor/testkit';
import { createApiCall } from '@monitor/testkit/builders';
import { serviceUrl } from '@monitor/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postIngest } from './testing/ingest-client.js';
import type { RoleProcess } from './testing/role-process.js';
import { runCommand, runMonitor, startRoleProcess } from './testing/role-process.js';

const key = `mon_test_${randomBytes(16).toString('hex')}`;
const processes: RoleProcess[] = [];
const databases: TestDatabase[] = [];
// As root the embedded server runs as `postgres`, which must be able to enter the directory.
const root = mkdtempSync(join(tmpdir(), 'monitor-storage-modes-'));
chmodSync(root, 0o755);

afterAll(async () => {
  await Promise.all(processes.map((proc) => proc.stop()));
  await Promise.all(databases.map((db) => db.drop()));
  rmSync(root, { recursive: true, force: true });
});

async function storageInfo(baseUrl: string): Promise<string | undefined> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return text.split('\n').find((line) => line.startsWith('monitor_storage_info{'));
}

async function start(env: Record<string, string>): Promise<RoleProcess> {
  const proc = await startRoleProcess('all', { MONITOR_BOOTSTRAP_API_KEY: key, ...env });
  processes.push(proc);
  return proc;
}

async function freshDatabase(): Promise<string> {
  const db = await createTestDatabase(serviceUrl('postgres'), 'storage_modes');
  databases.push(db);
  return db.url;
}

/** The hour up to the next full minute but one: fixed once, so two reads ask the same range. */
function lastHour(): { from: Date; to: Date } {
  const to = new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 60_000);
  return { from: new Date(to.getTime() - 3_600_000), to };
}

/** The service's cpu_usage over `window`, per minute, as the history endpoint answers it. */
async function history(
  baseUrl: string,
  services: { id: string; name: string }[],
  name: string,
  { from, to }: { from: Date; to: Date },
): Promise<{ points: unknown[] }> {
  const id = services.find((service) => service.name === name)?.id ?? '';
  const query = `metric=cpu_usage&from=${from.toISOString()}&to=${to.toISOString()}&step=1m`;
  const reply = await createApiCall({ baseUrl, key })<{ points: unknown[] }>(
    `/api/v1/services/${id}/metrics?${query}`,
  );
  expect(reply.status).toBe(200);
  return reply.body;
}

type LogLine = { level?: string; msg?: string; jobs?: number; settings?: unknown };

function logLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

/**
 * A PostgreSQL 15 with TimescaleDB installed but not preloaded: the state right after
 * installing Timescale's package, before `shared_preload_libraries` is set. The testkit's plain
 * PostgreSQL is exactly that on a machine with TimescaleDB (CI installs it).
 */
describe('a half-installed TimescaleDB', () => {
  beforeAll(async () => {
    const db = createDatabase({ url: serviceUrl('postgres'), maxConnections: 1 });
    try {
      const { timescaledb } = await db.capabilities();
      expect(timescaledb, 'the server has TimescaleDB installed, not preloaded').toMatchObject({
        available: true,
        preloaded: false,
      });
    } finally {
      await db.close();
    }
  });

  it('DATABASE_URL, auto: one warning naming shared_preload_libraries, then plain storage', async () => {
    const proc = await start({ DATABASE_URL: await freshDatabase() });
    const warnings = logLines(proc.output()).filter((line) => line.level === 'warn');
    expect(warnings.filter((line) => line.msg?.includes('shared_preload_libraries'))).toHaveLength(
      1,
    );
    expect(await storageInfo(proc.baseUrl)).toMatch(/engine="postgresql"/);
    const ingest = await postIngest(
      proc.baseUrl,
      {
        host: 'half-installed',
        timestamp: new Date().toISOString(),
        metrics: { cpu_usage: 1 },
      },
      { key },
    );
    expect(ingest.status).toBe(200);
  });

  it('DATABASE_URL, STORAGE_MODE=timescale: stops with that message and exit code 1', async () => {
    const result = await runMonitor(['all'], {
      DATABASE_URL: await freshDatabase(),
      STORAGE_MODE: 'timescale',
      MONITOR_BOOTSTRAP_API_KEY: key,
      PORT: String(await getFreePort()),
    });
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).toContain('shared_preload_libraries');
    expect(result.stdout + result.stderr).not.toContain('CONNECTION_CLOSED');
  });

  it('embedded, not preloaded (EMBEDDED_TIMESCALEDB=off), auto: the warning, then plain storage', async () => {
    const proc = await start({
      MONITOR_DATA_DIR: join(root, 'not-preloaded'),
      EMBEDDED_TIMESCALEDB: 'off',
    });
    const warnings = logLines(proc.output()).filter(
      (line) => line.level === 'warn' && line.msg?.includes('shared_preload_libraries'),
    );
    expect(warnings).toHaveLength(1);
    expect(await storageInfo(proc.baseUrl)).toMatch(/engine="postgresql"/);
    await proc.stop();
  });

  it('embedded, not preloaded, STORAGE_MODE=timescale: that message and exit code 1', async () => {
    const result = await runMonitor(['all'], {
      MONITOR_DATA_DIR: join(root, 'not-preloaded-explicit'),
      EMBEDDED_TIMESCALEDB: 'off',
      STORAGE_MODE: 'timescale',
      MONITOR_BOOTSTRAP_API_KEY: key,
      PORT: String(await getFreePort()),
    });
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).toContain('shared_preload_libraries');
  });
});

describe('the embedded default on a machine with TimescaleDB', () => {
  it('preloads it and stores samples in hypertables', async () => {
    const proc = await start({ MONITOR_DATA_DIR: join(root, 'default') });
    expect(await storageInfo(proc.baseUrl)).toMatch(/engine="timescaledb",version="2\.\d+\.\d+"/);
    expect(proc.output()).toContain('storage: TimescaleDB 2.');
    await proc.stop();
  });

  it('keeps a plain ./data working, with its data, and says what to do', async () => {
    const dataDir = join(root, 'plain-first');
    let proc = await start({ MONITOR_DATA_DIR: dataDir, EMBEDDED_TIMESCALEDB: 'off' });
    const ingest = await postIngest(
      proc.baseUrl,
      {
        host: 'kept',
        timestamp: new Date().toISOString(),
        metrics: { cpu_usage: 7 },
      },
      { key },
    );
    expect(ingest.status).toBe(200);
    expect(await proc.stop()).toBe(0);

    proc = await start({ MONITOR_DATA_DIR: dataDir });
    expect(await storageInfo(proc.baseUrl)).toMatch(/engine="postgresql"/);
    const note = logLines(proc.output()).find(
      (line) => line.level === 'warn' && line.msg?.includes('plain PostgreSQL storage'),
    );
    expect(note?.msg).toContain('TimescaleDB is available');
    const { body: services } = await createApiCall({ baseUrl: proc.baseUrl, key })<{
      services: { id: string; name: string }[];
    }>('/api/v1/services');
    expect(services.services.map((service) => service.name)).toContain('kept');
    const window = lastHour();
    const before = await history(proc.baseUrl, services.services, 'kept', window);
    expect(before.points.length).toBeGreaterThan(0);
    expect(await proc.stop()).toBe(0);

    // The command the note names moves it onto TimescaleDB, every row with it.
    const converted = JSON.parse(
      await runCommand(['storage', 'convert-to-timescaledb'], { MONITOR_DATA_DIR: dataDir }),
    ) as { mode: string; copied: { samples: number } };
    expect(converted).toMatchObject({ mode: 'timescale', copied: { samples: 1 } });
    proc = await start({ MONITOR_DATA_DIR: dataDir });
    expect(await storageInfo(proc.baseUrl)).toMatch(/engine="timescaledb"/);
    expect(await history(proc.baseUrl, services.services, 'kept', window)).toEqual(before);
    await proc.stop();
  });
});

/**
 * A user's own TimescaleDB: `monitor migrate` against a private server started with the worker
 * settings given, and the WARN lines it logs about them.
 */
async function workerWarnings(settings: string[]): Promise<LogLine[]> {
  const server = await startRestartablePostgres({ timescale: true, settings });
  try {
    const { code, stdout, stderr } = await runMonitor(['migrate'], { DATABASE_URL: server.url });
    expect(code, stdout + stderr).toBe(0);
    return logLines(stdout + stderr).filter(
      (line) => line.level === 'warn' && line.settings !== undefined,
    );
  } finally {
    await server.destroy();
  }
}

describe('a TimescaleDB whose worker settings cannot run the storage jobs', () => {
  it("warns once at migrate, naming max_worker_processes, PostgreSQL's stock 8 and the value needed", async () => {
    const warnings = await workerWarnings(['max_worker_processes=8']);
    expect(warnings).toEqual([
      expect.objectContaining({
        msg: expect.stringContaining('too few workers'),
        jobs: 14,
        settings: [{ setting: 'max_worker_processes', value: 8, needed: 25 }],
      }),
    ]);
  });

  it('names timescaledb.max_background_workers too when it cannot hold every job', async () => {
    const warnings = await workerWarnings([
      'max_worker_processes=8',
      'timescaledb.max_background_workers=8',
    ]);
    expect(warnings.map((line) => line.settings)).toEqual([
      [
        { setting: 'max_worker_processes', value: 8, needed: 25 },
        { setting: 'timescaledb.max_background_workers', value: 8, needed: 16 },
      ],
    ]);
  });

  it('says nothing with the settings the servers we start have (26 and 18)', async () => {
    expect(await workerWarnings([])).toEqual([]);
  });
});
