import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '@monitor/db';
import { resolveAlerts } from '@monitor/db';
import type {
  AlertListResponse,
  AlertResponse,
  AlertRuleListResponse,
  AlertRuleResponse,
  InvestigationDetailResponse,
  InvestigationListResponse,
  NotificationChannelListResponse,
  NotificationChannelResponse,
  NotificationListResponse,
  ServiceListResponse,
} from '@monitor/schemas';
import type { ApiTarget, Reply } from '../api-target.js';
import { addKey, fireTestAlert, newOrganization, recordedFetch } from '../api-target.js';
import type { Exchange } from '../openapi-conformance.js';
import { expectExchangesDocumented } from '../openapi-conformance.js';
import { waitFor } from '../wait-for.js';
import { problemBody } from './problem-body.js';

type Problem = {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: { path: string; message: string }[];
};

type ServedDocument = Parameters<typeof expectExchangesDocumented>[1];

/** An id of the right form that names nothing. */
const unknownAlertId = 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A';
const unknownRuleId = 'rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A';
const unknownInvestigationId = 'inv_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A';
const isoTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const investigationTimeoutMs = 60_000;

/** A new organization's full and read-only keys, and a key of another new organization. */
async function areaKeys(db: Database) {
  const org = await newOrganization(db);
  const readKey = await addKey(db, org.orgId, ['read']);
  return { ...org, readKey, otherOrgKey: (await newOrganization(db)).key };
}

/**
 * Real-HTTP tests of the resources the other suites cover least: alert rules CRUD, alerts and
 * their notifications, notification channels, investigations; every answer checked against the
 * served OpenAPI document at the end. Each area works in an organization of its own, so what it
 * lists is exactly what it made, even on a stack whose database holds other suites' data and
 * runs every role (the evaluator, notifier and investigator see only what this suite writes).
 * Call it inside a describe whose beforeAll has set `target`; `exchanges` receives every
 * exchange this suite makes (give each suite an array of its own).
 */
