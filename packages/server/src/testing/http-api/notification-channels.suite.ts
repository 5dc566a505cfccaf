import { beforeAll, describe, expect, it } from 'vitest';
import type {
  NotificationChannelListResponse,
  NotificationChannelResponse,
} from '@monitor/schemas';
import type { ApiExchange } from '@monitor/testkit/builders';
import { createApiCall, problemBody } from '@monitor/testkit/builders';
import type { ApiTarget } from '../api-target.js';
import { expectDocumentedAsServed } from '../openapi-conformance.js';
import type { Problem } from './suite-support.js';
import { isoTime, newOrganizationKeys } from './suite-support.js';

/**
 * Notification channels over HTTP: a target of each type set, read, listed, replaced and
 * removed, secrets always masked, validation, scopes and isolation between organizations. The
 * organization never has an alert fired, so the notifier never sends to these targets. Every
 * answer is checked against the served OpenAPI document at the end. Call it inside a describe
 * whose beforeAll has set `target`.
 */
export function describeNotificationChannelsApi(
  target: () => ApiTarget,
  exchanges: ApiExchange[],
): void {
  const call = createApiCall({ baseUrl: () => target().apiUrl, exchanges });

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
      ({ key, readKey, otherOrgKey } = await newOrganizationKeys(target().db));
    });

    const put = <T = NotificationChannelResponse>(type: string, body: unknown, who = key) =>
      call<T>(`${channelsPath}/${type}`, { key: who, method: 'PUT', body });

    it('lists no channel before any is set', async () => {
      const listed = await call<NotificationChannelListResponse>(channelsPath, { key });
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual({
        channels: [],
        pagination: { limit: 50, offset: 0, total: 0, has_more: false },
      });
      for (const type of ['slack', 'email', 'webhook']) {
        const got = await call<Problem>(`${channelsPath}/${type}`, { key });
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
          call<NotificationChannelResponse>(`${channelsPath}/${type}`, { key }),
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
      const listed = await call<NotificationChannelListResponse>(channelsPath, { key });
      expect(listed.body).toEqual({
        channels: each.map((reply) => reply.body),
        pagination: { limit: 50, offset: 0, total: 3, has_more: false },
      });
      const page = await call<NotificationChannelListResponse>(`${channelsPath}?limit=1&offset=1`, {
        key,
      });
      expect(page.body).toEqual({
        channels: [each[1]!.body],
        pagination: { limit: 1, offset: 1, total: 3, has_more: true },
      });
      const readable = await call<NotificationChannelListResponse>(channelsPath, { key: readKey });
      expect(readable.body).toEqual(listed.body);
      for (const reply of [...each, listed, readable]) {
        expect(JSON.stringify(reply.body)).not.toContain(webhookSecret);
        expect(JSON.stringify(reply.body)).not.toContain(slackUrl);
      }
    });

    it('replaces a target, keeping its creation time', async () => {
      const before = await call<NotificationChannelResponse>(`${channelsPath}/webhook`, { key });
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
      expect((await call(`${channelsPath}/webhook`, { key })).body).toEqual(replaced.body);
    });

    it('answers 422 naming the field for a bad target, and keeps the stored one', async () => {
      const stored = await call<NotificationChannelResponse>(`${channelsPath}/email`, { key });
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
      expect((await call(`${channelsPath}/email`, { key })).body).toEqual(stored.body);
    });

    it('refuses a key without the write scope with 403, and changes nothing', async () => {
      const before = await call<NotificationChannelListResponse>(channelsPath, { key: readKey });
      expect(await put('slack', slackTarget, readKey)).toMatchObject({
        status: 403,
        body: problemBody(403),
      });
      const deleted = await call<Problem>(`${channelsPath}/slack`, {
        key: readKey,
        method: 'DELETE',
      });
      expect(deleted).toMatchObject({ status: 403, body: problemBody(403) });
      expect((await call(channelsPath, { key: readKey })).body).toEqual(before.body);
    });

    it('keeps organizations apart, and is 404 for a type the API does not have', async () => {
      const theirs = await call<NotificationChannelListResponse>(channelsPath, {
        key: otherOrgKey,
      });
      expect(theirs.body.channels).toEqual([]);
      expect((await call(`${channelsPath}/slack`, { key: otherOrgKey })).status).toBe(404);
      const theirDelete = await call(`${channelsPath}/slack`, {
        key: otherOrgKey,
        method: 'DELETE',
      });
      expect(theirDelete.status).toBe(404);
      expect((await call(`${channelsPath}/slack`, { key })).status).toBe(200);
      expect((await put('sms', { webhook_url: 'https://sms.example' })).status).toBe(404);
      expect((await call(`${channelsPath}/sms`, { key })).status).toBe(404);
    });

    it('removes a target: 204 without a body, then 404, and it is no longer listed', async () => {
      const path = `${channelsPath}/slack`;
      const deleted = await call(path, { key, method: 'DELETE' });
      expect(deleted.status).toBe(204);
      expect(deleted.body).toBeUndefined();
      expect(await call<Problem>(path, { key })).toMatchObject({
        status: 404,
        body: problemBody(404),
      });
      expect((await call(path, { key, method: 'DELETE' })).status).toBe(404);
      const listed = await call<NotificationChannelListResponse>(channelsPath, { key });
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
      const listed = await call<NotificationChannelListResponse>(channelsPath, { key: readKey });
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
      expect((await call(`${channelsPath}/alertmanager`, { key, method: 'DELETE' })).status).toBe(
        204,
      );
    });

    it('answers only what the served OpenAPI document says', async () => {
      expect(exchanges.length).toBeGreaterThan(30);
      await expectDocumentedAsServed(target().apiUrl, exchanges);
    });
  });
}
