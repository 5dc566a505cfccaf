// @services postgres
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@monitor/testkit/builders';
import type { AlertGeneratorTester, TestDatabase } from '@monitor/testkit';
import {
  createTestDatabase,
  ensureAlertGeneratorTester,
  getFreePort,
  runAlertGeneratorTester,
} from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { RoleProcess } from './testing/role-process.js';
import { runCommand, startRoleProcess } from './testing/role-process.js';

/**
 * The official alert generator compliance suite (prometheus/compliance, `alert_generator`)
 * against `monitor all`: its `rules.yaml` loaded unchanged with `monitor rules load`, its samples
 * remote-written to us, our /prometheus API queried, and our alerts sent to it as to an
 * Alertmanager (the `alertmanager` channel). About 40 minutes by the suite's design: its own
 * vitest project, which CI runs beside the others (docs/development.md#ci).
 */
const key = `mon_test_${randomBytes(16).toString('hex')}`;
/** Its four rule groups (cases/all_cases.go). */
const ruleGroups = [
  'NewAlerts_OrderCheck',
  'PendingAndFiringAndResolved',
  'PendingAndResolved_AlwaysInactive',
  'ZeroFor_SmallFor',
];

let tester: AlertGeneratorTester;
let database: TestDatabase;
let monitor: RoleProcess;
let alertReceptionPort: number;
const stopped = new AbortController();

type RulesAnswer = { data: { groups: { name: string; lastEvaluation: string }[] } };

beforeAll(async () => {
  [tester, database, alertReceptionPort] = await Promise.all([
    ensureAlertGeneratorTester(),
    createTestDatabase(serviceUrl('postgres'), 'alert_generator'),
    getFreePort(),
  ]);
  const env = {
    DATABASE_URL: database.url,
    MONITOR_BOOTSTRAP_API_KEY: key,
    // The suite's Alertmanager stand-in listens on this machine.
    NOTIFIER_ALLOWED_TARGET_NETWORKS: '127.0.0.1/32',
  };
  monitor = await startRoleProcess('all', env);
  await runCommand(['rules', 'load', tester.rules], env);
  const channel = await fetch(`${monitor.baseUrl}/api/v1/notification-channels/alertmanager`, {
    method: 'PUT',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ urls: [`http://127.0.0.1:${alertReceptionPort}`] }),
  });
  expect(channel.status).toBe(200);
  // As its README asks: every group evaluated once before the suite starts.
  await waitFor(
    async () => {
      const response = await fetch(`${monitor.baseUrl}/prometheus/api/v1/rules`, {
        headers: { 'X-API-Key': key },
      });
      const { data } = (await response.json()) as RulesAnswer;
      const evaluated = data.groups.filter(
        (group) => !group.lastEvaluation.startsWith('0001-01-01'),
      );
      return evaluated.length === ruleGroups.length ? true : undefined;
    },
    120_000,
    'one evaluation of every rule group',
  );
}, 600_000);

afterAll(async () => {
  stopped.abort();
  await monitor?.stop();
  await database?.drop();
});

describe('the alert generator compliance suite', () => {
  it('passes every case of every rule group', async () => {
    const result = await runAlertGeneratorTester(
      tester,
      {
        remoteWriteUrl: `${monitor.baseUrl}/api/v1/write`,
        prometheusApiUrl: `${monitor.baseUrl}/prometheus`,
        alertReceptionPort,
        basicAuth: { username: 'alert-generator', password: key },
      },
      { signal: stopped.signal },
    );
    if (result.code !== 0) {
      process.stdout.write(`the suite's output:\n${result.output}\n`);
      process.stdout.write(`monitor's last lines:\n${monitor.output().slice(-20_000)}\n`);
    }
    const lines = result.output.trimEnd().split('\n');
    // Its last lines say what went wrong.
    expect(result.code, lines.slice(-40).join('\n')).toBe(0);
    expect(lines.at(-1)).toBe('Congrats! All tests passed');
    const passed = lines
      .filter((line) => line.includes('msg="Test finished successfully for a rule group"'))
      .map((line) => /rulegroup=(\S+)/.exec(line)?.[1]);
    expect(passed.sort()).toEqual(ruleGroups);
  }, 3_600_000);
});
