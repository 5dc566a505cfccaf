// @services postgres
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ApiReply } from '@monitor/testkit/builders';
import { createApiCall } from '@monitor/testkit/builders';
import { addKey, newOrganization } from './testing/api-target.js';
import type { LocalApiTarget } from './testing/monitor-stack.js';
import { startLocalApiTarget } from './testing/monitor-stack.js';
import { runMonitor } from './testing/role-process.js';

const nodeGroup = `name: node
interval: 30s
rules:
  - alert: HostDown
    expr: up == 0
    for: 5m
    keep_firing_for: 10m
    labels:
      severity: page
    annotations:
      summary: "{{ $labels.instance }} is down ({{ $value | humanize }})"
  - record: job:up:sum
    expr: sum by (job) (up)
`;

/**
 * The Cortex/Mimir ruler API as mimirtool and Grafana use it, through the real api role (role
 * `all`): rule groups per organization and namespace, YAML in and out, Prometheus' errors.
 */
describe('ruler API (/prometheus/config/v1/rules)', () => {
  let target: LocalApiTarget;
  let key: string;
  let readKey: string;
  let otherKey: string;
  let orgId: string;

  beforeAll(async () => {
    target = await startLocalApiTarget('ruler_api', 'embedded', { RULES_MAX_PER_ORG: '5' });
    const org = await newOrganization(target.db);
    key = org.key;
    orgId = org.orgId;
    readKey = await addKey(target.db, org.orgId, ['read']);
    otherKey = (await newOrganization(target.db)).key;
  });

  afterAll(async () => {
    await target?.stop();
  });

  const rules = createApiCall({ baseUrl: () => `${target.apiUrl}/prometheus/config/v1/rules` });
  /** A request as mimirtool makes one: the key as a bearer token, a group as YAML. */
  const call = (method: string, path: string, options: { key?: string; body?: string } = {}) =>
    rules(path, {
      method,
      bearer: options.key ?? key,
      ...(options.body === undefined
        ? {}
        : { raw: { data: options.body, contentType: 'application/yaml' } }),
    });
  /** The text of a YAML answer, parsed. */
  const yamlOf = (reply: ApiReply) => parse(reply.body as string) as unknown;
  /** The `error` of a Prometheus error answer. */
  const errorOf = (reply: ApiReply) => (reply.body as { error: string }).error;

  it('stores a group per namespace and answers it back as YAML', async () => {
    expect((await call('GET', '')).status).toBe(404);
    const posted = await call('POST', '/team-a', { body: nodeGroup });
    expect(posted.status).toBe(202);
    expect(posted.body).toEqual({
      status: 'success',
      data: null,
      errorType: '',
      error: '',
    });
    expect(
      (await call('POST', '/team-b', { body: 'name: api\nrules:\n  - record: r\n    expr: up\n' }))
        .status,
    ).toBe(202);

    const all = await call('GET', '', { key: readKey });
    expect(all.status).toBe(200);
    expect(all.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(yamlOf(all)).toEqual({
      'team-a': [parse(nodeGroup)],
      'team-b': [{ name: 'api', rules: [{ record: 'r', expr: 'up' }] }],
    });
    expect(yamlOf(await call('GET', '/team-a'))).toEqual({ 'team-a': [parse(nodeGroup)] });
    expect(yamlOf(await call('GET', '/team-a/node'))).toEqual(parse(nodeGroup));
    // Another organization sees none of it.
    expect((await call('GET', '/team-a/node', { key: otherKey })).status).toBe(404);
  });

  it("refuses what promtool refuses, with Prometheus' error text", async () => {
    const bad = await call('POST', '/team-a', {
      body: 'name: broken\nrules:\n  - alert: A\n    expr: up ==\n',
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      status: 'error',
      errorType: 'bad_data',
      error:
        '4:11: group "broken", rule 1, "A": could not parse expression: 1:6: parse error: unexpected end of input',
    });
    const template = await call('POST', '/team-a', {
      body: 'name: t\nrules:\n  - alert: A\n    expr: up\n    annotations: {a: "{{ nosuch }}"}\n',
    });
    expect(template.status).toBe(400);
    expect(errorOf(template)).toContain('function "nosuch" not defined');
  });

  it('keeps an organization within RULES_MAX_PER_ORG', async () => {
    // 2 + 1 rules stored; 3 more would make 6 > 5.
    const many = `name: many\nrules:\n${[1, 2, 3].map((i) => `  - record: r${i}\n    expr: up\n`).join('')}`;
    const refused = await call('POST', '/team-c', { body: many });
    expect(refused.status).toBe(400);
    expect(errorOf(refused)).toContain('per-tenant rules limit (limit: 5) exceeded');
  });

  it('needs the write scope to change and the read scope to list', async () => {
    expect((await call('POST', '/team-a', { key: readKey, body: nodeGroup })).status).toBe(403);
    expect((await call('DELETE', '/team-a', { key: readKey })).status).toBe(403);
    expect((await call('GET', '', { key: 'mon_unknown' })).status).toBe(401);
  });

  it('deletes a group, then a namespace', async () => {
    expect((await call('DELETE', '/team-a/node')).status).toBe(202);
    expect((await call('DELETE', '/team-a/node')).status).toBe(404);
    expect((await call('DELETE', '/team-b')).status).toBe(202);
    expect((await call('DELETE', '/team-b')).status).toBe(404);
    expect((await call('GET', '')).status).toBe(404);
  });

  it('loads rule files with `monitor rules load`, all or nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rules-load-'));
    try {
      const good = join(dir, 'node-alerts.yml');
      writeFileSync(good, `groups:\n- ${nodeGroup.replaceAll('\n', '\n  ').trimEnd()}\n`);
      const bad = join(dir, 'bad.yml');
      writeFileSync(bad, 'groups:\n- name: b\n  rules:\n  - record: 1x\n    expr: up\n');

      const refused = await runMonitor(
        ['rules', 'load', good, bad, '--org', orgId],
        target.stack.env,
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('invalid recording rule name: 1x');
      expect((await call('GET', '')).status).toBe(404);

      const loaded = await runMonitor(['rules', 'load', good, '--org', orgId], target.stack.env);
      expect(loaded.code).toBe(0);
      expect(JSON.parse(loaded.stdout)).toEqual({
        orgId,
        groups: [{ namespace: 'node-alerts', name: 'node', rules: 2 }],
      });
      expect(yamlOf(await call('GET', '/node-alerts/node'))).toEqual(parse(nodeGroup));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
