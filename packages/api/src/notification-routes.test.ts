import { describe, expect, it } from 'vitest';
import { problemBody } from '@monitor/testkit/builders';
import type {
  ChannelType,
  NotificationChannelRecord,
  NotificationChannelStore,
  NotificationRecord,
} from '@monitor/db';
import type { ApiKeyAuthenticator, AuthenticatedKey } from '@monitor/auth';
import { createTargetAddressPolicy } from '@monitor/platform';
import { notificationRoutes } from './notification-routes.js';
import { createRoutesRouter } from './routes-router.js';
import { expectAnswersDocumented } from './testing/documented-answers.js';
import { serveRouter } from './testing/serve-router.js';

const alertId = 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A';
const otherAlertId = 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0B';
const secret = 'whsec-0123456789abcdef-k9Qz';

const keys: Record<string, AuthenticatedKey> = {
  'write-key': { keyId: 'key_w', orgId: 'org_a', scopes: ['read', 'write'] },
  'read-key': { keyId: 'key_r', orgId: 'org_a', scopes: ['read'] },
  'other-org-key': { keyId: 'key_o', orgId: 'org_b', scopes: ['read', 'write'] },
};

const authenticator: ApiKeyAuthenticator = {
  authenticate: (plaintext) => Promise.resolve(plaintext ? keys[plaintext] : undefined),
};

/** The channel store as a map, keyed by org and type. */
function fakeChannels(): NotificationChannelStore {
  const rows = new Map<string, NotificationChannelRecord>();
  const keyOf = (orgId: string, type: ChannelType) => `${orgId}/${type}`;
  return {
    putChannel(orgId, type, config) {
      const previous = rows.get(keyOf(orgId, type));
      const now = new Date('2026-11-22T10:00:00.000Z');
      const record = { orgId, type, config, createdAt: previous?.createdAt ?? now, updatedAt: now };
      rows.set(keyOf(orgId, type), record);
      return Promise.resolve(record);
    },
    getChannel: (orgId, type) => Promise.resolve(rows.get(keyOf(orgId, type))),
    listChannels: (orgId) =>
      Promise.resolve(
        [...rows.values()]
          .filter((row) => row.orgId === orgId)
          .sort((a, b) => a.type.localeCompare(b.type)),
      ),
    deleteChannel: (orgId, type) => Promise.resolve(rows.delete(keyOf(orgId, type))),
  };
}

const record: NotificationRecord = {
  id: 'ntf_01JDQ4ZK8X3N7Q9V5R2T6W8Y0C',
  alertId,
  channel: 'webhook',
  transition: 'fired',
  idempotencyKey: `${alertId}:fired`,
  status: 'pending',
  attempts: 1,
  nextAttemptAt: new Date('2026-11-22T10:00:10.000Z'),
  lastError: 'HTTP 500: try again',
  createdAt: new Date('2026-11-22T10:00:00.000Z'),
  deliveredAt: null,
  attemptLog: [
    {
      attempt: 1,
      attemptedAt: new Date('2026-11-22T10:00:00.500Z'),
      outcome: 'failed',
      detail: 'HTTP 500: try again',
      durationMs: 31,
    },
  ],
};

const { call, exchanges } = serveRouter(() =>
  createRoutesRouter(notificationRoutes, {
    deps: {
      channels: fakeChannels(),
      notifications: {
        listForAlert: (orgId, id) =>
          Promise.resolve(orgId === 'org_a' && id === alertId ? [record] : undefined),
      },
      targetPolicy: createTargetAddressPolicy(['10.9.0.0/16']),
    },
    authenticator,
  }),
);

