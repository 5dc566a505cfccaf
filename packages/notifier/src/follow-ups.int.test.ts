// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, NotificationStore } from '@monitor/db';
import {
  createAlertQueries,
  createDatabase,
  createNotificationChannelStore,
  createNotificationStore,
  createOrgStore,
  createSilenceStore,
  fireAlert,
  migrate,
  resolveAlerts,
} from '@monitor/db';
import { createLogger, newId } from '@monitor/platform';
import type { Alert, NotificationChannelType } from '@monitor/schemas';
import type {
  HttpReceiver,
  HttpRequestReceived,
  SmtpReceiver,
  TestDatabase,
} from '@monitor/testkit';
import {
  createTestDatabase,
  receiverNetwork,
  startHttpReceiver,
  startSmtpReceiver,
} from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';
import { createNotificationSenders } from './notification-senders.js';
import type { NotifierOptions } from './notifier.js';
import { createNotifier } from './notifier.js';

/**
 * What silences, renotification and templates do to notifications, against real PostgreSQL and
 * real receivers (HTTP for Slack and webhooks, SMTP for email). The notifier's clock is the
 * test's: silences and renotify intervals are judged at the time it says.
 */

const minuteMs = 60_000;
const logger = createLogger({ level: 'silent', name: 'follow-ups-test' });
const options: NotifierOptions = {
  pollIntervalMs: 20,
  batchSize: 50,
  leaseMs: 5_000,
  retry: { baseDelayMs: 50, maxDelayMs: 200, maxAttempts: 4, jitterRatio: 0.2 },
};

/** The JSON body of a request the Slack or webhook receiver got. */
const bodyOf = (request: HttpRequestReceived) =>
  JSON.parse(request.body.toString('utf8')) as Record<string, unknown>;

