import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '@monitor/db';
import { createDatabase, createSampleStore, defaultOrganizationId, migrate } from '@monitor/db';
import type { ReplicatedPostgres } from '@monitor/testkit';
import { startReplicatedPostgres } from '@monitor/testkit';
import {
  buildAlertRuleCreateRequest,
  buildHostSample,
  createApiCall,
} from '@monitor/testkit/builders';
import type { RoleProcess } from './testing/role-process.js';
import { startRoleProcess } from './testing/role-process.js';

const key = 'replica-reads-key-0123456789';
const host = 'replica-1';

/**
 * DATABASE_READ_URL on a real streaming standby (issue 42, item 4): PromQL reads there and may
 * lag by what the standby has not replayed yet; what the API writes (a rule) reads back from
 * the primary at once; a standby that is gone fails those reads with a 503 and Retry-After,
 * while the rest of the API serves on.
 */
describe('the api role reading samples from a standby', () => {
  let pair: ReplicatedPostgres;
  let primary: Database;
  let api: RoleProcess;
  const t0 = Math.floor(Date.now() / 1000) * 1000 - 60_000;

  beforeAll(async () => {
    pair = await startReplicatedPostgres({ timescale: true, synchronous: false });
    primary = createDatabase({ url: pair.primary.url, maxConnections: 2 });
    await migrate(primary, { mode: 'timescale' });
    api = await startRoleProcess('api', {
      DATABASE_URL: pair.primary.url,
      DATABASE_READ_URL: pair.standby.url,
      MONITOR_BOOTSTRAP_API_KEY: key,
      LOG_LEVEL: 'warn',
    });
  }, 180_000);

  afterAll(async () => {
    await api?.stop();
    await primary?.close({ timeoutSeconds: 1 });
    await pair?.stop();
  });

  const writeCpu = (timeMs: number, value: number) =>
    createSampleStore(primary).writeBatch({
      samples: [
        buildHostSample({
          orgId: defaultOrganizationId,
          host,
          timeMs,
          metrics: { cpu_percent: value },
        }),
      ],
    });

  const call = createApiCall({ baseUrl: () => api.baseUrl, key });

  const cpuAt = async (timeMs: number): Promise<{ status: number; value?: string }> => {
    const query = new URLSearchParams({
      query: `cpu_percent{host="${host}"}`,
      time: String(timeMs / 1000),
    });
    const { status, body } = await call<{ data?: { result: { value: [number, string] }[] } }>(
      `/prometheus/api/v1/query?${query.toString()}`,
    );
    const value = body.data?.result[0]?.value[1];
    return value === undefined ? { status } : { status, value };
  };

  const standby = async (statement: string) => {
    const sql = createDatabase({ url: pair.standby.url, maxConnections: 1 });
    try {
      await sql.sql.unsafe(statement);
    } finally {
      await sql.close();
    }
  };

  it('answers from the standby, lagging by what it has not replayed, and from the primary for what the API wrote', async () => {
    await writeCpu(t0, 1);
    await expect.poll(() => cpuAt(t0), { timeout: 30_000 }).toEqual({ status: 200, value: '1' });

    // The standby stops replaying: a sample the primary stores now is not read.
    await standby('select pg_wal_replay_pause()');
    await writeCpu(t0 + 10_000, 2);
    const [stored] = await primary.sql<{ n: number }[]>`select count(*)::int as n from samples`;
    expect(stored?.n).toBe(2);
    expect(await cpuAt(t0 + 10_000)).toEqual({ status: 200, value: '1' });

    // A rule the API creates reads back at once: rules are read on the primary.
    const created = await call('/api/v1/alerts/rules', {
      method: 'POST',
      body: buildAlertRuleCreateRequest({ severity: 'warning' }),
    });
    expect(created.status).toBe(201);
    const listed = await call<{ rules: { name: string }[] }>('/api/v1/alerts/rules');
    expect(listed.body.rules.map((rule) => rule.name)).toEqual(['cpu high']);

    await standby('select pg_wal_replay_resume()');
    await expect
      .poll(() => cpuAt(t0 + 10_000), { timeout: 30_000 })
      .toEqual({ status: 200, value: '2' });
  });

  it('answers 503 with Retry-After for samples while the standby is gone, and serves the rest', async () => {
    await pair.standby.kill();
    const samples = await call('/prometheus/api/v1/query?query=cpu_percent');
    expect(samples.status).toBe(503);
    expect(Number(samples.headers.get('retry-after'))).toBeGreaterThan(0);
    const rules = await call('/api/v1/alerts/rules');
    expect(rules.status).toBe(200);
    expect(api.ended()).toBeUndefined();
  });
});
