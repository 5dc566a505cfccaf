// @services postgres
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, NotificationStore } from '@monitor/db';
import type { Alert } from '@monitor/schemas';
import {
  abandonedAttemptDetail,
  createDatabase,
  createNotificationChannelStore,
  createNotificationStore,
  createOrgStore,
  fireAlert,
  migrate,
  resolveAlerts,
} from '@monitor/db';
import { createLogger, newId } from '@monitor/platform';
import type { NotificationChannelType } from '@monitor/schemas';
import type { TestDatabase } from '@monitor/testkit';
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
import { verifyWebhookSignature } from './webhook-signature.js';

const webhookSecret = 'whsec-0123456789abcdef';

/** A webhook receiver that checks every signature; `failFirst` verified requests get a 500. */
function startWebhookReceiver(failFirst: number) {
  return startHttpReceiver((request, index) => {
    const verified = verifyWebhookSignature({
      secret: webhookSecret,
      body: request.body,
      timestamp: request.headers['x-monitor-timestamp'] as string | undefined,
      signature: request.headers['x-monitor-signature'] as string | undefined,
      nowMs: Date.now(),
    });
    if (!verified) return 401;
    return index < failFirst ? 500 : 200;
  });
}

const logger = createLogger({ level: 'silent', name: 'notifier-test' });

const options: NotifierOptions = {
  pollIntervalMs: 20,
  batchSize: 10,
  leaseMs: 5_000,
  retry: { baseDelayMs: 50, maxDelayMs: 200, maxAttempts: 4, jitterRatio: 0.2 },
};