describe('notificationRoutes, served', () => {
  it('stores a target of each type and lists them, masking the Slack URL and webhook secret', async () => {
    const slack = await call('/api/v1/notification-channels/slack', {
      method: 'PUT',
      key: 'write-key',
      body: { webhook_url: 'https://hooks.slack.com/services/T/B/x' },
    });
    expect(slack).toMatchObject({
      status: 200,
      body: {
        type: 'slack',
        webhook_url: 'https://hooks.slack.com/********/B/x',
        created_at: '2026-11-22T10:00:00.000Z',
        updated_at: '2026-11-22T10:00:00.000Z',
      },
    });
    const webhook = await call('/api/v1/notification-channels/webhook', {
      method: 'PUT',
      key: 'write-key',
      body: { url: 'https://receiver.example/hook', secret },
    });
    expect(webhook).toMatchObject({
      status: 200,
      body: { type: 'webhook', url: 'https://receiver.example/hook', secret: '********k9Qz' },
    });
    await call('/api/v1/notification-channels/email', {
      method: 'PUT',
      key: 'write-key',
      body: { to: ['ops@example.com'], from: 'monitor@example.com', ignored: true },
    });

    const list = await call('/api/v1/notification-channels', { key: 'read-key' });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({
      channels: [
        { type: 'email', to: ['ops@example.com'], from: 'monitor@example.com' },
        { type: 'slack' },
        { type: 'webhook', secret: '********k9Qz' },
      ],
      pagination: { limit: 50, offset: 0, total: 3, has_more: false },
    });
    expect(JSON.stringify(list.body)).not.toContain(secret);
    expect(
      JSON.stringify(
        (await call('/api/v1/notification-channels/webhook', { key: 'read-key' })).body,
      ),
    ).not.toContain(secret);
    const page = await call('/api/v1/notification-channels?limit=1&offset=1', { key: 'read-key' });
    expect(page.body).toMatchObject({
      channels: [{ type: 'slack' }],
      pagination: { limit: 1, offset: 1, total: 3, has_more: true },
    });
  });

  it('keeps organizations apart', async () => {
    const other = await call('/api/v1/notification-channels', { key: 'other-org-key' });
    expect(other.body).toMatchObject({ channels: [], pagination: { total: 0 } });
    expect(
      (await call('/api/v1/notification-channels/slack', { key: 'other-org-key' })).status,
    ).toBe(404);
    expect(
      (
        await call('/api/v1/notification-channels/slack', {
          method: 'DELETE',
          key: 'other-org-key',
        })
      ).status,
    ).toBe(404);
  });

  it('answers 422 naming each invalid field', async () => {
    const result = await call('/api/v1/notification-channels/email', {
      method: 'PUT',
      key: 'write-key',
      body: { to: ['ops@example.com', 'nope'], from: 42 },
    });
    expect(result).toMatchObject({
      status: 422,
      body: {
        errors: [
          { path: 'to[1]', message: 'must be an email address such as ops@example.com' },
          { path: 'from', message: expect.any(String) },
        ],
      },
    });
    const webhook = await call('/api/v1/notification-channels/webhook', {
      method: 'PUT',
      key: 'write-key',
      body: { url: 'ftp://x.example', secret: 'short' },
    });
    expect(webhook).toMatchObject({
      status: 422,
      body: {
        errors: [
          { path: 'url', message: 'must be an http or https URL' },
          { path: 'secret', message: 'must be 16 to 256 characters' },
        ],
      },
    });
    const credentials = 'must not contain a user name or password';
    const internal = (refusal: string) =>
      `must not lead to ${refusal} (allowed only in NOTIFIER_ALLOWED_TARGET_NETWORKS)`;
    for (const [type, body, path, message] of [
      [
        'slack',
        { webhook_url: 'https://user:pass@hooks.slack.com/services/T/B/x' },
        'webhook_url',
        credentials,
      ],
      ['webhook', { url: 'https://token@receiver.example/hook', secret }, 'url', credentials],
      ['webhook', { url: 'http://:pass@receiver.example/hook', secret }, 'url', credentials],
      [
        'webhook',
        { url: 'http://169.254.169.254/latest/meta-data/', secret },
        'url',
        internal('a link-local address'),
      ],
      [
        'webhook',
        { url: 'http://localhost:8080/hook', secret },
        'url',
        internal('a loopback address'),
      ],
      [
        'webhook',
        { url: 'http://[::ffff:10.0.0.1]/hook', secret },
        'url',
        internal('a private address'),
      ],
      [
        'slack',
        { webhook_url: 'https://192.168.1.10/services/T/B/x' },
        'webhook_url',
        internal('a private address'),
      ],
    ] as const) {
      expect(
        await call(`/api/v1/notification-channels/${type}`, {
          method: 'PUT',
          key: 'write-key',
          body,
        }),
        `${type} ${JSON.stringify(body)}`,
      ).toMatchObject({ status: 422, body: { errors: [{ path, message }] } });
    }
    // An allowed network, and a host name (checked by the notifier where it connects).
    for (const url of ['http://10.9.3.4:9000/hook', 'https://receiver.example/hook']) {
      expect(
        await call('/api/v1/notification-channels/webhook', {
          method: 'PUT',
          key: 'write-key',
          body: { url, secret },
        }),
        url,
      ).toMatchObject({ status: 200 });
    }
    const malformed = await call('/api/v1/notification-channels/slack', {
      method: 'PUT',
      key: 'write-key',
      raw: { data: '{"webhook_url":', contentType: 'application/json' },
    });
    expect(malformed).toMatchObject({ status: 422, body: problemBody(422) });
    const wrongLimit = await call('/api/v1/notification-channels?limit=0', { key: 'read-key' });
    expect(wrongLimit).toMatchObject({ status: 422, body: { errors: [{ path: 'limit' }] } });
  });

  it('stores Alertmanagers, masking the password, and refuses an internal or credentialed URL', async () => {
    const path = '/api/v1/notification-channels/alertmanager';
    const stored = await call(path, {
      method: 'PUT',
      key: 'write-key',
      body: {
        urls: ['https://am-1.example:9093', 'http://10.9.3.4:9093'],
        basic_auth: { username: 'monitor', password: 'am-password-x7Qp' },
      },
    });
    expect(stored).toMatchObject({
      status: 200,
      body: {
        type: 'alertmanager',
        urls: ['https://am-1.example:9093', 'http://10.9.3.4:9093'],
        basic_auth: { username: 'monitor', password: '********x7Qp' },
        timeout_seconds: 10,
      },
    });
    const read = await call(path, { key: 'read-key' });
    expect(JSON.stringify(read.body)).not.toContain('am-password');
    for (const [urls, errorPath, message] of [
      [
        ['https://am.example:9093', 'http://127.0.0.1:9093'],
        'urls[1]',
        'must not lead to a loopback address (allowed only in NOTIFIER_ALLOWED_TARGET_NETWORKS)',
      ],
      [['http://user:pw@am.example:9093'], 'urls[0]', 'must not contain a user name or password'],
      [[], 'urls', 'must list at least one URL'],
    ] as const) {
      expect(
        await call(path, { method: 'PUT', key: 'write-key', body: { urls } }),
        JSON.stringify(urls),
      ).toMatchObject({ status: 422, body: { errors: [{ path: errorPath, message }] } });
    }
    expect((await call(path, { method: 'DELETE', key: 'write-key' })).status).toBe(204);
  });

  it('answers 415 for a body that is not JSON', async () => {
    const result = await call('/api/v1/notification-channels/slack', {
      method: 'PUT',
      key: 'write-key',
      raw: {
        data: 'webhook_url=https://x.example',
        contentType: 'application/x-www-form-urlencoded',
      },
    });
    expect(result).toMatchObject({ status: 415, body: problemBody(415) });
  });

  it('answers 404 for an unknown channel type, and a type without a target', async () => {
    expect(
      await call('/api/v1/notification-channels/sms', {
        method: 'PUT',
        key: 'write-key',
        body: { webhook_url: 'https://x.example' },
      }),
    ).toMatchObject({ status: 404, body: problemBody(404) });
    expect((await call('/api/v1/notification-channels/sms', { key: 'read-key' })).status).toBe(404);
    expect((await call('/api/v1/notification-channels/SLACK', { key: 'read-key' })).status).toBe(
      404,
    );
  });

  it('needs the write scope to change a target and the read scope to see one', async () => {
    const put = await call('/api/v1/notification-channels/slack', {
      method: 'PUT',
      key: 'read-key',
      body: { webhook_url: 'https://x.example' },
    });
    expect(put).toMatchObject({ status: 403, body: problemBody(403) });
    expect(
      (await call('/api/v1/notification-channels/slack', { method: 'DELETE', key: 'read-key' }))
        .status,
    ).toBe(403);
    expect((await call('/api/v1/notification-channels')).status).toBe(401);
  });

  it('deletes a target: 204, then 404', async () => {
    await call('/api/v1/notification-channels/slack', {
      method: 'PUT',
      key: 'other-org-key',
      body: { webhook_url: 'https://hooks.example/x' },
    });
    const deleted = await call('/api/v1/notification-channels/slack', {
      method: 'DELETE',
      key: 'other-org-key',
    });
    expect(deleted).toEqual({ status: 204, headers: expect.anything(), body: undefined });
    expect(
      (await call('/api/v1/notification-channels/slack', { key: 'other-org-key' })).status,
    ).toBe(404);
  });

  it('lists an alert’s notifications with their attempts', async () => {
    const result = await call(`/api/v1/alerts/${alertId}/notifications`, { key: 'read-key' });
    expect(result).toEqual({
      status: 200,
      headers: expect.anything(),
      body: {
        notifications: [
          {
            id: 'ntf_01JDQ4ZK8X3N7Q9V5R2T6W8Y0C',
            alert_id: alertId,
            channel: 'webhook',
            transition: 'fired',
            idempotency_key: `${alertId}:fired`,
            status: 'pending',
            attempts: 1,
            next_attempt_at: '2026-11-22T10:00:10.000Z',
            last_error: 'HTTP 500: try again',
            created_at: '2026-11-22T10:00:00.000Z',
            delivered_at: null,
            attempt_log: [
              {
                attempt: 1,
                attempted_at: '2026-11-22T10:00:00.500Z',
                outcome: 'failed',
                detail: 'HTTP 500: try again',
                duration_ms: 31,
              },
            ],
          },
        ],
        pagination: { limit: 50, offset: 0, total: 1, has_more: false },
      },
    });
  });

  it('answers 404 for an unknown, malformed or other organization’s alert', async () => {
    for (const [id, key] of [
      [otherAlertId, 'read-key'],
      ['alr_nope', 'read-key'],
      [alertId, 'other-org-key'],
    ] as const) {
      expect(await call(`/api/v1/alerts/${id}/notifications`, { key })).toMatchObject({
        status: 404,
        body: problemBody(404),
      });
    }
  });

  it('answers 405 with Allow for another method on a known path', async () => {
    const result = await call('/api/v1/notification-channels', {
      method: 'POST',
      key: 'write-key',
    });
    expect(result).toMatchObject({ status: 405, body: problemBody(405) });
    expect(result.headers.get('allow')).toBe('GET, HEAD');
    const single = await call('/api/v1/notification-channels/slack', {
      method: 'PATCH',
      key: 'write-key',
    });
    expect(single.headers.get('allow')).toBe('GET, PUT, DELETE, HEAD');
  });
});

describe('notificationRoutes, documented', () => {
  it('document every response these tests received, with a schema the body satisfies', () => {
    expect(exchanges.length).toBeGreaterThan(20);
    expectAnswersDocumented(exchanges);
  });
});
