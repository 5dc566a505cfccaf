import { beforeAll, describe, expect, it } from 'vitest';
import type { ApiTarget, Reply } from '../api-target.js';
import { fireTestAlert, newOrganization, recordedFetch } from '../api-target.js';
import type { Exchange } from '../openapi-conformance.js';
import { expectExchangesDocumented } from '../openapi-conformance.js';

type Problem = { status: number; errors?: { path: string; message: string }[] };
type Rule = Record<string, unknown> & { id: string };

const cpuHigh = {
  name: 'cpu high',
  metric: 'cpu_percent',
  condition: 'greater_than',
  threshold: 90,
  severity: 'critical',
};

/**
 * The alerting API over HTTP: the rule options and their validation,
 * acknowledgement, `silenced` and the new alert filters, silences. It works in an organization
 * of its own and fires its alerts straight into the database, for hosts that never send a
 * sample, so a running evaluator leaves them alone. Every answer is checked against the served
 * OpenAPI document at the end.
 */
export function describeAlertingApi(target: () => ApiTarget, exchanges: Exchange[]): void {
  /** A key with every scope of the suite's organization. */
  let key: string;
  let orgId: string;

  async function call<T = unknown>(
    path: string,
    options: { method?: string; body?: unknown; key?: string } = {},
  ): Promise<Reply<T>> {
    return await recordedFetch<T>(exchanges, target().apiUrl, path, {
      method: options.method ?? 'GET',
      headers: { 'x-api-key': options.key ?? key, 'content-type': 'application/json' },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
  }

  beforeAll(async () => {
    ({ key, orgId } = await newOrganization(target().db));
  });

  describe('alert rules: the rule options', () => {
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

  type AlertItem = Record<string, unknown> & { id: string; silenced: boolean };
  type Silence = Record<string, unknown> & { id: string; state: string };

  describe('alerts: acknowledgement, silenced and the new filters', () => {
    let web1: string;
    let web2: string;

    beforeAll(async () => {
      const created = await call<Rule>('/api/v1/alerts/rules', {
        method: 'POST',
        body: { ...cpuHigh, name: 'for alerts' },
      });
      const fire = async (host: string) =>
        (await fireTestAlert(target().db, { orgId, ruleId: created.body.id, host })).id;
      web1 = await fire('web-1');
      web2 = await fire('web-2');
    });

    it('returns the new fields on every alert', async () => {
      const got = await call<AlertItem>(`/api/v1/alerts/${web1}`);
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({
        reason: 'threshold',
        acknowledged_at: null,
        acknowledged_by: null,
        acknowledgement_comment: null,
        silenced: false,
        flapping: false,
        labels: {},
        annotations: {},
      });
    });

    it('acknowledges (again keeps the first), filters on it, and undoes it', async () => {
      const path = `/api/v1/alerts/${web1}/acknowledge`;
      const first = await call<AlertItem>(path, { method: 'POST', body: { comment: 'on it' } });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({
        id: web1,
        acknowledged_at: expect.stringMatching(/Z$/),
        acknowledged_by: expect.stringMatching(/^key_/),
        acknowledgement_comment: 'on it',
      });
      // Again, without a body at all: the first acknowledgement stays.
      const again = await call<AlertItem>(path, { method: 'POST' });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      const acknowledged = await call<{ alerts: AlertItem[] }>('/api/v1/alerts?acknowledged=true');
      expect(acknowledged.body.alerts.map((alert) => alert.id)).toEqual([web1]);
      const open = await call<{ alerts: AlertItem[] }>('/api/v1/alerts?acknowledged=false');
      expect(open.body.alerts.map((alert) => alert.id)).toEqual([web2]);
      const undone = await call<AlertItem>(path, { method: 'DELETE' });
      expect(undone.status).toBe(200);
      expect(undone.body).toMatchObject({ acknowledged_at: null, acknowledgement_comment: null });
    });

    it('refuses a bad acknowledgement, an unknown alert and a key without write', async () => {
      const bad = await call<Problem>(`/api/v1/alerts/${web1}/acknowledge`, {
        method: 'POST',
        body: { comment: 5, by: 'me' },
      });
      expect(bad.status).toBe(422);
      expect(bad.body.errors?.map((error) => error.path)).toEqual(['comment', 'by']);
      const unknown = await call('/api/v1/alerts/alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A/acknowledge', {
        method: 'POST',
        body: {},
      });
      expect(unknown.status).toBe(404);
      const { key: readKey } = await newOrganization(target().db, ['read']);
      const forbidden = await call(`/api/v1/alerts/${web1}/acknowledge`, {
        method: 'POST',
        body: {},
        key: readKey,
      });
      expect(forbidden.status).toBe(403);
    });

    it('answers 422 naming the parameter for unknown filter values', async () => {
      const refused = await call<Problem>('/api/v1/alerts?acknowledged=yes&silenced=1&reason=x');
      expect(refused.status).toBe(422);
      expect(refused.body.errors?.map((error) => error.path)).toEqual([
        'acknowledged',
        'silenced',
        'reason',
      ]);
    });

    it('marks alerts silenced while a silence matches them, and filters on it', async () => {
      const created = await call<Silence>('/api/v1/silences', {
        method: 'POST',
        body: {
          matchers: { host: 'web-2' },
          starts_at: new Date(Date.now() - 60_000).toISOString(),
          ends_at: new Date(Date.now() + 3_600_000).toISOString(),
          comment: 'replacing a disk',
        },
      });
      expect(created.status).toBe(201);
      expect(created.headers.get('location')).toBe(`/api/v1/silences/${created.body.id}`);
      expect(created.body).toMatchObject({
        id: expect.stringMatching(/^sil_/),
        matchers: { host: 'web-2' },
        comment: 'replacing a disk',
        recurrence: null,
        state: 'active',
        created_by: expect.stringMatching(/^key_/),
      });
      const silenced = await call<{ alerts: AlertItem[] }>('/api/v1/alerts?silenced=true');
      expect(silenced.body.alerts.map((alert) => [alert.id, alert.silenced])).toEqual([
        [web2, true],
      ]);
      const others = await call<{ alerts: AlertItem[] }>('/api/v1/alerts?silenced=false');
      expect(others.body.alerts.map((alert) => alert.id)).toEqual([web1]);
      // The service's active alerts say so too.
      const serviceId = silenced.body.alerts[0]!['service_id'] as string;
      const service = await call<{ active_alerts: AlertItem[] }>(`/api/v1/services/${serviceId}`);
      expect(service.body.active_alerts.map((alert) => [alert.id, alert.silenced])).toEqual([
        [web2, true],
      ]);

      const expired = await call(`/api/v1/silences/${created.body.id}`, { method: 'DELETE' });
      expect(expired.status).toBe(204);
      expect((await call<AlertItem>(`/api/v1/alerts/${web2}`)).body.silenced).toBe(false);
      expect((await call<Silence>(`/api/v1/silences/${created.body.id}`)).body.state).toBe(
        'expired',
      );
    });
  });

  describe('silences', () => {
    const window = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();

    it('lists all but expired by default, by state on request, newest first, paged', async () => {
      const make = async (comment: string, from: number, to: number, recurrence?: object) => {
        const created = await call<Silence>('/api/v1/silences', {
          method: 'POST',
          body: {
            matchers: { severity: 'info', tags: { env: 'lab' } },
            starts_at: window(from),
            ends_at: window(to),
            comment,
            ...(recurrence === undefined ? {} : { recurrence }),
          },
        });
        expect(created.status, comment).toBe(201);
        return created.body;
      };
      const pending = await make('later', 1, 2);
      const active = await make('now', -1, 1);
      const weekly = await make('weekly window', -1, 24 * 30, {
        rrule: 'FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=0',
        duration_minutes: 120,
        timezone: 'Europe/Berlin',
      });
      expect(weekly.recurrence).toEqual({
        rrule: 'FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=0',
        duration_minutes: 120,
        timezone: 'Europe/Berlin',
      });
      expect(pending.state).toBe('pending');
      expect(active.state).toBe('active');
      const ids = async (query: string) => {
        const listed = await call<{ silences: Silence[]; pagination: { total: number } }>(
          `/api/v1/silences${query}`,
        );
        expect(listed.status, query).toBe(200);
        return listed.body.silences.map((silence) => silence.id);
      };
      const all = await ids('');
      expect(all.slice(0, 3)).toEqual([weekly.id, active.id, pending.id]);
      expect(all).not.toContain(undefined);
      expect(await ids('?state=active')).toContain(active.id);
      expect(await ids('?state=pending')).toContain(pending.id);
      expect(await ids('?state=expired')).not.toContain(active.id);
      expect(await ids('?limit=1&offset=1')).toEqual([active.id]);
      const bad = await call<Problem>('/api/v1/silences?state=over&limit=0');
      expect(bad.status).toBe(422);
      expect(bad.body.errors?.map((error) => error.path).sort()).toEqual(['limit', 'state']);
    });

    it('refuses bad silences with 422 naming the field', async () => {
      const base = {
        matchers: { host: 'web-1' },
        starts_at: window(0),
        ends_at: window(1),
        comment: 'x',
      };
      for (const [body, path] of [
        [{ ...base, matchers: {} }, 'matchers'],
        [{ ...base, matchers: { hostname: 'x' } }, 'matchers.hostname'],
        [{ ...base, ends_at: window(-1) }, 'ends_at'],
        [{ ...base, starts_at: 'yesterday' }, 'starts_at'],
        [
          {
            ...base,
            recurrence: { rrule: 'FREQ=SOMETIMES', duration_minutes: 60, timezone: 'UTC' },
          },
          'recurrence.rrule',
        ],
        [
          {
            ...base,
            recurrence: { rrule: 'FREQ=DAILY', duration_minutes: 60, timezone: 'Mars/Base' },
          },
          'recurrence.timezone',
        ],
        [
          {
            ...base,
            recurrence: { rrule: 'FREQ=DAILY', duration_minutes: 10081, timezone: 'UTC' },
          },
          'recurrence.duration_minutes',
        ],
        [{ ...base, matchers: { service_id: 'web-1' } }, 'matchers.service_id'],
      ] as const) {
        const refused = await call<Problem>('/api/v1/silences', { method: 'POST', body });
        expect(refused.status, path).toBe(422);
        expect(
          refused.body.errors?.map((error) => error.path),
          path,
        ).toEqual([path]);
      }
    });

    it('is 404 for an unknown, malformed or another organization’s silence', async () => {
      const created = await call<Silence>('/api/v1/silences', {
        method: 'POST',
        body: { matchers: { host: 'h' }, starts_at: window(0), ends_at: window(1), comment: '' },
      });
      const { key: otherKey } = await newOrganization(target().db, ['read', 'write']);
      for (const path of [
        `/api/v1/silences/${created.body.id}`,
        '/api/v1/silences/sil_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A',
        '/api/v1/silences/nope',
      ]) {
        expect((await call(path, { key: otherKey })).status, path).toBe(404);
        expect((await call(path, { key: otherKey, method: 'DELETE' })).status, path).toBe(404);
      }
      expect((await call(`/api/v1/silences/${created.body.id}`)).status).toBe(200);
    });
  });

  describe('the OpenAPI document', () => {
    it('covers every answer of these tests', async () => {
      const response = await fetch(`${target().apiUrl}/api/v1/openapi.json`);
      expect(response.status).toBe(200);
      expectExchangesDocumented(exchanges, (await response.json()) as never);
    });
  });
}
