import { describe, expect, it } from 'vitest';
import { buildAlertRuleCreateRequest, problemBody } from '@monitor/testkit/builders';
import { createApiRouter } from './api-router.js';
import { expectAnswersDocumented } from './testing/documented-answers.js';
import { createRouterDeps, nowMs } from './testing/router-fixtures.js';
import { serveRouter } from './testing/serve-router.js';

const { fakes, deps } = createRouterDeps();
const { call, exchanges } = serveRouter(() => createApiRouter({ ...deps, nowMs: () => nowMs }));

describe('alertRuleRoutes, served', () => {
  const rulesPath = '/api/v1/alerts/rules';
  const cpuRule = buildAlertRuleCreateRequest();

  async function createRule(body: object = cpuRule): Promise<Record<string, unknown>> {
    const result = await call(rulesPath, { method: 'POST', key: 'write-key', body });
    expect(result.status).toBe(201);
    return result.body as Record<string, unknown>;
  }

  it('creates a rule with the defaults: 201, Location and the stored rule', async () => {
    const result = await call(rulesPath, { method: 'POST', key: 'write-key', body: cpuRule });
    expect(result).toMatchObject({
      status: 201,
      body: {
        id: expect.stringMatching(/^rul_[0-9A-Z]{26}$/),
        ...cpuRule,
        duration_minutes: 0,
        channels: [],
        scope: {},
        enabled: true,
        created_at: '2026-11-22T10:30:00.000Z',
        updated_at: '2026-11-22T10:30:00.000Z',
      },
    });
    const { id } = result.body as { id: string };
    expect(result.headers.get('location')).toBe(`${rulesPath}/${id}`);
    expect(fakes.rules.rows.get(id)).toEqual({
      orgId: 'org_a',
      row: expect.objectContaining({ durationMinutes: 0, enabled: true, channels: [] }),
    });
  });

  it('stores every field it is given', async () => {
    const rule = await createRule({
      ...cpuRule,
      condition: 'less_than_or_equal',
      duration_minutes: 1440,
      severity: 'info',
      channels: ['webhook', 'slack', 'email'],
      scope: { environment: 'prod', region: 'eu' },
      enabled: false,
    });
    expect(rule).toMatchObject({
      condition: 'less_than_or_equal',
      duration_minutes: 1440,
      severity: 'info',
      channels: ['webhook', 'slack', 'email'],
      scope: { environment: 'prod', region: 'eu' },
      enabled: false,
    });
  });

  it('answers 422 naming every invalid field', async () => {
    const result = await call(rulesPath, {
      method: 'POST',
      key: 'write-key',
      body: {
        name: '',
        metric: 'cpu percent',
        condition: 'above',
        duration_minutes: 2.5,
        severity: 'fatal',
        channels: ['slack', 'slack'],
        scope: { env: 1 },
        id: 'rul_x',
      },
    });
    expect(result).toMatchObject({ status: 422, body: problemBody(422) });
    const paths = (result.body as { errors: { path: string }[] }).errors.map((e) => e.path);
    expect(paths.sort()).toEqual(
      [
        'name',
        'metric',
        'condition',
        'threshold',
        'duration_minutes',
        'severity',
        'channels',
        'scope.env',
        'id',
      ].sort(),
    );
    expect(fakes.rules.rows.size).toBeGreaterThan(0); // created by earlier tests only
  });

  it('answers 422 for malformed JSON or no body, 415 for another type, 403 without write', async () => {
    expect(
      await call(rulesPath, {
        method: 'POST',
        key: 'write-key',
        raw: { data: '{"name":', contentType: 'application/json' },
      }),
    ).toMatchObject({ status: 422, body: { detail: 'The request body is not valid JSON.' } });
    expect(await call(rulesPath, { method: 'POST', key: 'write-key' })).toMatchObject({
      status: 422,
      body: { errors: [{ path: '', message: 'must be a JSON object' }] },
    });
    expect(
      await call(rulesPath, {
        method: 'POST',
        key: 'write-key',
        raw: { data: 'name=x', contentType: 'application/x-www-form-urlencoded' },
      }),
    ).toMatchObject({ status: 415, body: problemBody(415) });
    expect(await call(rulesPath, { method: 'POST', key: 'read-key', body: cpuRule })).toMatchObject(
      { status: 403, body: problemBody(403) },
    );
    expect((await call(rulesPath, { method: 'POST', body: cpuRule })).status).toBe(401);
  });

  it('answers 413 for a body over 1 MiB', async () => {
    const result = await call(rulesPath, {
      method: 'POST',
      key: 'write-key',
      body: { ...cpuRule, name: 'x'.repeat(1024 * 1024) },
    });
    expect(result).toMatchObject({ status: 413, body: problemBody(413) });
  });

  it('lists the organization’s rules newest first with pagination', async () => {
    const older = await createRule({ ...cpuRule, name: 'older' });
    const newer = await createRule({ ...cpuRule, name: 'newer' });
    const result = await call(`${rulesPath}?limit=2`, { key: 'read-key' });
    expect(result).toMatchObject({
      status: 200,
      body: {
        rules: [{ id: newer['id'], name: 'newer' }, { id: older['id'] }],
        pagination: { limit: 2, offset: 0, has_more: true },
      },
    });
    const other = await call(rulesPath, { key: 'other-key' });
    expect(other.body).toEqual({
      rules: [],
      pagination: { limit: 50, offset: 0, total: 0, has_more: false },
    });
    expect(await call(`${rulesPath}?offset=-1`, { key: 'read-key' })).toMatchObject({
      status: 422,
      body: {
        errors: [{ path: 'offset', message: 'must be an integer from 0 to 9007199254740991' }],
      },
    });
  });

  it('reads one rule; another organization’s, an unknown or a malformed id is 404', async () => {
    const rule = await createRule();
    expect(await call(`${rulesPath}/${String(rule['id'])}`, { key: 'read-key' })).toMatchObject({
      status: 200,
      body: rule,
    });
    for (const [path, key] of [
      [`${rulesPath}/${String(rule['id'])}`, 'other-key'],
      [`${rulesPath}/rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0Z`, 'read-key'],
      [`${rulesPath}/nope`, 'read-key'],
    ] as const) {
      expect(await call(path, { key })).toMatchObject({ status: 404, body: problemBody(404) });
    }
  });

  it('changes only the fields a PATCH names, at the router’s clock', async () => {
    const rule = await createRule({ ...cpuRule, channels: ['email'] });
    const path = `${rulesPath}/${String(rule['id'])}`;
    const result = await call(path, {
      method: 'PATCH',
      key: 'write-key',
      body: { threshold: 75.5, enabled: false },
    });
    expect(result).toEqual({
      status: 200,
      headers: expect.anything(),
      body: {
        ...rule,
        threshold: 75.5,
        enabled: false,
        updated_at: '2026-11-22T10:30:01.000Z',
      },
    });
    expect(fakes.rules.nows.at(-1)).toEqual(new Date(nowMs));
    expect(await call(path, { key: 'read-key' })).toMatchObject({ body: { threshold: 75.5 } });
  });

  it('refuses an empty, unknown-only or invalid PATCH with 422, and 404 for another org', async () => {
    const rule = await createRule();
    const path = `${rulesPath}/${String(rule['id'])}`;
    expect(await call(path, { method: 'PATCH', key: 'write-key', body: {} })).toMatchObject({
      status: 422,
      body: { errors: [{ path: '', message: 'must set at least one field' }] },
    });
    expect(
      await call(path, { method: 'PATCH', key: 'write-key', body: { colour: 'red' } }),
    ).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'colour', message: 'is not a writable field of a rule' }] },
    });
    expect(
      await call(path, { method: 'PATCH', key: 'write-key', body: { duration_minutes: 1441 } }),
    ).toMatchObject({
      status: 422,
      body: {
        errors: [{ path: 'duration_minutes', message: 'must be an integer from 0 to 1440' }],
      },
    });
    expect(
      await call(path, { method: 'PATCH', key: 'other-key', body: { name: 'mine' } }),
    ).toMatchObject({ status: 404 });
    expect(await call(path, { key: 'read-key' })).toMatchObject({ body: { name: 'cpu high' } });
  });

  it('deletes with 204, and the rule is 404 from then on', async () => {
    const rule = await createRule();
    const path = `${rulesPath}/${String(rule['id'])}`;
    expect(await call(path, { method: 'DELETE', key: 'other-key' })).toMatchObject({
      status: 404,
    });
    expect(await call(path, { method: 'DELETE', key: 'read-key' })).toMatchObject({
      status: 403,
    });
    const deleted = await call(path, { method: 'DELETE', key: 'write-key' });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expect(fakes.rules.nows.at(-1)).toEqual(new Date(nowMs));
    expect((await call(path, { key: 'read-key' })).status).toBe(404);
    expect((await call(path, { method: 'DELETE', key: 'write-key' })).status).toBe(404);
    expect(
      (await call(path, { method: 'PATCH', key: 'write-key', body: { name: 'x' } })).status,
    ).toBe(404);
  });

  it('answers as the OpenAPI document says', () => {
    expect(exchanges.length).toBeGreaterThan(20);
    expectAnswersDocumented(exchanges);
  });
});