describe('the notifier against real receivers', () => {
  let testDb: TestDatabase;
  let db: Database;
  let store: NotificationStore;
  let orgId: string;
  const closers: (() => Promise<void> | void)[] = [];

  /** A rule of the org notifying `channels`, fired for a new host. */
  async function fire(channels: NotificationChannelType[], org = orgId): Promise<Alert> {
    const ruleId = newId('rul');
    await db.sql`
      insert into alert_rules (id, org_id, name, metric, condition, threshold, duration_minutes,
        severity, channels)
      values (${ruleId}, ${org}, 'cpu high', 'cpu_percent', 'greater_than', 90, 0, 'critical',
        ${db.sql.array(channels)})
    `;
    const firedAt = new Date();
    const result = await db.sql.begin((tx) =>
      fireAlert(tx, {
        orgId: org,
        ruleId,
        host: `web-${ruleId.slice(-6)}`,
        value: 97,
        startedAt: firedAt,
        firedAt,
      }),
    );
    if (result.outcome !== 'fired') throw new Error(`fireAlert: ${result.outcome}`);
    return result.alert;
  }

  async function resolve(alert: Alert, org = orgId): Promise<void> {
    await db.sql.begin((tx) =>
      resolveAlerts(tx, { orgId: org, ruleId: alert.ruleId, host: alert.host }, new Date()),
    );
  }

  /** Runs rounds until no message is pending any more. */
  async function drain(runOnce: () => Promise<unknown>): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      await runOnce();
      const [row] = await db.sql<{ pending: number }[]>`
        select count(*)::int as pending from notifications where status = 'pending'
      `;
      if (row!.pending === 0) return;
      if (Date.now() > deadline) throw new Error(`${row!.pending} notifications still pending`);
      await sleep(20);
    }
  }

  async function channelsFor(org: string, targets: Record<string, Record<string, unknown>>) {
    const channels = createNotificationChannelStore(db);
    for (const [type, config] of Object.entries(targets)) {
      await channels.putChannel(org, type as NotificationChannelType, config);
    }
  }

  beforeAll(async () => {
    testDb = await createTestDatabase(serviceUrl('postgres'), 'notifier');
    db = createDatabase({ url: testDb.url, maxConnections: 4 });
    await migrate(db);
    store = createNotificationStore(db);
    orgId = (await createOrgStore(db).createOrganization('acme')).id;
  });

  afterAll(async () => {
    for (const close of closers) await close();
    await db.close();
    await testDb.drop();
  });

  it('delivers to Slack, SMTP and a signed webhook that fails twice, with every attempt recorded', async () => {
    const slack = await startHttpReceiver();
    const webhook = await startWebhookReceiver(2);
    const smtp = await startSmtpReceiver();
    const senders = createNotificationSenders({
      smtpUrl: smtp.url,
      httpTimeoutMs: 2_000,
      smtpTimeoutMs: 2_000,
      allowedTargetNetworks: [receiverNetwork],
    });
    closers.push(slack.close, webhook.close, smtp.close, senders.close);
    await channelsFor(orgId, {
      slack: { webhook_url: slack.url },
      email: { to: ['ops@example.com', 'oncall@example.com'], from: 'monitor@example.com' },
      webhook: { url: webhook.url, secret: webhookSecret },
    });
    const sent: string[] = [];
    const notifier = createNotifier(
      {
        store,
        senders: senders.senders,
        logger,
        metrics: {
          sent: (channel) => sent.push(`sent ${channel}`),
          failed: (channel, final) => sent.push(`failed ${channel}${final ? ' final' : ''}`),
        },
      },
      options,
    );
    const alert = await fire(['slack', 'email', 'webhook']);
    await drain(notifier.runOnce);

    const firedKey = `${alert.id}:fired`;
    expect(slack.requests).toHaveLength(1);
    expect(slack.requests[0]!.headers['idempotency-key']).toBe(firedKey);
    const { text } = JSON.parse(slack.requests[0]!.body.toString()) as { text: string };
    expect(text).toContain(`*[FIRING] critical: cpu high on ${alert.host}*`);

    expect(smtp.messages).toHaveLength(1);
    expect(smtp.messages[0]).toMatchObject({
      from: 'monitor@example.com',
      to: ['ops@example.com', 'oncall@example.com'],
    });
    expect(smtp.messages[0]!.data).toContain(`Idempotency-Key: ${firedKey}`);
    expect(smtp.messages[0]!.data).toContain(
      `Subject: [FIRING] critical: cpu high on ${alert.host}`,
    );

    // Three signed requests (every one verified, else the receiver answered 401), one delivery.
    expect(webhook.requests.map((r) => r.status)).toEqual([500, 500, 200]);
    expect(webhook.accepted()).toHaveLength(1);
    expect(new Set(webhook.requests.map((r) => r.headers['idempotency-key']))).toEqual(
      new Set([firedKey]),
    );
    expect(JSON.parse(webhook.accepted()[0]!.body.toString())).toMatchObject({
      transition: 'fired',
      alert: { id: alert.id, status: 'active', value: 97, severity: 'critical' },
    });

    const records = (await store.listForAlert(orgId, alert.id))!;
    const byChannel = Object.fromEntries(records.map((r) => [r.channel, r]));
    expect(byChannel['webhook']).toMatchObject({
      status: 'delivered',
      attempts: 3,
      lastError: 'HTTP 500',
    });
    // The receiver's body (`nope`) is not shown: the status is all the attempt log keeps.
    expect(byChannel['webhook']!.attemptLog.map((a) => [a.attempt, a.outcome, a.detail])).toEqual([
      [1, 'failed', 'HTTP 500'],
      [2, 'failed', 'HTTP 500'],
      [3, 'delivered', 'HTTP 200'],
    ]);
    expect(byChannel['slack']).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(byChannel['email']).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(byChannel['email']!.attemptLog[0]!.detail).toMatch(/^250 /);
    expect(sent.sort()).toEqual([
      'failed webhook',
      'failed webhook',
      'sent email',
      'sent slack',
      'sent webhook',
    ]);

    // The resolution goes out under its own key, to every channel the alert fired with.
    await resolve(alert);
    await drain(notifier.runOnce);
    const resolvedKey = `${alert.id}:resolved`;
    expect(slack.requests.map((r) => r.headers['idempotency-key'])).toEqual([
      firedKey,
      resolvedKey,
    ]);
    expect(smtp.messages[1]!.data).toContain(`Idempotency-Key: ${resolvedKey}`);
    expect(webhook.accepted().map((r) => r.headers['idempotency-key'])).toEqual([
      firedKey,
      resolvedKey,
    ]);
  });

  it('delivers everything after a notifier died holding its claims', async () => {
    const org = (await createOrgStore(db).createOrganization('restart')).id;
    const slack = await startHttpReceiver();
    const webhook = await startWebhookReceiver(0);
    const senders = createNotificationSenders({
      smtpUrl: undefined,
      httpTimeoutMs: 2_000,
      allowedTargetNetworks: [receiverNetwork],
    });
    closers.push(slack.close, webhook.close, senders.close);
    await channelsFor(org, {
      slack: { webhook_url: slack.url },
      webhook: { url: webhook.url, secret: webhookSecret },
    });
    const alerts = [await fire(['slack', 'webhook'], org), await fire(['slack', 'webhook'], org)];
    // The first notifier claims every row, then its process dies before sending anything.
    const claimed = await store.claimDue({ limit: 10, leaseMs: 400, maxAttempts: 4 });
    expect(claimed).toHaveLength(4);

    const second = createNotifier({ store, senders: senders.senders, logger }, options);
    expect((await second.runOnce()).claimed).toBe(0);
    second.start();
    try {
      const deadline = Date.now() + 10_000;
      while (slack.requests.length + webhook.requests.length < 4 && Date.now() < deadline) {
        await sleep(20);
      }
    } finally {
      await second.stop();
    }
    expect(slack.requests.map((r) => r.headers['idempotency-key']).sort()).toEqual(
      alerts.map((a) => `${a.id}:fired`).sort(),
    );
    expect(webhook.accepted()).toHaveLength(2);
    for (const alert of alerts) {
      for (const record of (await store.listForAlert(org, alert.id))!) {
        expect(record).toMatchObject({ status: 'delivered', attempts: 2 });
        expect(record.attemptLog.map((a) => [a.outcome, a.detail])).toEqual([
          ['failed', abandonedAttemptDetail],
          ['delivered', 'HTTP 200'],
        ]);
      }
    }
  });

  it('stops after the maximum attempts, and fails a channel without a target at once', async () => {
    const org = (await createOrgStore(db).createOrganization('bounded')).id;
    const webhook = await startWebhookReceiver(Number.POSITIVE_INFINITY);
    const senders = createNotificationSenders({
      smtpUrl: undefined,
      httpTimeoutMs: 2_000,
      allowedTargetNetworks: [receiverNetwork],
    });
    closers.push(webhook.close, senders.close);
    await channelsFor(org, { webhook: { url: webhook.url, secret: webhookSecret } });
    const notifier = createNotifier({ store, senders: senders.senders, logger }, options);
    const alert = await fire(['webhook', 'slack'], org);
    await drain(notifier.runOnce);

    expect(webhook.requests.map((r) => r.status)).toEqual([500, 500, 500, 500]);
    const records = Object.fromEntries(
      (await store.listForAlert(org, alert.id))!.map((r) => [r.channel, r]),
    );
    expect(records['webhook']).toMatchObject({
      status: 'failed',
      attempts: 4,
      nextAttemptAt: null,
    });
    expect(records['webhook']!.attemptLog.map((a) => a.outcome)).toEqual([
      'failed',
      'failed',
      'failed',
      'failed',
    ]);
    expect(records['slack']).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: 'no slack target is configured for the organization',
    });
    expect(records['slack']!.attemptLog).toHaveLength(1);
    // Nothing is left to retry.
    await sleep(250);
    expect((await notifier.runOnce()).claimed).toBe(0);
    expect(webhook.requests).toHaveLength(4);
  });
  it('refuses targets on the loopback network unless it is allowed, without retrying', async () => {
    const org = (await createOrgStore(db).createOrganization('guarded')).id;
    const slack = await startHttpReceiver();
    const webhook = await startWebhookReceiver(0);
    // By name: the address is checked where the DNS answer is used to connect.
    const webhookByName = webhook.url.replace('127.0.0.1', 'localhost');
    const strict = createNotificationSenders({ smtpUrl: undefined, httpTimeoutMs: 2_000 });
    // `localhost` may also resolve to ::1 (the receiver listens on IPv4 only).
    const allowing = createNotificationSenders({
      smtpUrl: undefined,
      httpTimeoutMs: 2_000,
      allowedTargetNetworks: ['127.0.0.0/8', '::1'],
    });
    closers.push(slack.close, webhook.close, strict.close, allowing.close);
    await channelsFor(org, {
      slack: { webhook_url: slack.url },
      webhook: { url: webhookByName, secret: webhookSecret },
    });
    const events: string[] = [];
    const metrics = {
      sent: (channel: NotificationChannelType) => events.push(`sent ${channel}`),
      failed: (channel: NotificationChannelType, final: boolean) =>
        events.push(`failed ${channel}${final ? ' final' : ''}`),
    };

    const refused = await fire(['slack', 'webhook'], org);
    await drain(
      createNotifier({ store, senders: strict.senders, logger, metrics }, options).runOnce,
    );
    expect(slack.requests).toHaveLength(0);
    expect(webhook.requests).toHaveLength(0);
    const records = Object.fromEntries(
      (await store.listForAlert(org, refused.id))!.map((r) => [r.channel, r]),
    );
    expect(records['slack']).toMatchObject({
      status: 'failed',
      attempts: 1,
      nextAttemptAt: null,
      lastError: 'target refused: 127.0.0.1 is a loopback address',
    });
    expect(records['webhook']).toMatchObject({
      status: 'failed',
      attempts: 1,
      nextAttemptAt: null,
    });
    expect(records['webhook']!.lastError).toMatch(
      /^target refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address$/,
    );
    expect(events.sort()).toEqual(['failed slack final', 'failed webhook final']);

    events.length = 0;
    const delivered = await fire(['slack', 'webhook'], org);
    await drain(
      createNotifier({ store, senders: allowing.senders, logger, metrics }, options).runOnce,
    );
    expect(slack.accepted()).toHaveLength(1);
    expect(webhook.accepted().map((r) => r.headers['idempotency-key'])).toEqual([
      `${delivered.id}:fired`,
    ]);
    for (const record of (await store.listForAlert(org, delivered.id))!) {
      expect(record).toMatchObject({ status: 'delivered', attempts: 1 });
    }
    expect(events.sort()).toEqual(['sent slack', 'sent webhook']);
  });
});
