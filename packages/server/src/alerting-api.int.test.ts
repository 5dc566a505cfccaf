// @services postgres
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MonitorStack } from './testing/monitor-stack.js';
import { createMonitorStack } from './testing/monitor-stack.js';
import type { RoleProcess } from './testing/role-process.js';
import type { Exchange } from './testing/openapi-conformance.js';
import { expectExchangesDocumented } from './testing/openapi-conformance.js';

/**
 * The alerting API of the next wave over HTTP, against a real `api` process and PostgreSQL:
 * the new rule fields and their validation. Every answer is checked against the served OpenAPI
 * document at the end.
 */

const key = `mon_test_${randomBytes(16).toString('hex')}`;
const exchanges: Exchange[] = [];
let stack: MonitorStack;
let api: RoleProcess;

type Reply<T> = { status: number; headers: Headers; body: T };

async function call<T = unknown>(
  path: string,
  options: { method?: string; body?: unknown; key?: string } = {},
): Promise<Reply<T>> {
  const method = options.method ?? 'GET';
  const response = await fetch(api.baseUrl + path, {
    method,
    headers: { 'x-api-key': options.key ?? key, 'content-type': 'application/json' },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  const body = (text === '' ? undefined : JSON.parse(text)) as T;
  const contentType = response.headers.get('content-type') ?? '';
  exchanges.push({ method, path, status: response.status, contentType, body });
  return { status: response.status, headers: response.headers, body };
}

type Problem = { status: number; errors?: { path: string; message: string }[] };
type Rule = Record<string, unknown> & { id: string };

const cpuHigh = {
  name: 'cpu high',
  metric: 'cpu_percent',
  condition: 'greater_than',
  threshold: 90,
  severity: 'critical',
};

beforeAll(async () => {
  stack = await createMonitorStack(
    'alerting_api',
    { MONITOR_BOOTSTRAP_API_KEY: key },
    { bus: 'in-process' },
  );
  api = await stack.start('api');
});

afterAll(async () => {
  await stack?.stop();
});

describe('alert rules: the next wave of fields', () => {
  it('returns every new field with its default on a rule that does not set them', async () => {
    const created = await call<Rule>('/api/v1/alerts/rules', { method: 'POST', body: cpuHigh });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      recovery_threshold: null,
      keep_firing_for_minutes: 0,
      no_data_minutes: null,
      no_data_state: 'alerting',
      renotify_minutes: null,
      message_template: null,
      flapping: null,
    });
    const listed = await call<{ rules: Rule[] }>('/api/v1/alerts/rules');
    expect(listed.body.rules.find((rule) => rule.id === created.body.id)).toEqual(created.body);
  });

  it('stores, returns and changes every new field', async () => {
    const options = {
      recovery_threshold: 80,
      keep_firing_for_minutes: 15,
      no_data_minutes: 10,
      no_data_state: 'ok',
      renotify_minutes: 60,
      message_template: '{{severity}}: {{rule_name}} on {{host}} ({{tags.env}})',
      flapping: { window_minutes: 30, max_transitions: 5 },
    };
    const created = await call<Rule>('/api/v1/alerts/rules', {
      method: 'POST',
      body: { ...cpuHigh, ...options },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject(options);
    const got = await call<Rule>(`/api/v1/alerts/rules/${created.body.id}`);
    expect(got.body).toEqual(created.body);

    const patched = await call<Rule>(`/api/v1/alerts/rules/${created.body.id}`, {
      method: 'PATCH',
      body: { recovery_threshold: null, flapping: null, no_data_state: 'keep' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      ...options,
      recovery_threshold: null,
      flapping: null,
      no_data_state: 'keep',
    });
  });

  it('answers 422 naming the field for each bad value', async () => {
    for (const [field, value] of [
      ['keep_firing_for_minutes', 1441],
      ['no_data_minutes', 0],
      ['no_data_state', 'never'],
      ['renotify_minutes', 10081],
      ['message_template', '{{hostname}} is down'],
      ['flapping', { window_minutes: 10, max_transitions: 1 }],
      ['recovery_threshold', 95],
    ] as const) {
      const refused = await call<Problem>('/api/v1/alerts/rules', {
        method: 'POST',
        body: { ...cpuHigh, [field]: value },
      });
      expect(refused.status, field).toBe(422);
      expect(refused.body.errors?.[0]?.path, field).toMatch(new RegExp(`^${field}`));
    }
    const equal = await call<Problem>('/api/v1/alerts/rules', {
      method: 'POST',
      body: { ...cpuHigh, condition: 'equal', recovery_threshold: 90 },
    });
    expect(equal.status).toBe(422);
    expect(equal.body.errors).toEqual([
      { path: 'recovery_threshold', message: 'is not allowed with condition equal' },
    ]);
  });

  it('validates a PATCH against the rule as it would be stored, and a refused one changes nothing', async () => {
    const created = await call<Rule>('/api/v1/alerts/rules', {
      method: 'POST',
      body: { ...cpuHigh, recovery_threshold: 85 },
    });
    const path = `/api/v1/alerts/rules/${created.body.id}`;
    for (const change of [
      { threshold: 80 },
      { condition: 'less_than' },
      { condition: 'not_equal' },
      { recovery_threshold: 91 },
      { threshold: 80, name: 'renamed' },
    ]) {
      const refused = await call<Problem>(path, { method: 'PATCH', body: change });
      expect(refused.status, JSON.stringify(change)).toBe(422);
      expect(refused.body.errors?.map((error) => error.path)).toEqual(['recovery_threshold']);
    }
    expect((await call<Rule>(path)).body).toEqual(created.body);
    // Moving both together is fine.
    const moved = await call<Rule>(path, {
      method: 'PATCH',
      body: { condition: 'less_than', threshold: 10, recovery_threshold: 15 },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({
      condition: 'less_than',
      threshold: 10,
      recovery_threshold: 15,
    });
  });
});

describe('the OpenAPI document', () => {
  it('covers every answer of these tests', async () => {
    const response = await fetch(`${api.baseUrl}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    expectExchangesDocumented(exchanges, (await response.json()) as never);
  });
});
