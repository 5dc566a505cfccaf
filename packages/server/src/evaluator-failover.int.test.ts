// @services postgres kafka
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { buildAlertRuleCreateRequest, createApiCall, waitFor } from '@monitor/testkit/builders';
import { defaultOrganizationId } from '@monitor/db';
import { partitionForKey } from '@monitor/bus';
import { postIngest } from './testing/ingest-client.js';
import type { MonitorStack } from './testing/monitor-stack.js';
import { createMonitorStack, evaluatorRulesLoaded } from './testing/monitor-stack.js';
import type { ExpectedAlert } from './testing/expected-alerts.js';
import { expectedAlerts } from './testing/expected-alerts.js';

const minuteMs = 60_000;
const key = `mon_test_${randomBytes(16).toString('hex')}`;
const hosts = 24;
const rounds = 14;
const threshold = 85;
const durationMinutes = 2;

const stacks: MonitorStack[] = [];

afterAll(async () => {
  await Promise.all(stacks.map((stack) => stack.stop()));
});

/** Host names whose samples land on each of the topic's partitions (key `org_id:host`). */
function hostsCoveringPartitions(partitions: number): string[] {
  const byPartition = new Map<number, string>();
  for (let i = 0; byPartition.size < partitions; i += 1) {
    const host = `window-${i}`;
    const partition = partitionForKey(`${defaultOrganizationId}:${host}`, partitions);
    if (!byPartition.has(partition)) byPartition.set(partition, host);
  }
  return [...byPartition.values()];
}

/** A small deterministic generator, so a failure can be replayed. */
function seededValues(seed: number): number[] {
  let state = seed;
  return Array.from({ length: rounds }, () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return 70 + (state % 30);
  });
}

describe('evaluator failover', () => {
  it('fires every expected alert exactly once when one of two evaluators is killed mid-stream', async () => {
    const stack = await createMonitorStack('failover', { MONITOR_BOOTSTRAP_API_KEY: key });
    stacks.push(stack);
    const { db, start } = stack;
    const [gateway, api] = await Promise.all([start('gateway'), start('api')]);
    let first = await start('evaluator');
    const second = await start('evaluator');

    const rule = await createApiCall({ baseUrl: api.baseUrl, key })('/api/v1/alerts/rules', {
      method: 'POST',
      body: buildAlertRuleCreateRequest({
        name: 'cpu over 85',
        threshold,
        duration_minutes: durationMinutes,
        severity: 'info',
      }),
    });
    expect(rule.status).toBe(201);
    for (const evaluator of [first, second]) await evaluatorRulesLoaded(evaluator.baseUrl, 1);

    const baseMs = Math.floor(Date.now() / minuteMs) * minuteMs - 9 * minuteMs;
    const series = new Map<string, number[]>();
    for (let h = 0; h < hosts; h += 1) series.set(`host-${h}`, seededValues(h + 1));
    // One host per partition whose window opens in round 3 and fires in round 5, after the kill
    // below: whichever partitions the killed evaluator owned, one of its windows spans the kill.
    const spanning = hostsCoveringPartitions(6);
    for (const host of spanning)
      series.set(host, [70, 70, 70, 99, 99, 99, 99, 60, 70, 70, 70, 70, 70, 70]);
    const expected = [...series].flatMap(([host, values]) =>
      expectedAlerts(
        host,
        values.map((value, round) => ({ timeMs: baseMs + round * minuteMs, value })),
        { threshold, durationMinutes },
      ),
    );

    for (let round = 0; round < rounds; round += 1) {
      const payloads = [...series].map(([host, values]) => ({
        host,
        timestamp: new Date(baseMs + round * minuteMs).toISOString(),
        metrics: { cpu_percent: values[round] },
      }));
      const result = await postIngest(gateway.baseUrl, payloads, { key });
      expect(result.status).toBe(200);
      if (round === 4) {
        // Killed only once it has evaluated samples of its own partitions: it holds windows.
        const evaluator = first;
        await waitFor(
          async () => {
            const text = await (await fetch(`${evaluator.baseUrl}/metrics`)).text();
            const match = /^evaluator_evaluations_total(?:\{[^}]*\})? (\d+)/m.exec(text);
            return match !== null && Number(match[1]) > 0 ? true : undefined;
          },
          10_000,
          'the first evaluator to evaluate samples',
        );
        await first.kill();
      }
      if (round === 9) first = await start('evaluator');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    type Row = { host: string; started_at: Date; fired_at: Date; resolved_at: Date | null };
    const expectedResolved = expected.filter((alert) => alert.resolvedAt !== null).length;
    const rows = await waitFor(
      async () => {
        const found = await db.sql<Row[]>`
          select host, started_at, fired_at, resolved_at from alerts order by host, fired_at
        `;
        const resolvedCount = found.filter((row) => row.resolved_at !== null).length;
        return found.length >= expected.length && resolvedCount >= expectedResolved
          ? found
          : undefined;
      },
      60_000,
      `${expected.length} alerts`,
    );
    // Give a late duplicate the chance to show up before comparing.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const final = await db.sql<Row[]>`
      select host, started_at, fired_at, resolved_at from alerts order by host, fired_at
    `;
    expect(final).toHaveLength(rows.length);
    const actual = final.map((row) => ({
      host: row.host,
      startedAt: row.started_at.getTime(),
      firedAt: row.fired_at.getTime(),
      resolvedAt: row.resolved_at?.getTime() ?? null,
    }));
    const order = (a: ExpectedAlert, b: ExpectedAlert) =>
      a.host.localeCompare(b.host) || a.firedAt - b.firedAt;
    expect(actual.sort(order)).toEqual([...expected].sort(order));
    expect(expected.length).toBeGreaterThan(hosts / 2);
    for (const host of spanning) {
      expect(actual.filter((alert) => alert.host === host)).toEqual([
        {
          host,
          startedAt: baseMs + 3 * minuteMs,
          firedAt: baseMs + 5 * minuteMs,
          resolvedAt: baseMs + 7 * minuteMs,
        },
      ]);
    }
  });
});
