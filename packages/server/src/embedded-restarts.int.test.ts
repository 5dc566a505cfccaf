// @services postgres
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ApiRequest } from '@monitor/testkit/builders';
import { buildAlertRuleCreateRequest, createApiCall, waitFor } from '@monitor/testkit/builders';
import { postIngest } from './testing/ingest-client.js';
import type { MonitorStack } from './testing/monitor-stack.js';
import { createMonitorStack } from './testing/monitor-stack.js';
import type { RoleProcess } from './testing/role-process.js';
import { startRoleProcess } from './testing/role-process.js';

const key = `mon_test_${randomBytes(16).toString('hex')}`;
let stack: MonitorStack | undefined;

const processes: RoleProcess[] = [];
// As root the embedded server runs as `postgres`, which must be able to enter the directory.
const dataDir = mkdtempSync(join(tmpdir(), 'monitor-embedded-restarts-'));
chmodSync(dataDir, 0o755);

afterAll(async () => {
  await stack?.stop();
  await Promise.all(processes.map((proc) => proc.stop()));
  rmSync(dataDir, { recursive: true, force: true });
});

/** The body of a 2xx answer of the process at `baseUrl`. */
async function api<T>(baseUrl: string, path: string, request: ApiRequest = {}): Promise<T> {
  const reply = await createApiCall({ baseUrl, key })<T>(path, request);
  expect(reply.status, `${path} answered ${reply.status}`).toBeLessThan(300);
  return reply.body;
}

/** A counter of the process's /metrics, 0 when it has no sample yet. */
async function counter(baseUrl: string, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find((each) => each.startsWith(`${name}{`) && each.includes(labels));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

/**
 * The embedded default (every role in one process, the in-process bus) keeps its promise across
 * restarts: its bus lives in memory, but a 200 means stored and evaluated, and a new process
 * never takes its own records for replays of the offsets an earlier one stored.
 */
describe('the embedded mode across restarts', () => {
  it('stores, lists and evaluates every acknowledged sample over three clean and SIGKILL restarts', async () => {
    stack = await createMonitorStack(
      'embedded_restarts',
      { MONITOR_BOOTSTRAP_API_KEY: key, EVALUATOR_RULE_POLL_MS: '600000' },
      { bus: 'in-process' },
    );
    let all: RoleProcess = await stack.start('all');
    await api(all.baseUrl, '/api/v1/alerts/rules', {
      method: 'POST',
      body: buildAlertRuleCreateRequest({ severity: 'info' }),
    });

    const acknowledged = new Set<string>();
    const breaching = new Set<string>();
    const baseMs = Date.now() - 10 * 60_000;
    let sent = 0;
    /** 20 new hosts × 10 samples each, over 4 concurrent clients; every host's last sample breaches. */
    async function ingestRound(round: number): Promise<void> {
      const hosts = Array.from({ length: 20 }, (_, i) => `r${round}-host-${i}`);
      let next = 0;
      const client = async () => {
        for (let i = next++; i < hosts.length * 10; i = next++) {
          const host = hosts[i % hosts.length]!;
          const sample = Math.floor(i / hosts.length);
          const timestamp = new Date(baseMs + round * 60_000 + sample * 1000).toISOString();
          const cpu = sample === 9 && i % 2 === 0 ? 95 : 10;
          const result = await postIngest(
            all.baseUrl,
            { host, timestamp, metrics: { cpu_percent: cpu } },
            { key },
          );
          sent++;
          expect(result.status).toBe(200);
          acknowledged.add(`${host}|${timestamp}`);
          if (cpu > 90) breaching.add(host);
        }
      };
      await Promise.all(Array.from({ length: 4 }, client));
    }

    await ingestRound(0);
    for (const [round, stop] of [
      [1, 'clean'],
      [2, 'kill'],
      [3, 'clean'],
      [4, 'kill'],
    ] as const) {
      if (stop === 'clean') expect(await all.stop()).toBe(0);
      else await all.kill();
      all = await stack.start('all');
      await ingestRound(round);
      expect(await counter(all.baseUrl, 'evaluator_records_skipped_total', 'replayed')).toBe(0);
    }

    // A 200 meant stored: every acknowledged sample once, nothing else.
    const rows = await stack.db.sql<{ host: string; time: Date }[]>`
      select v.name as host, timestamptz 'epoch' + s.time_ms * interval '1 millisecond' as time
      from raw_samples(array(select id from series), 0, ${Date.UTC(9999, 0, 1)}) s
      join series r on r.id = s.series_id join services v on v.id = r.service_id`;
    const stored = rows.map((row) => `${row.host}|${row.time.toISOString()}`);
    expect(sent).toBe(5 * 200);
    expect(stored).toHaveLength(acknowledged.size);
    expect(new Set(stored)).toEqual(acknowledged);

    // Listed and evaluated, including the hosts first seen after each restart.
    const listed = await api<{ pagination: { total: number } }>(all.baseUrl, '/api/v1/services');
    expect(listed.pagination.total).toBe(5 * 20);
    const alerts = await waitFor(
      async () => {
        const page = await api<{ alerts: { host: string }[] }>(
          all.baseUrl,
          '/api/v1/alerts?limit=100',
        );
        return page.alerts.length >= breaching.size ? page.alerts : undefined;
      },
      30_000,
      'an alert for every breaching host',
    );
    expect(new Set(alerts.map((alert) => alert.host))).toEqual(breaching);
    expect(alerts).toHaveLength(breaching.size);
  });
});

describe("npm start's embedded PostgreSQL", () => {
  it('starts again after the monitor process was killed, with everything it acknowledged', async () => {
    const env = { MONITOR_DATA_DIR: dataDir, MONITOR_BOOTSTRAP_API_KEY: key };
    const start = async () => {
      const proc = await startRoleProcess('all', env);
      processes.push(proc);
      return proc;
    };
    let all = await start();
    for (const [i, stop] of [
      [0, 'kill'],
      [1, 'kill'],
      [2, 'clean'],
    ] as const) {
      const ingest = await postIngest(
        all.baseUrl,
        { host: `crash-${i}`, metrics: { cpu_percent: i } },
        { key },
      );
      expect(ingest.status).toBe(200);
      // SIGKILL leaves the monitor's PostgreSQL running on the data directory.
      if (stop === 'kill') await all.kill();
      else expect(await all.stop()).toBe(0);
      all = await start();
    }
    const listed = await api<{ services: { name: string }[] }>(all.baseUrl, '/api/v1/services');
    expect(listed.services.map((service) => service.name)).toEqual([
      'crash-0',
      'crash-1',
      'crash-2',
    ]);
    expect(await all.stop()).toBe(0);
  });
});
