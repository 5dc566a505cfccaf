// @services postgres kafka
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '@monitor/db';
import { ruleGroupPartition } from '@monitor/evaluator';
import { createApiCall, waitFor } from '@monitor/testkit/builders';
import { newOrganization } from './testing/api-target.js';
import { postIngest } from './testing/ingest-client.js';
import type { LocalApiTarget, MonitorStack } from './testing/monitor-stack.js';
import { createMonitorStack, startLocalApiTarget } from './testing/monitor-stack.js';
import type { RoleProcess } from './testing/role-process.js';

const intervalMs = 2_000;

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(cleanups.map((cleanup) => cleanup()));
});

async function postGroup(apiUrl: string, key: string, namespace: string, yaml: string) {
  const rules = createApiCall({ baseUrl: `${apiUrl}/prometheus/config/v1/rules` });
  const posted = await rules(`/${namespace}`, {
    method: 'POST',
    bearer: key,
    raw: { data: yaml, contentType: 'application/yaml' },
  });
  expect(posted.status).toBe(202);
}

async function ingestTemperature(ingestUrl: string, key: string, value: number): Promise<void> {
  const result = await postIngest(
    ingestUrl,
    [{ host: 'web-1', timestamp: new Date().toISOString(), metrics: { temp: value } }],
    { key },
  );
  expect(result.status).toBe(200);
}

type StateRow = { name: string; last_evaluation_ms: string; state: GroupState };
type GroupState = {
  rules: Record<
    string,
    { alerts: { state: string; activeAtMs: number; firedAtMs: number | null }[] }
  >;
};

async function groupStates(db: Database, orgId: string): Promise<StateRow[]> {
  return db.sql<StateRow[]>`
    select name, last_evaluation_ms::text as last_evaluation_ms, state
    from prometheus_rule_group_states where org_id = ${orgId} order by name`;
}

/** The alerts of a group's one alerting rule, as persisted. */
function alertsOf(
  row: StateRow,
): { state: string; activeAtMs: number; firedAtMs: number | null }[] {
  return Object.values(row.state.rules).flatMap((rule) => rule.alerts);
}

/** The org's alerts of rule files, with how many `fired` and `resolved` messages each has. */
async function ruleFileAlerts(
  db: Database,
  orgId: string,
): Promise<{ rule_id: string; status: string; fired: number; resolved: number }[]> {
  return db.sql`
    select a.rule_id, a.status,
      (select count(*)::int from notifications n
        where n.alert_id = a.id and n.transition = 'fired') as fired,
      (select count(*)::int from notifications n
        where n.alert_id = a.id and n.transition = 'resolved') as resolved
    from alerts a where a.org_id = ${orgId} and a.condition is null
    order by a.rule_id`;
}

async function evaluationsOf(proc: RoleProcess): Promise<number> {
  const text = await (await fetch(`${proc.baseUrl}/metrics`)).text();
  const match = /^rule_group_evaluations_total(?:\{[^}]*\})? (\d+)/m.exec(text);
  return match === null ? 0 : Number(match[1]);
}