describe('silences, renotification and templates in the notifier', () => {
  let testDb: TestDatabase;
  let db: Database;
  let store: NotificationStore;
  let orgId: string;
  let slack: HttpReceiver;
  let webhook: HttpReceiver;
  let smtp: SmtpReceiver;
  let senders: ReturnType<typeof createNotificationSenders>;
  /** The notifier's clock. */
  let clockMs = Date.now();
  const notifier = () =>
    createNotifier({ store, senders: senders.senders, logger, nowMs: () => clockMs }, options);

  type RuleOptions = { renotifyMinutes?: number; template?: string };

  /** A rule of the org notifying `channels`, fired now (the database's time) for a new host. */
  async function fire(channels: NotificationChannelType[], rule: RuleOptions = {}) {
    const ruleId = newId('rul');
    await db.sql`
      insert into alert_rules (id, org_id, name, metric, condition, threshold, duration_minutes,
        severity, channels, renotify_minutes, message_template)
      values (${ruleId}, ${orgId}, 'cpu high', 'cpu_percent', 'greater_than', 90, 0, 'critical',
        ${db.sql.array(channels)}, ${rule.renotifyMinutes ?? null}, ${rule.template ?? null})
    `;
    const firedAt = new Date();
    const result = await db.sql.begin((tx) =>
      fireAlert(tx, {
        orgId,
        ruleId,
        host: `web-${ruleId.slice(-6).toLowerCase()}`,
        value: 97.5,
        startedAt: firedAt,
        firedAt,
      }),
    );
    if (result.outcome !== 'fired') throw new Error(`fireAlert: ${result.outcome}`);
    return result.alert;
  }

  const outboxOf = (alert: Alert) =>
    db.sql<{ transition: string; channel: string; status: string; idempotency_key: string }[]>`
      select transition, channel, status, idempotency_key from notifications
      where alert_id = ${alert.id} order by id
    `;

  const sentFor = (alert: Alert) => ({
    slack: slack.requests.filter((r) => String(bodyOf(r)['text']).includes(alert.host)).length,
    webhook: webhook.requests.filter(
      (r) => (bodyOf(r)['alert'] as { id: string } | undefined)?.id === alert.id,
    ),
  });

  beforeAll(async () => {
    testDb = await createTestDatabase(serviceUrl('postgres'), 'notifier_follow_ups');
    db = createDatabase({ url: testDb.url, maxConnections: 4 });
    await migrate(db);
    store = createNotificationStore(db);
    orgId = (await createOrgStore(db).createOrganization('acme')).id;
    [slack, webhook, smtp] = await Promise.all([
      startHttpReceiver(),
      startHttpReceiver(),
      startSmtpReceiver(),
    ]);
    senders = createNotificationSenders({
      smtpUrl: smtp.url,
      httpTimeoutMs: 2_000,
      smtpTimeoutMs: 2_000,
      allowedTargetNetworks: [receiverNetwork],
    });
    const channels = createNotificationChannelStore(db);
    await channels.putChannel(orgId, 'slack', { webhook_url: slack.url });
    await channels.putChannel(orgId, 'webhook', { url: webhook.url, secret: 'whsec-0123456789' });
    await channels.putChannel(orgId, 'email', {
      to: ['ops@example.com'],
      from: 'monitor@example.com',
    });
  });

  afterAll(async () => {
    senders?.close();
    await Promise.all([slack?.close(), webhook?.close(), smtp?.close()]);
    await db?.close();
    await testDb?.drop();
  });

  it('records a silenced alert’s messages suppressed, sends nothing, and notifies when the silence ends', async () => {
    clockMs = Date.now();
    const alert = await fire(['slack', 'webhook']);
    const silence = await createSilenceStore(db).createSilence(orgId, 'key_test', {
      matchers: { host: alert.host },
      startsAt: new Date(clockMs - minuteMs),
      endsAt: new Date(clockMs + 10 * minuteMs),
      comment: 'maintenance',
      recurrence: null,
    });
    const round = await notifier().runOnce();
    expect(round).toMatchObject({ suppressed: 2, claimed: 0 });
    expect((await outboxOf(alert)).map((n) => `${n.transition}:${n.channel}:${n.status}`)).toEqual([
      'fired:slack:suppressed',
      'fired:webhook:suppressed',
    ]);
    expect(sentFor(alert)).toEqual({ slack: 0, webhook: [] });
    // Still silenced five minutes on: nothing queued, nothing sent.
    clockMs += 5 * minuteMs;
    expect(await notifier().runOnce()).toMatchObject({ followUps: 0, claimed: 0 });

    // The silence ends on the still-active alert: it is notified then, once.
    clockMs = silence.endsAt.getTime();
    expect(await notifier().runOnce()).toMatchObject({ followUps: 1, delivered: 2 });
    expect(await notifier().runOnce()).toMatchObject({ followUps: 0, claimed: 0 });
    const sent = sentFor(alert);
    expect(sent.slack).toBe(1);
    expect(
      sent.webhook.map((r) => [bodyOf(r)['transition'], r.headers['idempotency-key']]),
    ).toEqual([['unsilenced', `${alert.id}:unsilenced:1`]]);
    // The alert itself never stopped being active.
    expect(await createAlertQueries(db).getAlert(orgId, alert.id)).toMatchObject({
      status: 'active',
    });
  });

  it('opens and closes a recurring window on time in its zone', async () => {
    // A daily window at the next whole hour (UTC) for 30 minutes, in Asia/Kolkata (+05:30):
    // the RRULE's local time is that hour's wall time there.
    const nextHourMs = Math.ceil(Date.now() / (60 * minuteMs)) * 60 * minuteMs;
    const kolkata = new Date(nextHourMs + 330 * minuteMs);
    const alert = await fire(['webhook']);
    await createSilenceStore(db).createSilence(orgId, 'key_test', {
      matchers: { host: alert.host },
      startsAt: new Date(nextHourMs - 24 * 60 * minuteMs),
      endsAt: new Date(nextHourMs + 7 * 24 * 60 * minuteMs),
      comment: 'nightly backup',
      recurrence: {
        rrule: `FREQ=DAILY;BYHOUR=${kolkata.getUTCHours()};BYMINUTE=${kolkata.getUTCMinutes()}`,
        durationMinutes: 30,
        timezone: 'Asia/Kolkata',
      },
    });
    // Just before the window: the fired message goes out.
    clockMs = nextHourMs - minuteMs;
    expect(await notifier().runOnce()).toMatchObject({ delivered: 1, suppressed: 0 });
    // In the window, a renotification-free alert has nothing due: make one due by hand.
    await db.sql`
      insert into notifications (id, org_id, alert_id, transition, channel, idempotency_key,
        payload, sequence)
      select ${newId('ntf')}, org_id, alert_id, 'renotified', channel, ${`${alert.id}:renotified:1`},
        payload, 1
      from notifications where alert_id = ${alert.id}
    `;
    clockMs = nextHourMs;
    expect(await notifier().runOnce()).toMatchObject({ suppressed: 1, claimed: 0 });
    clockMs = nextHourMs + 29 * minuteMs;
    expect(await notifier().runOnce()).toMatchObject({ followUps: 0, claimed: 0 });
    // The window closes at +30 minutes: the still-active alert is notified then.
    clockMs = nextHourMs + 30 * minuteMs;
    expect(await notifier().runOnce()).toMatchObject({ followUps: 1, delivered: 1 });
    expect(sentFor(alert).webhook.map((r) => bodyOf(r)['transition'])).toEqual([
      'fired',
      'unsilenced',
    ]);
  });

  it('renotifies an active, unacknowledged, unsilenced alert every renotify_minutes, once each time', async () => {
    clockMs = Date.now();
    const alert = await fire(['webhook'], { renotifyMinutes: 60 });
    expect(await notifier().runOnce()).toMatchObject({ delivered: 1 });
    clockMs += 59 * minuteMs;
    expect(await notifier().runOnce()).toMatchObject({ followUps: 0 });
    clockMs += 2 * minuteMs;
    expect(await notifier().runOnce()).toMatchObject({ followUps: 1, delivered: 1 });
    // Another notifier (or a replay) at the same instant queues nothing more.
    expect(await store.enqueueFollowUps(new Date(clockMs))).toEqual({
      renotified: 0,
      unsilenced: 0,
    });
    clockMs += 60 * minuteMs;
    expect(await notifier().runOnce()).toMatchObject({ followUps: 1, delivered: 1 });
    expect(
      sentFor(alert).webhook.map((r) => [bodyOf(r)['transition'], r.headers['idempotency-key']]),
    ).toEqual([
      ['fired', `${alert.id}:fired`],
      ['renotified', `${alert.id}:renotified:1`],
      ['renotified', `${alert.id}:renotified:2`],
    ]);

    // Acknowledged: no more renotification; undone: it resumes.
    const alerts = createAlertQueries(db);
    await alerts.acknowledgeAlert({
      orgId,
      alertId: alert.id,
      keyId: 'key_test',
      comment: null,
      now: new Date(clockMs),
    });
    clockMs += 180 * minuteMs;
    expect(await notifier().runOnce()).toMatchObject({ followUps: 0 });
    await alerts.unacknowledgeAlert(orgId, alert.id, new Date(clockMs));
    expect(await notifier().runOnce()).toMatchObject({ followUps: 1, delivered: 1 });

    // Silenced: not renotified; resolved: never again.
    await createSilenceStore(db).createSilence(orgId, 'key_test', {
      matchers: { ruleId: alert.ruleId },
      startsAt: new Date(clockMs),
      endsAt: new Date(clockMs + 600 * minuteMs),
      comment: 'quiet',
      recurrence: null,
    });
    clockMs += 120 * minuteMs;
    expect(await notifier().runOnce()).toMatchObject({ followUps: 0 });
    await db.sql.begin((tx) =>
      resolveAlerts(tx, { orgId, ruleId: alert.ruleId, host: alert.host }, new Date()),
    );
    clockMs += 1000 * minuteMs;
    const last = await notifier().runOnce();
    expect(last.followUps).toBe(0);
    expect(
      (await outboxOf(alert)).filter((n) => n.transition === 'renotified').map((n) => n.status),
    ).toEqual(['delivered', 'delivered', 'delivered']);
  });

  it('renders the rule’s message template in Slack, email and webhook messages', async () => {
    clockMs = Date.now();
    const template =
      '{{severity}}: {{rule_name}} on {{host}} ({{metric}} = {{value}}) [{{tags.env}}]';
    const alert = await fire(['slack', 'email', 'webhook'], { template });
    await db.sql`update services set tags = '{"env": "prod"}' where id = ${alert.serviceId}`;
    const mailsBefore = smtp.messages.length;
    expect(await notifier().runOnce()).toMatchObject({ delivered: 3 });
    const expected = `critical: cpu high on ${alert.host} (cpu_percent = 97.5) [prod]`;
    const slackText = slack.requests
      .map((r) => String(bodyOf(r)['text']))
      .find((text) => text.includes(alert.host));
    expect(slackText).toBe(`*[FIRING] critical: cpu high on ${alert.host}*\n${expected}`);
    const mail = smtp.messages
      .slice(mailsBefore)
      .map((message) => message.data)
      .join('\n');
    expect(mail).toContain(expected);
    expect(sentFor(alert).webhook.map((r) => bodyOf(r)['message'])).toEqual([expected]);
  });
});
