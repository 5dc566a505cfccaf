import { beforeAll, describe, expect, it } from 'vitest';
import { resolveAlerts } from '@monitor/db';
import type {
  AlertListResponse,
  AlertResponse,
  AlertRuleCreateRequest,
  AlertRuleResponse,
  NotificationListResponse,
} from '@monitor/schemas';
import type { ApiExchange } from '@monitor/testkit/builders';
import {
  buildAlertResponse,
  buildAlertRuleCreateRequest,
  createApiCall,
  problemBody,
  waitFor,
} from '@monitor/testkit/builders';
import type { ApiTarget } from '../api-target.js';
import { fireTestAlert, newOrganization } from '../api-target.js';
import { expectDocumentedAsServed } from '../openapi-conformance.js';
import type { Problem } from './suite-support.js';
import { backgroundWorkTimeoutMs, isoTime, unknownIds } from './suite-support.js';

type Rule = Record<string, unknown> & { id: string };
type AlertItem = Record<string, unknown> & { id: string; silenced: boolean };
type Silence = Record<string, unknown> & { id: string; state: string };

/**
 * Alerts over HTTP: reading and listing them with their filters, the record of their
 * notifications (the notifier runs behind every target), acknowledgement, and `silenced` while
 * a silence matches. Alerts are fired straight into the database (the API has no route for it)
 * for hosts that never send a sample, so a running evaluator leaves them alone. Each part works
 * in an organization of its own; every answer is checked against the served OpenAPI document at
 * the end. Call it inside a describe whose beforeAll has set `target`.
 */