describe('Prometheus rule groups on schedule', () => {
  it('evaluates a group at its interval embedded, its recorded series readable by PromQL', async () => {
    const target: LocalApiTarget = await startLocalApiTarget('rule_groups', 'embedded', {
      RULE_EVALUATION_INTERVAL_SECONDS: String(intervalMs / 1000),
    });
    cleanups.push(() => target.stop());
    const { orgId, key } = await newOrganization(target.db);
    await ingestTemperature(target.ingestUrl, key, 21);
    await postGroup(
      target.apiUrl,
      key,
      'thermal',
      [
        'name: doubled',
        'rules:',
        '- record: host:temp:doubled',
        '  expr: temp * 2',
        '- alert: Warm',
        // Aggregated: its ALERTS series belong to no host. (Series with a host's labels other
        // than its /ingest tags would become that host's tags in the services projection.)
        '  expr: max(temp) > 20',
        '  labels: { severity: page }',
        '  annotations: { summary: "at {{ $value }}" }',
      ].join('\n'),
    );
    // Three evaluations in a row, a slot apart.
    const seen = new Set<number>();
    await waitFor(
      async () => {
        const [row] = await groupStates(target.db, orgId);
        if (row !== undefined) seen.add(Number(row.last_evaluation_ms));
        return seen.size >= 3 ? true : undefined;
      },
      20_000,
      'three evaluations of the group',
    );
    const times = [...seen].sort((a, b) => a - b);
    for (const time of times.slice(1)) expect((time - times[0]!) % intervalMs).toBe(0);
    // Each waited for the writer to store what was accepted before its slot, and did not wait in vain.
    const metrics = await (await fetch(`${target.apiUrl}/metrics`)).text();
    expect(metrics).toMatch(/^rule_group_write_waits_expired_total(?:\{[^}]*\})? 0$/m);

    const params = new URLSearchParams({
      query: 'host:temp:doubled',
      time: String(times[2]! / 1000),
    });
    const prometheus = createApiCall({ baseUrl: `${target.apiUrl}/prometheus/api/v1` });
    const answer = await waitFor(
      async () => {
        const { body } = await prometheus<{
          data: { result: { metric: Record<string, string>; value: [number, string] }[] };
        }>(`/query?${params.toString()}`, { bearer: key });
        return body.data.result.length > 0 ? body.data.result : undefined;
      },
      10_000,
      'the recorded series',
    );
    expect(answer).toEqual([
      { metric: { __name__: 'host:temp:doubled', host: 'web-1' }, value: [times[2]! / 1000, '42'] },
    ]);

    // The rules and alerts lists, as Prometheus writes them, from the saved state.
    const get = async (path: string): Promise<unknown> => {
      const reply = await prometheus<{ data: unknown }>(`/${path}`, { bearer: key });
      expect(reply.status).toBe(200);
      return reply.body.data;
    };
    const warm = {
      labels: { alertname: 'Warm', severity: 'page' },
      annotations: { summary: 'at 21' },
      state: 'firing',
      activeAt: expect.any(String) as unknown,
      value: '2.1e+01',
    };
    expect(await get('alerts')).toEqual({ alerts: [warm] });
    expect(await get('rules')).toEqual({
      groups: [
        expect.objectContaining({
          name: 'doubled',
          file: 'thermal',
          interval: intervalMs / 1000,
          rules: [
            expect.objectContaining({ name: 'host:temp:doubled', health: 'ok', type: 'recording' }),
            expect.objectContaining({ name: 'Warm', state: 'firing', alerts: [warm] }),
          ],
        }),
      ],
    });
  });

  it('evaluates a slot only once the samples accepted before it are stored, however late the writer', async () => {
    const stack: MonitorStack = await createMonitorStack('rule_groups_fence', {
      RULE_EVALUATION_INTERVAL_SECONDS: String(intervalMs / 1000),
      RULE_GROUP_WRITE_WAIT_MS: '120000',
    });
    cleanups.push(() => stack.stop());
    const [gateway, api, writer, evaluator] = await Promise.all([
      stack.start('gateway'),
      stack.start('api'),
      stack.start('writer'),
      stack.start('evaluator'),
    ]);
    const { key } = await newOrganization(stack.db);
    await ingestTemperature(gateway.baseUrl, key, 1);
    await postGroup(
      api.baseUrl,
      key,
      'thermal',
      'name: doubled\nrules:\n- record: host:temp:doubled\n  expr: temp * 2\n',
    );
    const prometheus = createApiCall({ baseUrl: `${api.baseUrl}/prometheus/api/v1` });
    type Matrix = { data: { result: { values: [number, string][] }[] } };
    const doubled = async (fromMs: number): Promise<string[]> => {
      const params = new URLSearchParams({
        query: 'host:temp:doubled',
        start: String(fromMs / 1000),
        end: String(Date.now() / 1000),
        step: String(intervalMs / 1000 / 4),
      });
      const { body } = await prometheus<Matrix>(`/query_range?${params.toString()}`, {
        bearer: key,
      });
      return body.data.result.flatMap((series) => series.values.map(([, value]) => value));
    };
    await waitFor(
      async () => ((await doubled(Date.now() - 60_000)).includes('2') ? true : undefined),
      20_000,
      'the first recorded sample',
    );

    // The writer stops: a new temperature is accepted (by Kafka) but not stored.
    await writer.stop();
    await ingestTemperature(gateway.baseUrl, key, 5);
    const acceptedAtMs = Date.now();
    // Slots pass meanwhile; each evaluation waits for the writer rather than read the old 1.
    await new Promise((resolve) => setTimeout(resolve, 3 * intervalMs));
    const restarted = await stack.start('writer');
    // From the first slot after the sample was accepted, every recorded value is 2 × 5.
    const fromMs = acceptedAtMs + intervalMs;
    const values = await waitFor(
      async () => {
        const recorded = await doubled(fromMs);
        return recorded.length > 4 * 3 ? recorded : undefined;
      },
      30_000,
      'recorded samples after the writer came back',
    );
    expect(new Set(values)).toEqual(new Set(['10']));
    const text = await (await fetch(`${evaluator.baseUrl}/metrics`)).text();
    expect(text).toMatch(/^rule_group_write_waits_expired_total(?:\{[^}]*\})? 0$/m);
    // Gone before the next test: the consumer groups `writer` and `evaluator` are shared by every
    // stack on the broker, and an evaluator of this stack's topic left in `evaluator` took the
    // next stack's partitions away from its evaluators (they never evaluated).
    await Promise.all([gateway, api, evaluator, restarted].map((proc) => proc.stop()));
  }, 120_000);

  it('moves groups to a joining evaluator and off a killed one, their pending alerts intact', async () => {
    const stack: MonitorStack = await createMonitorStack('rule_groups_failover', {
      RULE_EVALUATION_INTERVAL_SECONDS: String(intervalMs / 1000),
    });
    cleanups.push(() => stack.stop());
    const [gateway, api] = await Promise.all([
      stack.start('gateway'),
      stack.start('api'),
      stack.start('writer'),
    ]);
    const { orgId, key } = await newOrganization(stack.db);
    // An Alertmanager channel, so that firing queues a message (no notifier runs here).
    await stack.db.sql`
      insert into notification_channels (org_id, type, config)
      values (${orgId}, 'alertmanager', '{"urls":["http://alertmanager.invalid:9093"]}')`;
    // One group per partition of the samples topic: whichever the first evaluator loses, some
    // of its groups move.
    const names = new Map<number, string>();
    for (let i = 0; names.size < 6; i++) {
      const partition = ruleGroupPartition({ orgId, namespace: 'heat', name: `g${i}` }, 6);
      if (!names.has(partition)) names.set(partition, `g${i}`);
    }
    await ingestTemperature(gateway.baseUrl, key, 99);
    for (const name of names.values()) {
      await postGroup(
        api.baseUrl,
        key,
        'heat',
        `name: ${name}\nrules:\n- alert: Hot\n  expr: temp > 50\n  for: 30s\n`,
      );
    }
    // Each evaluation waits for the writer to store what was accepted before its slot: on a
    // loaded machine (CI runs this beside the other suites) that is seconds, not milliseconds.
    const first = await stack.start('evaluator');
    const pending = await waitFor(
      async () => {
        const rows = await groupStates(stack.db, orgId);
        const ok = rows.length === 6 && rows.every((row) => alertsOf(row)[0]?.state === 'pending');
        return ok ? rows : undefined;
      },
      60_000,
      'every group pending',
    );
    const activeAt = new Map(pending.map((row) => [row.name, alertsOf(row)[0]!.activeAtMs]));

    // A second evaluator joins: the groups split between the two.
    const second = await stack.start('evaluator');
    const before = await evaluationsOf(second);
    await waitFor(
      async () => ((await evaluationsOf(second)) > before + 3 ? true : undefined),
      60_000,
      'the second evaluator to evaluate groups',
    );
    const firstCount = await evaluationsOf(first);
    await waitFor(
      async () => ((await evaluationsOf(first)) > firstCount ? true : undefined),
      30_000,
      'the first evaluator to keep some groups',
    );
    // The first is killed while every alert is still pending; the second takes its groups.
    expect(
      (await groupStates(stack.db, orgId)).every((row) => alertsOf(row)[0]?.state === 'pending'),
    ).toBe(true);
    await first.kill();
    await ingestTemperature(gateway.baseUrl, key, 99);
    const firing = await waitFor(
      async () => {
        const rows = await groupStates(stack.db, orgId);
        return rows.every((row) => alertsOf(row)[0]?.state === 'firing') ? rows : undefined;
      },
      60_000,
      'every group firing',
    );
    // Each alert went on from its first pending evaluation: fired `for` after it, once.
    for (const row of firing) {
      const alerts = alertsOf(row);
      expect(alerts).toHaveLength(1);
      expect(alerts[0]!.activeAtMs).toBe(activeAt.get(row.name));
      expect(alerts[0]!.firedAtMs).toBe(activeAt.get(row.name)! + 30_000);
    }
    // Each is one active alert of its group's rule, notified once, whoever evaluated it.
    const once = { status: 'active', fired: 1, resolved: 0 };
    const stored = await waitFor(
      async () => {
        const rows = await ruleFileAlerts(stack.db, orgId);
        return rows.length === 6 ? rows : undefined;
      },
      10_000,
      'an alert per group',
    );
    expect(stored).toEqual(Array.from({ length: 6 }, () => expect.objectContaining(once)));
    expect(new Set(stored.map((row) => row.rule_id)).size).toBe(6);

    // A restart: the survivor stops, a new evaluator goes on from the persisted states.
    await second.stop();
    const stoppedAt = Math.max(...firing.map((row) => Number(row.last_evaluation_ms)));
    const third = await stack.start('evaluator');
    const resumed = await waitFor(
      async () => {
        const rows = await groupStates(stack.db, orgId);
        const on = rows.every((row) => Number(row.last_evaluation_ms) > stoppedAt + intervalMs);
        return on ? rows : undefined;
      },
      30_000,
      'the groups evaluated again after the restart',
    );
    expect(await evaluationsOf(third)).toBeGreaterThan(0);
    for (const row of resumed) {
      expect(alertsOf(row)).toEqual([
        expect.objectContaining({ state: 'firing', activeAtMs: activeAt.get(row.name) }),
      ]);
    }
    // Nothing fired again, nothing was lost, across the hand-overs and the restart.
    expect(await ruleFileAlerts(stack.db, orgId)).toEqual(stored);
  }, 240_000);
});
