import { beforeAll, describe, expect, it } from 'vitest';
import type { AlertRuleListResponse, AlertRuleResponse } from '@monitor/schemas';
import type { ApiExchange } from '@monitor/testkit/builders';
import { buildAlertRuleCreateRequest, createApiCall, problemBody } from '@monitor/testkit/builders';
import type { ApiTarget } from '../api-target.js';
import { newOrganization } from '../api-target.js';
import { expectDocumentedAsServed } from '../openapi-conformance.js';
import type { Problem } from './suite-support.js';
import { isoTime, newOrganizationKeys, unknownIds } from './suite-support.js';

type Rule = Record<string, unknown> & { id: string };

const cpuHigh = buildAlertRuleCreateRequest();

/** The rule options of a rule whose create sets none. */
const ruleOptionDefaults = {
  recovery_threshold: null,
  keep_firing_for_minutes: 0,
  no_data_minutes: null,
  no_data_state: 'alerting',
  renotify_minutes: null,
  message_template: null,
  flapping: null,
};

/**
 * Alert rules over HTTP: create, read, list, change and delete, every default, the rule options
 * (recovery, keep firing, no data, renotify, message template, flapping) and their validation.
 * Each part works in an organization of its own, so what it lists is exactly what it made;
 * every answer is checked against the served OpenAPI document at the end. Call it inside a
 * describe whose beforeAll has set `target`; `exchanges` receives every exchange it makes.
 */