export function describeAlertsApi(target: () => ApiTarget, exchanges: ApiExchange[]): void {
  const call = createApiCall({ baseUrl: () => target().apiUrl, exchanges });

  describe('alerts', () => {
    describe('reading and listing, and their notifications', () => {
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
        const rule = async (fields: Partial<AlertRuleCreateRequest>) => {
          const created = await call<AlertRuleResponse>('/api/v1/alerts/rules', {
            key,
            method: 'POST',
            // `info`: an info alert opens no investigation, so `investigation_id` stays null.
            body: buildAlertRuleCreateRequest({
              metric: 'disk_used_percent',
              severity: 'info',
              ...fields,
            }),
          });
          if (created.status !== 201) throw new Error(`rule not created: ${created.status}`);
          return created.body;
        };
        notifiedRule = await rule({ name: 'disk full', channels: ['webhook'] });
        const quietRule = await rule({ name: 'disk quiet' });
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
        active = (await call<AlertResponse>(`/api/v1/alerts/${fired.id}`, { key })).body;
        resolved = (await call<AlertResponse>(`/api/v1/alerts/${toResolve.id}`, { key })).body;
      });

      it('reads an alert with every field', async () => {
        const got = await call<AlertResponse>(`/api/v1/alerts/${active.id}`, { key });
        expect(got.status).toBe(200);
        expect(got.body).toEqual(
          buildAlertResponse({
            id: expect.stringMatching(/^alr_[0-9A-Z]{26}$/),
            rule_id: notifiedRule.id,
            rule_name: 'disk full',
            service_id: expect.stringMatching(/^svc_[0-9A-Z]{26}$/),
            metric: 'disk_used_percent',
            severity: 'info',
            started_at: expect.stringMatching(isoTime),
            fired_at: expect.stringMatching(isoTime),
          }),
        );
        expect(Date.parse(got.body.started_at)).toBeLessThan(Date.parse(got.body.fired_at));
        expect(resolved).toMatchObject({
          rule_name: 'disk quiet',
          host: 'web-2',
          status: 'resolved',
          resolved_at: expect.stringMatching(isoTime),
        });
      });

      it('lists the active alerts by default, and the others on request, newest first', async () => {
        const byDefault = await call<AlertListResponse>('/api/v1/alerts', { key });
        expect(byDefault.status).toBe(200);
        expect(byDefault.body).toEqual({
          alerts: [active],
          pagination: { limit: 50, offset: 0, total: 1, has_more: false },
        });
        const all = await call<AlertListResponse>('/api/v1/alerts?status=all', { key });
        expect(all.body.alerts).toEqual([resolved, active]);
        const onlyResolved = await call<AlertListResponse>('/api/v1/alerts?status=resolved', {
          key,
        });
        expect(onlyResolved.body.alerts).toEqual([resolved]);
        const page = await call<AlertListResponse>('/api/v1/alerts?status=all&limit=1', { key });
        expect(page.body).toEqual({
          alerts: [resolved],
          pagination: { limit: 1, offset: 0, total: 2, has_more: true },
        });
        const ofRule = await call<AlertListResponse>(
          `/api/v1/alerts?status=all&rule_id=${notifiedRule.id}`,
          { key },
        );
        expect(ofRule.body.alerts).toEqual([active]);
        const refused = await call<Problem>('/api/v1/alerts?status=open', { key });
        expect(refused).toMatchObject({ status: 422, body: problemBody(422) });
        expect(refused.body.errors?.map((error) => error.path)).toEqual(['status']);
      });

      it('answers an empty delivery record for an alert whose rule lists no channel', async () => {
        const record = await call<NotificationListResponse>(
          `/api/v1/alerts/${resolved.id}/notifications`,
          { key },
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
            const reply = await call<NotificationListResponse>(path, { key });
            expect(reply.status).toBe(200);
            return reply.body.notifications[0]?.status === 'failed' ? reply.body : undefined;
          },
          backgroundWorkTimeoutMs,
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
        const beyond = await call<NotificationListResponse>(`${path}?offset=1`, { key });
        expect(beyond.body).toEqual({
          notifications: [],
          pagination: { limit: 50, offset: 1, total: 1, has_more: false },
        });
      });

      it('is 404 for an unknown, a malformed or another organization’s alert', async () => {
        for (const [id, who] of [
          [unknownIds.alert, key],
          ['alr_nope', key],
          [active.id, otherOrgKey],
        ] as const) {
          for (const path of [`/api/v1/alerts/${id}`, `/api/v1/alerts/${id}/notifications`]) {
            expect(await call<Problem>(path, { key: who }), path).toMatchObject({
              status: 404,
              body: problemBody(404),
            });
          }
        }
        const theirs = await call<AlertListResponse>('/api/v1/alerts?status=all', {
          key: otherOrgKey,
        });
        expect(theirs.body.alerts).toEqual([]);
      });
    });

    describe('acknowledgement, silenced and their filters', () => {
      let key: string;
      let orgId: string;
      let ruleId: string;
      let web1: string;
      let web2: string;

      beforeAll(async () => {
        ({ key, orgId } = await newOrganization(target().db));
        const created = await call<Rule>('/api/v1/alerts/rules', {
          key,
          method: 'POST',
          body: buildAlertRuleCreateRequest({ name: 'for alerts' }),
        });
        ruleId = created.body.id;
        const fire = async (host: string) =>
          (await fireTestAlert(target().db, { orgId, ruleId, host })).id;
        web1 = await fire('web-1');
        web2 = await fire('web-2');
      });

      it('returns its reason, acknowledgement, silenced, flapping, labels and annotations on every alert', async () => {
        const got = await call<AlertItem>(`/api/v1/alerts/${web1}`, { key });
        expect(got.status).toBe(200);
        // Not acknowledged, silenced or flapping, no labels or annotations: the builder's alert.
        expect(got.body).toEqual(
          buildAlertResponse({
            id: web1,
            rule_id: ruleId,
            rule_name: 'for alerts',
            service_id: expect.stringMatching(/^svc_[0-9A-Z]{26}$/),
            started_at: expect.stringMatching(isoTime),
            fired_at: expect.stringMatching(isoTime),
            // A critical alert opens an investigation.
            investigation_id: expect.stringMatching(/^inv_[0-9A-Z]{26}$/),
          }),
        );
      });

      it('acknowledges (again keeps the first), filters on it, and undoes it', async () => {
        const path = `/api/v1/alerts/${web1}/acknowledge`;
        const first = await call<AlertItem>(path, {
          key,
          method: 'POST',
          body: { comment: 'on it' },
        });
        expect(first.status).toBe(200);
        expect(first.body).toMatchObject({
          id: web1,
          acknowledged_at: expect.stringMatching(/Z$/),
          acknowledged_by: expect.stringMatching(/^key_/),
          acknowledgement_comment: 'on it',
        });
        // Again, without a body at all: the first acknowledgement stays.
        const again = await call<AlertItem>(path, { key, method: 'POST' });
        expect(again.status).toBe(200);
        expect(again.body).toEqual(first.body);
        const acknowledged = await call<{ alerts: AlertItem[] }>(
          '/api/v1/alerts?acknowledged=true',
          { key },
        );
        expect(acknowledged.body.alerts.map((alert) => alert.id)).toEqual([web1]);
        const open = await call<{ alerts: AlertItem[] }>('/api/v1/alerts?acknowledged=false', {
          key,
        });
        expect(open.body.alerts.map((alert) => alert.id)).toEqual([web2]);
        const undone = await call<AlertItem>(path, { key, method: 'DELETE' });
        expect(undone.status).toBe(200);
        expect(undone.body).toMatchObject({ acknowledged_at: null, acknowledgement_comment: null });
      });

      it('refuses a bad acknowledgement, an unknown alert and a key without write', async () => {
        const bad = await call<Problem>(`/api/v1/alerts/${web1}/acknowledge`, {
          key,
          method: 'POST',
          body: { comment: 5, by: 'me' },
        });
        expect(bad.status).toBe(422);
        expect(bad.body.errors?.map((error) => error.path)).toEqual(['comment', 'by']);
        const unknown = await call('/api/v1/alerts/alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A/acknowledge', {
          key,
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
        const refused = await call<Problem>('/api/v1/alerts?acknowledged=yes&silenced=1&reason=x', {
          key,
        });
        expect(refused.status).toBe(422);
        expect(refused.body.errors?.map((error) => error.path)).toEqual([
          'acknowledged',
          'silenced',
          'reason',
        ]);
      });

      it('marks alerts silenced while a silence matches them, and filters on it', async () => {
        const created = await call<Silence>('/api/v1/silences', {
          key,
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
        const silenced = await call<{ alerts: AlertItem[] }>('/api/v1/alerts?silenced=true', {
          key,
        });
        expect(silenced.body.alerts.map((alert) => [alert.id, alert.silenced])).toEqual([
          [web2, true],
        ]);
        const others = await call<{ alerts: AlertItem[] }>('/api/v1/alerts?silenced=false', {
          key,
        });
        expect(others.body.alerts.map((alert) => alert.id)).toEqual([web1]);
        // The service's active alerts say so too.
        const serviceId = silenced.body.alerts[0]!['service_id'] as string;
        const service = await call<{ active_alerts: AlertItem[] }>(
          `/api/v1/services/${serviceId}`,
          { key },
        );
        expect(service.body.active_alerts.map((alert) => [alert.id, alert.silenced])).toEqual([
          [web2, true],
        ]);

        const expired = await call(`/api/v1/silences/${created.body.id}`, {
          key,
          method: 'DELETE',
        });
        expect(expired.status).toBe(204);
        expect((await call<AlertItem>(`/api/v1/alerts/${web2}`, { key })).body.silenced).toBe(
          false,
        );
        expect(
          (await call<Silence>(`/api/v1/silences/${created.body.id}`, { key })).body.state,
        ).toBe('expired');
      });
    });

    it('answers only what the served OpenAPI document says', async () => {
      expect(exchanges.length).toBeGreaterThan(25);
      await expectDocumentedAsServed(target().apiUrl, exchanges);
    });
  });
}