export function describeResourcesApi(target: () => ApiTarget, exchanges: Exchange[]): void {
  const record = <T>(baseUrl: string, path: string, init: RequestInit) =>
    recordedFetch<T>(exchanges, baseUrl, path, init);

  /** A request to the API with `key`, the body (if any) sent as JSON. */
  function call<T = unknown>(
    key: string,
    path: string,
    options: { method?: string; body?: unknown } = {},
  ): Promise<Reply<T>> {
    return record<T>(target().apiUrl, path, {
      method: options.method ?? 'GET',
      headers: {
        'x-api-key': key,
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
  }

  describe('resources: alert rules, alerts, notification channels, investigations', () => {
    describe('alert rules', () => {
      const rulesPath = '/api/v1/alerts/rules';
      const memoryHigh = {
        name: 'memory high',
        metric: 'memory_percent',
        condition: 'greater_than',
        threshold: 95,
        severity: 'warning',
      };
      let key: string;
      let readKey: string;
      let otherOrgKey: string;

      beforeAll(async () => {
        ({ key, readKey, otherOrgKey } = await areaKeys(target().db));
      });

      const create = async (body: object) => {
        const created = await call<AlertRuleResponse>(key, rulesPath, { method: 'POST', body });
        expect(created.status).toBe(201);
        return created.body;
      };

      it('creates a rule: 201, its Location, and the stored rule with every default', async () => {
        const created = await call<AlertRuleResponse>(key, rulesPath, {
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
          recovery_threshold: null,
          keep_firing_for_minutes: 0,
          no_data_minutes: null,
          no_data_state: 'alerting',
          renotify_minutes: null,
          message_template: null,
          flapping: null,
          created_at: expect.stringMatching(isoTime),
          updated_at: created.body.created_at,
        });
        const location = created.headers.get('location');
        expect(location).toBe(`${rulesPath}/${created.body.id}`);
        const got = await call<AlertRuleResponse>(key, location!);
        expect(got).toMatchObject({ status: 200, body: created.body });
      });

      it('lists the organization’s rules newest first, paged with limit and offset', async () => {
        const before = await call<AlertRuleListResponse>(key, rulesPath);
        const earlierIds = before.body.rules.map((rule) => rule.id);
        const first = await create({ ...memoryHigh, name: 'first' });
        const second = await create({ ...memoryHigh, name: 'second' });
        const third = await create({ ...memoryHigh, name: 'third' });
        const total = earlierIds.length + 3;

        const all = await call<AlertRuleListResponse>(key, rulesPath);
        expect(all.status).toBe(200);
        expect(all.body.rules.map((rule) => rule.id)).toEqual([
          third.id,
          second.id,
          first.id,
          ...earlierIds,
        ]);
        expect(all.body.rules[0]).toEqual(third);
        expect(all.body.pagination).toEqual({ limit: 50, offset: 0, total, has_more: false });

        const page = await call<AlertRuleListResponse>(key, `${rulesPath}?limit=2`);
        expect(page.body.rules.map((rule) => rule.id)).toEqual([third.id, second.id]);
        expect(page.body.pagination).toEqual({ limit: 2, offset: 0, total, has_more: true });
        const next = await call<AlertRuleListResponse>(key, `${rulesPath}?limit=2&offset=2`);
        expect(next.body.rules.map((rule) => rule.id)).toEqual(
          [first.id, ...earlierIds].slice(0, 2),
        );
        expect(next.body.pagination).toEqual({
          limit: 2,
          offset: 2,
          total,
          has_more: total > 4,
        });
        const past = await call<AlertRuleListResponse>(key, `${rulesPath}?offset=${total}`);
        expect(past.body).toEqual({
          rules: [],
          pagination: { limit: 50, offset: total, total, has_more: false },
        });

        const refused = await call<Problem>(key, `${rulesPath}?limit=0&offset=-1`);
        expect(refused).toMatchObject({ status: 422, body: problemBody(422) });
        expect(refused.body.errors?.map((error) => error.path).sort()).toEqual(['limit', 'offset']);
      });

      it('reads one rule and changes only the field a PATCH names', async () => {
        const rule = await create({ ...memoryHigh, name: 'to change', channels: ['email'] });
        const path = `${rulesPath}/${rule.id}`;
        const patched = await call<AlertRuleResponse>(key, path, {
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
        const got = await call<AlertRuleResponse>(key, path);
        expect(got).toMatchObject({ status: 200, body: patched.body });

        const empty = await call<Problem>(key, path, { method: 'PATCH', body: {} });
        expect(empty).toMatchObject({ status: 422, body: problemBody(422) });
        const readOnly = await call<Problem>(key, path, {
          method: 'PATCH',
          body: { id: unknownRuleId },
        });
        expect(readOnly.status).toBe(422);
        expect(readOnly.body.errors?.map((error) => error.path)).toEqual(['id']);
        expect((await call<AlertRuleResponse>(key, path)).body).toEqual(patched.body);
      });

      it('deletes a rule: 204 without a body, then 404, and it is no longer listed', async () => {
        const rule = await create({ ...memoryHigh, name: 'to delete' });
        const path = `${rulesPath}/${rule.id}`;
        const deleted = await call(key, path, { method: 'DELETE' });
        expect(deleted.status).toBe(204);
        expect(deleted.body).toBeUndefined();
        expect(await call<Problem>(key, path)).toMatchObject({
          status: 404,
          body: problemBody(404),
        });
        expect((await call(key, path, { method: 'DELETE' })).status).toBe(404);
        expect((await call(key, path, { method: 'PATCH', body: { threshold: 1 } })).status).toBe(
          404,
        );
        const listed = await call<AlertRuleListResponse>(key, `${rulesPath}?limit=100`);
        expect(listed.body.rules.map((each) => each.id)).not.toContain(rule.id);
      });

      it('is 404 for another organization’s, an unknown or a malformed rule id', async () => {
        const rule = await create({ ...memoryHigh, name: 'not theirs' });
        const path = `${rulesPath}/${rule.id}`;
        for (const method of ['GET', 'DELETE']) {
          const reply = await call<Problem>(otherOrgKey, path, { method });
          expect(reply, method).toMatchObject({ status: 404, body: problemBody(404) });
        }
        const patched = await call(otherOrgKey, path, { method: 'PATCH', body: { threshold: 1 } });
        expect(patched.status).toBe(404);
        for (const id of [unknownRuleId, 'nope']) {
          expect((await call(key, `${rulesPath}/${id}`)).status, id).toBe(404);
        }
        const theirs = await call<AlertRuleListResponse>(otherOrgKey, rulesPath);
        expect(theirs.body.rules).toEqual([]);
        // What the other organization tried changed nothing.
        expect((await call<AlertRuleResponse>(key, path)).body).toEqual(rule);
      });

      it('refuses a key without the write scope with 403 and stores nothing', async () => {
        const before = await call<AlertRuleListResponse>(readKey, rulesPath);
        expect(before.status).toBe(200);
        const refused = await call<Problem>(readKey, rulesPath, {
          method: 'POST',
          body: { ...memoryHigh, name: 'read only' },
        });
        expect(refused).toMatchObject({ status: 403, body: problemBody(403) });
        const after = await call<AlertRuleListResponse>(readKey, rulesPath);
        expect(after.body.pagination.total).toBe(before.body.pagination.total);
        const unauthenticated = await record<Problem>(target().apiUrl, rulesPath, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(memoryHigh),
        });
        expect(unauthenticated).toMatchObject({ status: 401, body: problemBody(401) });
      });
    });

    describe('alerts', () => {
      let orgId: string;
      let key: string;
      let otherOrgKey: string;
      /** Of a rule that notifies the webhook channel, which the organization never configures. */
      let active: AlertResponse;
      /** Of a rule that lists no channel, resolved since. */
      let resolved: AlertResponse;
      let notifiedRule: AlertRuleResponse;

      beforeAll(async () => {
        ({ orgId, key } = await newOrganization(target().db));
        otherOrgKey = (await newOrganization(target().db)).key;
        const rule = async (body: object) => {
          const created = await call<AlertRuleResponse>(key, '/api/v1/alerts/rules', {
            method: 'POST',
            // `info`: an info alert opens no investigation, so `investigation_id` stays null.
            body: {
              metric: 'disk_used_percent',
              condition: 'greater_than',
              threshold: 90,
              ...body,
            },
          });
          if (created.status !== 201) throw new Error(`rule not created: ${created.status}`);
          return created.body;
        };
        notifiedRule = await rule({ name: 'disk full', severity: 'info', channels: ['webhook'] });
        const quietRule = await rule({ name: 'disk quiet', severity: 'info' });
        const fired = await fireTestAlert(target().db, {
          orgId: orgId,
          ruleId: notifiedRule.id,
          host: 'web-1',
        });
        const toResolve = await fireTestAlert(target().db, {
          orgId: orgId,
          ruleId: quietRule.id,
          host: 'web-2',
        });
        await target().db.sql.begin((tx) =>
          resolveAlerts(tx, { orgId, ruleId: quietRule.id, host: 'web-2' }, new Date()),
        );
        active = (await call<AlertResponse>(key, `/api/v1/alerts/${fired.id}`)).body;
        resolved = (await call<AlertResponse>(key, `/api/v1/alerts/${toResolve.id}`)).body;
      });

      it('reads an alert with every field', async () => {
        const got = await call<AlertResponse>(key, `/api/v1/alerts/${active.id}`);
        expect(got.status).toBe(200);
        expect(got.body).toEqual({
          id: expect.stringMatching(/^alr_[0-9A-Z]{26}$/),
          rule_id: notifiedRule.id,
          rule_name: 'disk full',
          service_id: expect.stringMatching(/^svc_[0-9A-Z]{26}$/),
          host: 'web-1',
          metric: 'disk_used_percent',
          condition: 'greater_than',
          threshold: 90,
          severity: 'info',
          status: 'active',
          value: 97,
          started_at: expect.stringMatching(isoTime),
          fired_at: expect.stringMatching(isoTime),
          resolved_at: null,
          investigation_id: null,
          reason: 'threshold',
          acknowledged_at: null,
          acknowledged_by: null,
          acknowledgement_comment: null,
          silenced: false,
          flapping: false,
          labels: {},
          annotations: {},
        });
        expect(Date.parse(got.body.started_at)).toBeLessThan(Date.parse(got.body.fired_at));
        expect(resolved).toMatchObject({
          rule_name: 'disk quiet',
          host: 'web-2',
          status: 'resolved',
          resolved_at: expect.stringMatching(isoTime),
        });
      });

      it('lists the active alerts by default, and the others on request, newest first', async () => {
        const byDefault = await call<AlertListResponse>(key, '/api/v1/alerts');
        expect(byDefault.status).toBe(200);
        expect(byDefault.body).toEqual({
          alerts: [active],
          pagination: { limit: 50, offset: 0, total: 1, has_more: false },
        });
        const all = await call<AlertListResponse>(key, '/api/v1/alerts?status=all');
        expect(all.body.alerts).toEqual([resolved, active]);
        const onlyResolved = await call<AlertListResponse>(key, '/api/v1/alerts?status=resolved');
        expect(onlyResolved.body.alerts).toEqual([resolved]);
        const page = await call<AlertListResponse>(key, '/api/v1/alerts?status=all&limit=1');
        expect(page.body).toEqual({
          alerts: [resolved],
          pagination: { limit: 1, offset: 0, total: 2, has_more: true },
        });
        const ofRule = await call<AlertListResponse>(
          key,
          `/api/v1/alerts?status=all&rule_id=${notifiedRule.id}`,
        );
        expect(ofRule.body.alerts).toEqual([active]);
        const refused = await call<Problem>(key, '/api/v1/alerts?status=open');
        expect(refused).toMatchObject({ status: 422, body: problemBody(422) });
        expect(refused.body.errors?.map((error) => error.path)).toEqual(['status']);
      });

      it('answers an empty delivery record for an alert whose rule lists no channel', async () => {
        const record = await call<NotificationListResponse>(
          key,
          `/api/v1/alerts/${resolved.id}/notifications`,
        );
        expect(record.status).toBe(200);
        expect(record.body).toEqual({
          notifications: [],
          pagination: { limit: 50, offset: 0, total: 0, has_more: false },
        });
      });

      it('records the message to a channel without a target as failed, with the reason', async () => {
        const path = `/api/v1/alerts/${active.id}/notifications`;
        // The notifier works in the background: the message is pending until it has tried once.
        const record = await waitFor(
          async () => {
            const reply = await call<NotificationListResponse>(key, path);
            expect(reply.status).toBe(200);
            return reply.body.notifications[0]?.status === 'failed' ? reply.body : undefined;
          },
          investigationTimeoutMs,
          'the notifier to fail the message to the unconfigured webhook channel',
        );
        const reason = 'no webhook target is configured for the organization';
        expect(record).toEqual({
          notifications: [
            {
              id: expect.stringMatching(/^ntf_[0-9A-Z]{26}$/),
              alert_id: active.id,
              channel: 'webhook',
              transition: 'fired',
              idempotency_key: `${active.id}:fired`,
              status: 'failed',
              attempts: 1,
              next_attempt_at: null,
              last_error: reason,
              created_at: expect.stringMatching(isoTime),
              delivered_at: null,
              attempt_log: [
                {
                  attempt: 1,
                  attempted_at: expect.stringMatching(isoTime),
                  outcome: 'failed',
                  detail: reason,
                  duration_ms: expect.any(Number),
                },
              ],
            },
          ],
          pagination: { limit: 50, offset: 0, total: 1, has_more: false },
        });
        const beyond = await call<NotificationListResponse>(key, `${path}?offset=1`);
        expect(beyond.body).toEqual({
          notifications: [],
          pagination: { limit: 50, offset: 1, total: 1, has_more: false },
        });
      });

      it('is 404 for an unknown, a malformed or another organization’s alert', async () => {
        for (const [id, who] of [
          [unknownAlertId, key],
          ['alr_nope', key],
          [active.id, otherOrgKey],
        ] as const) {
          for (const path of [`/api/v1/alerts/${id}`, `/api/v1/alerts/${id}/notifications`]) {
            expect(await call<Problem>(who, path), path).toMatchObject({
              status: 404,
              body: problemBody(404),
            });
          }
        }
        const theirs = await call<AlertListResponse>(otherOrgKey, '/api/v1/alerts?status=all');
        expect(theirs.body.alerts).toEqual([]);
      });
    });

    describe('notification channels', () => {
      // This organization never has an alert fired: the notifier never sends to these targets,
      // which are host names it is never asked to reach.
      const channelsPath = '/api/v1/notification-channels';
      const slackUrl = 'https://hooks.slack.com/services/T0000000/B0000000/resources0Kq4';
      const webhookSecret = 'whsec-resources-0123456789-Zq7x';
      const slackTarget = { webhook_url: slackUrl };
      const emailTarget = {
        to: ['oncall@example.com', 'ops@example.com'],
        from: 'monitor@example.com',
      };
      const webhookTarget = { url: 'https://receiver.example/monitor-hook', secret: webhookSecret };
      let key: string;
      let readKey: string;
      let otherOrgKey: string;

      beforeAll(async () => {
        ({ key, readKey, otherOrgKey } = await areaKeys(target().db));
      });

      const put = <T = NotificationChannelResponse>(type: string, body: unknown, who = key) =>
        call<T>(who, `${channelsPath}/${type}`, { method: 'PUT', body });

      it('lists no channel before any is set', async () => {
        const listed = await call<NotificationChannelListResponse>(key, channelsPath);
        expect(listed.status).toBe(200);
        expect(listed.body).toEqual({
          channels: [],
          pagination: { limit: 50, offset: 0, total: 0, has_more: false },
        });
        for (const type of ['slack', 'email', 'webhook']) {
          const got = await call<Problem>(key, `${channelsPath}/${type}`);
          expect(got, type).toMatchObject({ status: 404, body: problemBody(404) });
        }
      });

      it('sets a target of each type: 200 with the stored channel, its secrets masked', async () => {
        const times = {
          created_at: expect.stringMatching(isoTime),
          updated_at: expect.stringMatching(isoTime),
        };
        const slack = await put('slack', slackTarget);
        expect(slack.status).toBe(200);
        // The Slack URL is itself the credential: its origin and last 4 characters show.
        expect(slack.body).toEqual({
          type: 'slack',
          webhook_url: 'https://hooks.slack.com/********0Kq4',
          ...times,
        });
        const email = await put('email', emailTarget);
        expect(email.status).toBe(200);
        expect(email.body).toEqual({ type: 'email', ...emailTarget, ...times });
        const webhook = await put('webhook', webhookTarget);
        expect(webhook.status).toBe(200);
        expect(webhook.body).toEqual({
          type: 'webhook',
          url: webhookTarget.url,
          secret: '********Zq7x',
          ...times,
        });
        for (const reply of [slack, email, webhook]) {
          expect(reply.body.updated_at).toBe(reply.body.created_at);
          expect(JSON.stringify(reply.body)).not.toContain(webhookSecret);
          expect(JSON.stringify(reply.body)).not.toContain(slackUrl);
        }
      });

      it('reads one and lists them by type, paged, never showing a secret', async () => {
        const each = await Promise.all(
          ['email', 'slack', 'webhook'].map((type) =>
            call<NotificationChannelResponse>(key, `${channelsPath}/${type}`),
          ),
        );
        expect(each.map((reply) => [reply.status, reply.body.type])).toEqual([
          [200, 'email'],
          [200, 'slack'],
          [200, 'webhook'],
        ]);
        expect(each[1]!.body).toMatchObject({
          webhook_url: 'https://hooks.slack.com/********0Kq4',
        });
        expect(each[2]!.body).toMatchObject({ secret: '********Zq7x' });
        const listed = await call<NotificationChannelListResponse>(key, channelsPath);
        expect(listed.body).toEqual({
          channels: each.map((reply) => reply.body),
          pagination: { limit: 50, offset: 0, total: 3, has_more: false },
        });
        const page = await call<NotificationChannelListResponse>(
          key,
          `${channelsPath}?limit=1&offset=1`,
        );
        expect(page.body).toEqual({
          channels: [each[1]!.body],
          pagination: { limit: 1, offset: 1, total: 3, has_more: true },
        });
        const readable = await call<NotificationChannelListResponse>(readKey, channelsPath);
        expect(readable.body).toEqual(listed.body);
        for (const reply of [...each, listed, readable]) {
          expect(JSON.stringify(reply.body)).not.toContain(webhookSecret);
          expect(JSON.stringify(reply.body)).not.toContain(slackUrl);
        }
      });

      it('replaces a target, keeping its creation time', async () => {
        const before = await call<NotificationChannelResponse>(key, `${channelsPath}/webhook`);
        const replaced = await put('webhook', {
          url: 'https://receiver.example/other-hook',
          secret: 'whsec-resources-replaced-Ab12',
        });
        expect(replaced.status).toBe(200);
        expect(replaced.body).toEqual({
          type: 'webhook',
          url: 'https://receiver.example/other-hook',
          secret: '********Ab12',
          created_at: before.body.created_at,
          updated_at: expect.stringMatching(isoTime),
        });
        expect(Date.parse(replaced.body.updated_at)).toBeGreaterThanOrEqual(
          Date.parse(before.body.updated_at),
        );
        expect((await call(key, `${channelsPath}/webhook`)).body).toEqual(replaced.body);
      });

      it('answers 422 naming the field for a bad target, and keeps the stored one', async () => {
        const stored = await call<NotificationChannelResponse>(key, `${channelsPath}/email`);
        for (const [type, body, path] of [
          ['email', { ...emailTarget, to: ['oncall@example.com', 'nope'] }, 'to[1]'],
          ['email', { to: emailTarget.to }, 'from'],
          ['webhook', { url: 'ftp://receiver.example/hook', secret: webhookSecret }, 'url'],
          ['webhook', { url: webhookTarget.url, secret: 'short' }, 'secret'],
          ['slack', { webhook_url: 'not a url' }, 'webhook_url'],
          [
            'slack',
            { webhook_url: 'https://user:password@hooks.slack.com/services/T/B/x' },
            'webhook_url',
          ],
        ] as const) {
          const refused = await put<Problem>(type, body);
          expect(refused, `${type} ${JSON.stringify(body)}`).toMatchObject({
            status: 422,
            body: problemBody(422),
          });
          const paths = refused.body.errors?.map((error) => error.path);
          expect(paths, `${type} ${JSON.stringify(body)}`).toEqual([path]);
        }
        expect((await call(key, `${channelsPath}/email`)).body).toEqual(stored.body);
      });

      it('refuses a key without the write scope with 403, and changes nothing', async () => {
        const before = await call<NotificationChannelListResponse>(readKey, channelsPath);
        expect(await put('slack', slackTarget, readKey)).toMatchObject({
          status: 403,
          body: problemBody(403),
        });
        const deleted = await call<Problem>(readKey, `${channelsPath}/slack`, { method: 'DELETE' });
        expect(deleted).toMatchObject({ status: 403, body: problemBody(403) });
        expect((await call(readKey, channelsPath)).body).toEqual(before.body);
      });

      it('keeps organizations apart, and is 404 for a type the API does not have', async () => {
        const theirs = await call<NotificationChannelListResponse>(otherOrgKey, channelsPath);
        expect(theirs.body.channels).toEqual([]);
        expect((await call(otherOrgKey, `${channelsPath}/slack`)).status).toBe(404);
        const theirDelete = await call(otherOrgKey, `${channelsPath}/slack`, { method: 'DELETE' });
        expect(theirDelete.status).toBe(404);
        expect((await call(key, `${channelsPath}/slack`)).status).toBe(200);
        expect((await put('sms', { webhook_url: 'https://sms.example' })).status).toBe(404);
        expect((await call(key, `${channelsPath}/sms`)).status).toBe(404);
      });

      it('removes a target: 204 without a body, then 404, and it is no longer listed', async () => {
        const path = `${channelsPath}/slack`;
        const deleted = await call(key, path, { method: 'DELETE' });
        expect(deleted.status).toBe(204);
        expect(deleted.body).toBeUndefined();
        expect(await call<Problem>(key, path)).toMatchObject({
          status: 404,
          body: problemBody(404),
        });
        expect((await call(key, path, { method: 'DELETE' })).status).toBe(404);
        const listed = await call<NotificationChannelListResponse>(key, channelsPath);
        expect(listed.body.channels.map((channel) => channel.type)).toEqual(['email', 'webhook']);
        expect(listed.body.pagination.total).toBe(2);
      });

      it('sets Alertmanagers: 200 with the password masked, listed by type, and removable', async () => {
        const password = 'am-password-resources-Pq9z';
        const target = {
          urls: ['https://alertmanager-1.example:9093', 'https://alertmanager-2.example:9093'],
          basic_auth: { username: 'monitor', password },
        };
        const stored = await put('alertmanager', target);
        expect(stored.status).toBe(200);
        expect(stored.body).toEqual({
          type: 'alertmanager',
          urls: target.urls,
          basic_auth: { username: 'monitor', password: '********Pq9z' },
          timeout_seconds: 10,
          created_at: expect.stringMatching(isoTime),
          updated_at: expect.stringMatching(isoTime),
        });
        const listed = await call<NotificationChannelListResponse>(readKey, channelsPath);
        expect(listed.body.channels.map((channel) => channel.type)).toEqual([
          'alertmanager',
          'email',
          'webhook',
        ]);
        expect(listed.body.channels[0]).toEqual(stored.body);
        expect(JSON.stringify(listed.body)).not.toContain(password);
        const refused = await put<Problem>('alertmanager', { urls: ['http://10.0.0.5:9093'] });
        expect(refused.status).toBe(422);
        expect(refused.body.errors?.map((error) => error.path)).toEqual(['urls[0]']);
        expect((await call(key, `${channelsPath}/alertmanager`, { method: 'DELETE' })).status).toBe(
          204,
        );
      });
    });

    describe('investigations', () => {
      const investigationsPath = '/api/v1/investigations';
      const minuteMs = 60_000;
      let orgId: string;
      let key: string;
      let readKey: string;
      let otherOrgKey: string;
      let otherOrgServiceId: string;
      let alert: AlertResponse;
      let serviceId: string;
      let alertInvestigation: InvestigationDetailResponse;
      let serviceInvestigation: InvestigationDetailResponse;
      /** The second investigation of the same service and range. */
      let repeatedInvestigationId: string;
      let serviceWindow: { from: string; to: string };

      /** Until the investigator has finished it (the investigator runs behind every target). */
      const finished = (id: string) =>
        waitFor(
          async () => {
            const reply = await call<InvestigationDetailResponse>(
              key,
              `${investigationsPath}/${id}`,
            );
            expect(reply.status).toBe(200);
            const { status } = reply.body;
            return status === 'completed' || status === 'failed' ? reply.body : undefined;
          },
          investigationTimeoutMs,
          `investigation ${id} to finish`,
        );

      beforeAll(async () => {
        ({ orgId, key } = await newOrganization(target().db));
        readKey = await addKey(target().db, orgId, ['read']);
        const other = await newOrganization(target().db);
        otherOrgKey = other.key;
        const rule = await call<AlertRuleResponse>(key, '/api/v1/alerts/rules', {
          method: 'POST',
          // `info` opens no investigation by itself: the POST below opens the first one.
          body: {
            name: 'load high',
            metric: 'load_average',
            condition: 'greater_than',
            threshold: 8,
            severity: 'info',
          },
        });
        if (rule.status !== 201) throw new Error(`rule not created: ${rule.status}`);
        const fired = await fireTestAlert(target().db, {
          orgId: orgId,
          ruleId: rule.body.id,
          host: 'web-1',
        });
        alert = (await call<AlertResponse>(key, `/api/v1/alerts/${fired.id}`)).body;

        // A host known only from what it reported: the writer stores it asynchronously.
        const now = Date.now();
        const ingested = await record(target().ingestUrl, '/api/v1/ingest', {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({
            host: 'db-1',
            timestamp: new Date(now - 30_000).toISOString(),
            metrics: { cpu_percent: 12.5, load_average: 0.4 },
            tags: { role: 'database' },
          }),
        });
        if (ingested.status !== 200) throw new Error(`ingest answered ${ingested.status}`);
        serviceId = await waitFor(
          async () => {
            const listed = await call<ServiceListResponse>(key, '/api/v1/services');
            return listed.body.services.find((service) => service.name === 'db-1')?.id;
          },
          investigationTimeoutMs,
          'db-1 to be listed',
        );
        serviceWindow = {
          from: new Date(now - 15 * minuteMs).toISOString(),
          to: new Date(now).toISOString(),
        };
        // A service of another organization (created as firing an alert does).
        const otherRule = await call<AlertRuleResponse>(other.key, '/api/v1/alerts/rules', {
          method: 'POST',
          body: {
            name: 'theirs',
            metric: 'load_average',
            condition: 'greater_than',
            threshold: 8,
            severity: 'info',
          },
        });
        otherOrgServiceId = (
          await fireTestAlert(target().db, {
            orgId: other.orgId,
            ruleId: otherRule.body.id,
            host: 'db-1',
          })
        ).serviceId;
      });

      it('opens one for an alert: 202 and its Location; asking again answers the same one', async () => {
        const opened = await call<InvestigationDetailResponse>(key, investigationsPath, {
          method: 'POST',
          body: { alert_id: alert.id },
        });
        expect(opened.status).toBe(202);
        expect(opened.body).toEqual({
          id: expect.stringMatching(/^inv_[0-9A-Z]{26}$/),
          alert_id: alert.id,
          service_id: alert.service_id,
          title: 'load high on web-1',
          status: 'queued',
          findings: [],
          created_at: expect.stringMatching(isoTime),
          updated_at: expect.stringMatching(isoTime),
          completed_at: null,
          analysis: null,
          timeline: [],
          recommendations: [],
        });
        const location = opened.headers.get('location');
        expect(location).toBe(`${investigationsPath}/${opened.body.id}`);

        const again = await call<InvestigationDetailResponse>(key, investigationsPath, {
          method: 'POST',
          body: { alert_id: alert.id },
        });
        expect(again.status).toBe(202);
        expect(again.headers.get('location')).toBe(location);
        // The investigator may have started or finished it meanwhile: only the identity holds.
        expect(again.body).toMatchObject({
          id: opened.body.id,
          alert_id: alert.id,
          created_at: opened.body.created_at,
        });
        const read = await call<AlertResponse>(key, `/api/v1/alerts/${alert.id}`);
        expect(read.body).toEqual({ ...alert, investigation_id: opened.body.id });
        alertInvestigation = opened.body;
      });

      it('opens one for a service over a range', async () => {
        const opened = await call<InvestigationDetailResponse>(key, investigationsPath, {
          method: 'POST',
          body: { service_id: serviceId, ...serviceWindow },
        });
        expect(opened.status).toBe(202);
        expect(opened.body).toEqual({
          id: expect.stringMatching(/^inv_[0-9A-Z]{26}$/),
          alert_id: null,
          service_id: serviceId,
          title: `db-1 from ${serviceWindow.from} to ${serviceWindow.to}`,
          status: 'queued',
          findings: [],
          created_at: expect.stringMatching(isoTime),
          updated_at: expect.stringMatching(isoTime),
          completed_at: null,
          analysis: null,
          timeline: [],
          recommendations: [],
        });
        expect(opened.headers.get('location')).toBe(`${investigationsPath}/${opened.body.id}`);
        // A range is not an alert: asking again opens another one.
        const another = await call<InvestigationDetailResponse>(key, investigationsPath, {
          method: 'POST',
          body: { service_id: serviceId, ...serviceWindow },
        });
        expect(another.status).toBe(202);
        expect(another.body.id).not.toBe(opened.body.id);
        serviceInvestigation = opened.body;
        repeatedInvestigationId = another.body.id;
      });

      it('completes both with a report: analysis, findings, timeline and recommendations', async () => {
        const reports: InvestigationDetailResponse[] = [];
        for (const opened of [alertInvestigation, serviceInvestigation]) {
          const report = await finished(opened.id);
          expect(report.status, opened.title).toBe('completed');
          expect(report, opened.title).toMatchObject({
            id: opened.id,
            alert_id: opened.alert_id,
            service_id: opened.service_id,
            title: opened.title,
            created_at: opened.created_at,
            completed_at: expect.stringMatching(isoTime),
            // Hosts of a fresh organization have no history: the analysis abstains, not guesses.
            analysis: {
              summary: expect.stringMatching(/\S/),
              root_cause: 'inconclusive',
              confidence: 0,
              method: expect.stringMatching(/^statistical/),
            },
          });
          expect(Date.parse(report.completed_at!)).toBeGreaterThanOrEqual(
            Date.parse(report.created_at),
          );
          expect(report.findings.length, opened.title).toBeGreaterThan(0);
          expect(report.recommendations.length, opened.title).toBeGreaterThan(0);
          const times = report.timeline.map((event) => Date.parse(event.at));
          expect(times).toEqual([...times].sort((a, b) => a - b));
          reports.push(report);
        }
        [alertInvestigation, serviceInvestigation] = reports as [
          InvestigationDetailResponse,
          InvestigationDetailResponse,
        ];
        // The alert's own window is on its timeline.
        expect(alertInvestigation.timeline).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ type: 'alert_started', at: alert.started_at }),
            expect.objectContaining({
              type: 'alert_fired',
              at: alert.fired_at,
              data: expect.objectContaining({ alert_id: alert.id, value: 97 }),
            }),
          ]),
        );
        expect((await finished(repeatedInvestigationId)).status).toBe('completed');
      });

      it('lists them newest first with their findings, filtered on request; reads one', async () => {
        const listed = await call<InvestigationListResponse>(key, investigationsPath);
        expect(listed.status).toBe(200);
        expect(listed.body.investigations.map((each) => each.id)).toEqual([
          repeatedInvestigationId,
          serviceInvestigation.id,
          alertInvestigation.id,
        ]);
        expect(listed.body.pagination).toEqual({
          limit: 50,
          offset: 0,
          total: 3,
          has_more: false,
        });
        // A list item is the detail without analysis, timeline and recommendations.
        expect(listed.body.investigations[2]).toEqual({
          id: alertInvestigation.id,
          alert_id: alertInvestigation.alert_id,
          service_id: alertInvestigation.service_id,
          title: alertInvestigation.title,
          status: 'completed',
          findings: alertInvestigation.findings,
          created_at: alertInvestigation.created_at,
          updated_at: alertInvestigation.updated_at,
          completed_at: alertInvestigation.completed_at,
        });

        const ofAlert = await call<InvestigationListResponse>(
          key,
          `${investigationsPath}?alert_id=${alert.id}`,
        );
        expect(ofAlert.body.investigations.map((each) => each.id)).toEqual([alertInvestigation.id]);
        const ofService = await call<InvestigationListResponse>(
          key,
          `${investigationsPath}?service_id=${serviceId}&status=completed&limit=1&offset=1`,
        );
        expect(ofService.body.investigations.map((each) => each.id)).toEqual([
          serviceInvestigation.id,
        ]);
        expect(ofService.body.pagination).toEqual({
          limit: 1,
          offset: 1,
          total: 2,
          has_more: false,
        });
        const queued = await call<InvestigationListResponse>(
          key,
          `${investigationsPath}?status=queued`,
        );
        expect(queued.body.investigations).toEqual([]);
        const refused = await call<Problem>(key, `${investigationsPath}?status=done`);
        expect(refused).toMatchObject({ status: 422, body: problemBody(422) });
        expect(refused.body.errors?.map((error) => error.path)).toEqual(['status']);

        const one = await call<InvestigationDetailResponse>(
          readKey,
          `${investigationsPath}/${serviceInvestigation.id}`,
        );
        expect(one).toMatchObject({ status: 200, body: serviceInvestigation });
      });

      it('is 404 for an unknown, a malformed or another organization’s investigation', async () => {
        for (const [id, who] of [
          [unknownInvestigationId, key],
          ['inv_nope', key],
          [alertInvestigation.id, otherOrgKey],
        ] as const) {
          const reply = await call<Problem>(who, `${investigationsPath}/${id}`);
          expect(reply, id).toMatchObject({ status: 404, body: problemBody(404) });
        }
      });

      it('answers 422 naming the field for an alert or service the organization does not have', async () => {
        const open = (who: string, body: unknown) =>
          call<Problem>(who, investigationsPath, { method: 'POST', body });
        for (const [who, body, path, message] of [
          [otherOrgKey, { alert_id: alert.id }, 'alert_id', 'names no alert of this organization'],
          [key, { alert_id: unknownAlertId }, 'alert_id', 'names no alert of this organization'],
          [
            key,
            { service_id: otherOrgServiceId, ...serviceWindow },
            'service_id',
            'names no service of this organization',
          ],
          [
            otherOrgKey,
            { service_id: serviceId, ...serviceWindow },
            'service_id',
            'names no service of this organization',
          ],
        ] as const) {
          expect(await open(who, body), JSON.stringify(body)).toMatchObject({
            status: 422,
            body: { status: 422, errors: [{ path, message }] },
          });
        }
        // Nothing was opened by them.
        const listed = await call<InvestigationListResponse>(key, investigationsPath);
        expect(listed.body.pagination.total).toBe(3);
      });

      it('answers 422 naming the field for a bad body, and 403 without the write scope', async () => {
        const open = (body: unknown, who = key) =>
          call<Problem>(who, investigationsPath, { method: 'POST', body });
        const hourAgo = new Date(Date.now() - 60 * minuteMs).toISOString();
        for (const [body, errors] of [
          [
            { alert_id: alert.id, service_id: serviceId },
            [{ path: 'service_id', message: 'is not allowed with alert_id' }],
          ],
          [{ service_id: serviceId, from: hourAgo }, [{ path: 'to', message: 'is required' }]],
          [
            { service_id: serviceId, from: serviceWindow.to, to: serviceWindow.from },
            [{ path: 'to', message: 'must be after from' }],
          ],
          [{}, [{ path: '', message: 'must give alert_id, or service_id with from and to' }]],
          [{ alert_id: 'web-1' }, [{ path: 'alert_id', message: expect.any(String) }]],
          [[], [{ path: '', message: 'must be a JSON object' }]],
        ] as const) {
          const refused = await open(body);
          expect(refused, JSON.stringify(body)).toMatchObject({
            status: 422,
            body: problemBody(422),
          });
          expect(refused.body.errors, JSON.stringify(body)).toEqual(errors);
        }
        expect(await open({ alert_id: alert.id }, readKey)).toMatchObject({
          status: 403,
          body: problemBody(403),
        });
        const listed = await call<InvestigationListResponse>(key, investigationsPath);
        expect(listed.body.pagination.total).toBe(3);
      });
    });

    it('answers only what the served OpenAPI document says', async () => {
      const served = await record<ServedDocument>(target().apiUrl, '/api/v1/openapi.json', {});
      expect(served.status).toBe(200);
      const checked = exchanges.filter((exchange) => exchange.path !== '/api/v1/openapi.json');
      expect(checked.length).toBeGreaterThan(50);
      expectExchangesDocumented(checked, served.body);
    });
  });
}