export function describeAlertRulesApi(target: () => ApiTarget, exchanges: ApiExchange[]): void {
  const call = createApiCall({ baseUrl: () => target().apiUrl, exchanges });

  describe('alert rules', () => {
    describe('create, read, list, change and delete', () => {
      const rulesPath = '/api/v1/alerts/rules';
      const memoryHigh = buildAlertRuleCreateRequest({
        name: 'memory high',
        metric: 'memory_percent',
        threshold: 95,
        severity: 'warning',
      });
      let key: string;
      let readKey: string;
      let otherOrgKey: string;

      beforeAll(async () => {
        ({ key, readKey, otherOrgKey } = await newOrganizationKeys(target().db));
      });

      const create = async (body: object) => {
        const created = await call<AlertRuleResponse>(rulesPath, { key, method: 'POST', body });
        expect(created.status).toBe(201);
        return created.body;
      };

      it('creates a rule: 201, its Location, and the stored rule with every default', async () => {
        const created = await call<AlertRuleResponse>(rulesPath, {
          key,
          method: 'POST',
          body: memoryHigh,
        });
        expect(created.status).toBe(201);
        expect(created.body).toEqual({
          id: expect.stringMatching(/^rul_[0-9A-Z]{26}$/),
          ...memoryHigh,
          duration_minutes: 0,
          channels: [],
          scope: {},
          enabled: true,
          ...ruleOptionDefaults,
          created_at: expect.stringMatching(isoTime),
          updated_at: created.body.created_at,
        });
        const location = created.headers.get('location');
        expect(location).toBe(`${rulesPath}/${created.body.id}`);
        const got = await call<AlertRuleResponse>(location!, { key });
        expect(got).toMatchObject({ status: 200, body: created.body });
      });

      it('lists the organization’s rules newest first, paged with limit and offset', async () => {
        const before = await call<AlertRuleListResponse>(rulesPath, { key });
        const earlierIds = before.body.rules.map((rule) => rule.id);
        const first = await create({ ...memoryHigh, name: 'first' });
        const second = await create({ ...memoryHigh, name: 'second' });
        const third = await create({ ...memoryHigh, name: 'third' });
        const total = earlierIds.length + 3;

        const all = await call<AlertRuleListResponse>(rulesPath, { key });
        expect(all.status).toBe(200);
        expect(all.body.rules.map((rule) => rule.id)).toEqual([
          third.id,
          second.id,
          first.id,
          ...earlierIds,
        ]);
        expect(all.body.rules[0]).toEqual(third);
        expect(all.body.pagination).toEqual({ limit: 50, offset: 0, total, has_more: false });

        const page = await call<AlertRuleListResponse>(`${rulesPath}?limit=2`, { key });
        expect(page.body.rules.map((rule) => rule.id)).toEqual([third.id, second.id]);
        expect(page.body.pagination).toEqual({ limit: 2, offset: 0, total, has_more: true });
        const next = await call<AlertRuleListResponse>(`${rulesPath}?limit=2&offset=2`, { key });
        expect(next.body.rules.map((rule) => rule.id)).toEqual(
          [first.id, ...earlierIds].slice(0, 2),
        );
        expect(next.body.pagination).toEqual({
          limit: 2,
          offset: 2,
          total,
          has_more: total > 4,
        });
        const past = await call<AlertRuleListResponse>(`${rulesPath}?offset=${total}`, { key });
        expect(past.body).toEqual({
          rules: [],
          pagination: { limit: 50, offset: total, total, has_more: false },
        });

        const refused = await call<Problem>(`${rulesPath}?limit=0&offset=-1`, { key });
        expect(refused).toMatchObject({ status: 422, body: problemBody(422) });
        expect(refused.body.errors?.map((error) => error.path).sort()).toEqual(['limit', 'offset']);
      });

      it('reads one rule and changes only the field a PATCH names', async () => {
        const rule = await create({ ...memoryHigh, name: 'to change', channels: ['email'] });
        const path = `${rulesPath}/${rule.id}`;
        const patched = await call<AlertRuleResponse>(path, {
          key,
          method: 'PATCH',
          body: { threshold: 97.5 },
        });
        expect(patched.status).toBe(200);
        expect(patched.body).toEqual({
          ...rule,
          threshold: 97.5,
          updated_at: expect.stringMatching(isoTime),
        });
        expect(Date.parse(patched.body.updated_at)).toBeGreaterThanOrEqual(
          Date.parse(rule.updated_at),
        );
        const got = await call<AlertRuleResponse>(path, { key });
        expect(got).toMatchObject({ status: 200, body: patched.body });

        const empty = await call<Problem>(path, { key, method: 'PATCH', body: {} });
        expect(empty).toMatchObject({ status: 422, body: problemBody(422) });
        const readOnly = await call<Problem>(path, {
          key,
          method: 'PATCH',
          body: { id: unknownIds.rule },
        });
        expect(readOnly.status).toBe(422);
        expect(readOnly.body.errors?.map((error) => error.path)).toEqual(['id']);
        expect((await call<AlertRuleResponse>(path, { key })).body).toEqual(patched.body);
      });

      it('deletes a rule: 204 without a body, then 404, and it is no longer listed', async () => {
        const rule = await create({ ...memoryHigh, name: 'to delete' });
        const path = `${rulesPath}/${rule.id}`;
        const deleted = await call(path, { key, method: 'DELETE' });
        expect(deleted.status).toBe(204);
        expect(deleted.body).toBeUndefined();
        expect(await call<Problem>(path, { key })).toMatchObject({
          status: 404,
          body: problemBody(404),
        });
        expect((await call(path, { key, method: 'DELETE' })).status).toBe(404);
        expect((await call(path, { key, method: 'PATCH', body: { threshold: 1 } })).status).toBe(
          404,
        );
        const listed = await call<AlertRuleListResponse>(`${rulesPath}?limit=100`, { key });
        expect(listed.body.rules.map((each) => each.id)).not.toContain(rule.id);
      });

      it('is 404 for another organization’s, an unknown or a malformed rule id', async () => {
        const rule = await create({ ...memoryHigh, name: 'not theirs' });
        const path = `${rulesPath}/${rule.id}`;
        for (const method of ['GET', 'DELETE']) {
          const reply = await call<Problem>(path, { key: otherOrgKey, method });
          expect(reply, method).toMatchObject({ status: 404, body: problemBody(404) });
        }
        const patched = await call(path, {
          key: otherOrgKey,
          method: 'PATCH',
          body: { threshold: 1 },
        });
        expect(patched.status).toBe(404);
        for (const id of [unknownIds.rule, 'nope']) {
          expect((await call(`${rulesPath}/${id}`, { key })).status, id).toBe(404);
        }
        const theirs = await call<AlertRuleListResponse>(rulesPath, { key: otherOrgKey });
        expect(theirs.body.rules).toEqual([]);
        // What the other organization tried changed nothing.
        expect((await call<AlertRuleResponse>(path, { key })).body).toEqual(rule);
      });

      it('refuses a key without the write scope with 403 and stores nothing', async () => {
        const before = await call<AlertRuleListResponse>(rulesPath, { key: readKey });
        expect(before.status).toBe(200);
        const refused = await call<Problem>(rulesPath, {
          key: readKey,
          method: 'POST',
          body: { ...memoryHigh, name: 'read only' },
        });
        expect(refused).toMatchObject({ status: 403, body: problemBody(403) });
        const after = await call<AlertRuleListResponse>(rulesPath, { key: readKey });
        expect(after.body.pagination.total).toBe(before.body.pagination.total);
        const unauthenticated = await call<Problem>(rulesPath, {
          method: 'POST',
          body: memoryHigh,
        });
        expect(unauthenticated).toMatchObject({ status: 401, body: problemBody(401) });
      });
    });

    describe('the rule options', () => {
      let key: string;

      beforeAll(async () => {
        ({ key } = await newOrganization(target().db));
      });

      it('returns every rule option with its default on a rule that does not set them', async () => {
        const created = await call<Rule>('/api/v1/alerts/rules', {
          key,
          method: 'POST',
          body: cpuHigh,
        });
        expect(created.status).toBe(201);
        expect(created.body).toMatchObject(ruleOptionDefaults);
        const listed = await call<{ rules: Rule[] }>('/api/v1/alerts/rules', { key });
        expect(listed.body.rules.find((rule) => rule.id === created.body.id)).toEqual(created.body);
      });

      it('stores, returns and changes every rule option', async () => {
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
          key,
          method: 'POST',
          body: { ...cpuHigh, ...options },
        });
        expect(created.status).toBe(201);
        expect(created.body).toMatchObject(options);
        const got = await call<Rule>(`/api/v1/alerts/rules/${created.body.id}`, { key });
        expect(got.body).toEqual(created.body);

        const patched = await call<Rule>(`/api/v1/alerts/rules/${created.body.id}`, {
          key,
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
            key,
            method: 'POST',
            body: { ...cpuHigh, [field]: value },
          });
          expect(refused.status, field).toBe(422);
          expect(refused.body.errors?.[0]?.path, field).toMatch(new RegExp(`^${field}`));
        }
        const equal = await call<Problem>('/api/v1/alerts/rules', {
          key,
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
          key,
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
          const refused = await call<Problem>(path, { key, method: 'PATCH', body: change });
          expect(refused.status, JSON.stringify(change)).toBe(422);
          expect(refused.body.errors?.map((error) => error.path)).toEqual(['recovery_threshold']);
        }
        expect((await call<Rule>(path, { key })).body).toEqual(created.body);
        // Moving both together is fine.
        const moved = await call<Rule>(path, {
          key,
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

    it('answers only what the served OpenAPI document says', async () => {
      expect(exchanges.length).toBeGreaterThan(40);
      await expectDocumentedAsServed(target().apiUrl, exchanges);
    });
  });
}
