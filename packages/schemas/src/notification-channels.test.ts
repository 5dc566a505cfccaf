import { describe, expect, it } from 'vitest';
import {
  isNotificationChannelType,
  notificationChannelSchema,
  notificationSchema,
  notificationTargetSchemas,
} from './notification-channels.js';

/** The (path, message) pairs of a failed parse, paths joined with dots. */
function issuesOf(result: {
  success: boolean;
  error?: { issues: { path: PropertyKey[]; message: string }[] };
}) {
  return (result.error?.issues ?? []).map((issue) => [
    issue.path.map(String).join('.'),
    issue.message,
  ]);
}

describe('notification target schemas', () => {
  it('accept a target of each type', () => {
    expect(
      notificationTargetSchemas.slack.parse({
        webhook_url: 'https://hooks.slack.com/services/T/B/x',
      }),
    ).toEqual({ webhook_url: 'https://hooks.slack.com/services/T/B/x' });
    expect(
      notificationTargetSchemas.email.parse({
        to: ['ops@example.com'],
        from: 'monitor@example.com',
      }),
    ).toEqual({ to: ['ops@example.com'], from: 'monitor@example.com' });
    expect(
      notificationTargetSchemas.webhook.parse({
        url: 'http://10.0.0.5:8080/hook',
        secret: 'whsec-0123456789abcdef',
      }),
    ).toMatchObject({ url: 'http://10.0.0.5:8080/hook' });
  });

  it('refuse URLs other than http and https', () => {
    for (const url of ['ftp://files.example/x', 'javascript:alert(1)', 'hooks.slack.com/x', '']) {
      expect(issuesOf(notificationTargetSchemas.slack.safeParse({ webhook_url: url }))).toEqual([
        ['webhook_url', 'must be an http or https URL'],
      ]);
    }
  });

  it('name every bad address of an email target by its index', () => {
    const result = notificationTargetSchemas.email.safeParse({
      to: ['ops@example.com', 'not-an-address'],
      from: 'Monitor <m@example.com>',
    });
    expect(issuesOf(result)).toEqual([
      ['to.1', 'must be an email address such as ops@example.com'],
      ['from', 'must be an email address such as ops@example.com'],
    ]);
    expect(
      issuesOf(notificationTargetSchemas.email.safeParse({ to: [], from: 'm@example.com' })),
    ).toEqual([['to', 'must list at least one address']]);
  });

  it('require a webhook secret of at least 16 characters', () => {
    const result = notificationTargetSchemas.webhook.safeParse({
      url: 'https://r.example/h',
      secret: 'short',
    });
    expect(issuesOf(result)).toEqual([['secret', 'must be 16 to 256 characters']]);
    expect(
      issuesOf(notificationTargetSchemas.webhook.safeParse({ url: 'https://r.example/h' })),
    ).toEqual([['secret', 'is required']]);
  });
});

describe('the alertmanager target schema', () => {
  it('takes URLs, optional basic auth, and a timeout of 10 s by default', () => {
    expect(notificationTargetSchemas.alertmanager.parse({ urls: ['http://am:9093'] })).toEqual({
      urls: ['http://am:9093'],
      timeout_seconds: 10,
    });
    const full = {
      urls: ['http://am-1:9093', 'https://am-2.example/prefix'],
      basic_auth: { username: 'monitor', password: 'secret' },
      timeout_seconds: 3,
    };
    expect(notificationTargetSchemas.alertmanager.parse(full)).toEqual(full);
  });

  it('refuses no URL, a repeated one, a non-http one, and a timeout out of bounds', () => {
    const issues = (target: unknown) =>
      issuesOf(notificationTargetSchemas.alertmanager.safeParse(target));
    expect(issues({ urls: [] })).toEqual([['urls', 'must list at least one URL']]);
    expect(issues({ urls: ['http://a', 'http://a'] })).toEqual([
      ['urls', 'must not name a URL twice'],
    ]);
    expect(issues({ urls: ['ftp://a'] })).toEqual([['urls.0', 'must be an http or https URL']]);
    expect(issues({ urls: ['http://a'], timeout_seconds: 0 })).toEqual([
      ['timeout_seconds', 'must be at least 1'],
    ]);
    expect(issues({ urls: ['http://a'], basic_auth: { username: 'u' } })).toEqual([
      ['basic_auth.password', 'is required'],
    ]);
  });
});

describe('isNotificationChannelType', () => {
  it('knows exactly the four types', () => {
    expect(['slack', 'email', 'webhook', 'alertmanager'].every(isNotificationChannelType)).toBe(
      true,
    );
    expect(['sms', 'Slack', '', undefined, ['slack']].some(isNotificationChannelType)).toBe(false);
  });
});

describe('response schemas', () => {
  const times = { created_at: '2026-11-22T10:00:00.000Z', updated_at: '2026-11-22T10:00:00.000Z' };

  it('describe a channel of each type, a webhook secret being any (masked) string', () => {
    expect(
      notificationChannelSchema.safeParse({
        type: 'webhook',
        url: 'https://r.example/h',
        secret: '********abcd',
        ...times,
      }).success,
    ).toBe(true);
    expect(
      notificationChannelSchema.safeParse({ type: 'slack', url: 'https://r.example/h', ...times })
        .success,
    ).toBe(false);
  });

  it('describe a notification with its attempts', () => {
    const notification = {
      id: 'ntf_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A',
      alert_id: 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0B',
      channel: 'webhook',
      transition: 'fired',
      idempotency_key: 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0B:fired',
      status: 'delivered',
      attempts: 2,
      next_attempt_at: null,
      last_error: 'HTTP 500',
      created_at: '2026-11-22T10:00:00.000Z',
      delivered_at: '2026-11-22T10:00:05.000Z',
      attempt_log: [
        {
          attempt: 1,
          attempted_at: '2026-11-22T10:00:00.100Z',
          outcome: 'failed',
          detail: 'HTTP 500',
          duration_ms: 12,
        },
        {
          attempt: 2,
          attempted_at: '2026-11-22T10:00:05.000Z',
          outcome: 'delivered',
          detail: 'HTTP 200',
          duration_ms: 9,
        },
      ],
    };
    expect(notificationSchema.safeParse(notification).success).toBe(true);
    expect(notificationSchema.safeParse({ ...notification, status: 'sent' }).success).toBe(false);
  });
});
