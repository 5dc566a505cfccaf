// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@monitor/testkit/builders';
import type { Database } from '@monitor/db';
import {
  createAlertmanagerResendStore,
  createDatabase,
  createNotificationChannelStore,
  createNotificationStore,
  createOrgStore,
  fireAlert,
  migrate,
  resolveAlerts,
} from '@monitor/db';
import { createLogger, newId } from '@monitor/platform';
import type { Alert } from '@monitor/schemas';
import type { HttpReceiver, RunningAlertmanager, TestDatabase } from '@monitor/testkit';
import {
  alertmanagerMessages,
  createTestDatabase,
  receiverNetwork,
  startAlertmanager,
  startHttpReceiver,
} from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { AlertmanagerResender } from './alertmanager-resender.js';
import { createAlertmanagerResender } from './alertmanager-resender.js';
import { createNotificationSenders } from './notification-senders.js';
import type { Notifier } from './notifier.js';
import { createNotifier } from './notifier.js';

const logger = createLogger({ level: 'silent', name: 'alertmanager-test' });
const consoleUrl = 'https://monitor.example.com';
const resendIntervalMs = 60_000;

describe('the alertmanager channel against Alertmanager 0.25', () => {
  let testDb: TestDatabase;
  let db: Database;
  let orgId: string;
  let receiver: HttpReceiver;
  let alertmanager: RunningAlertmanager;
  let notifier: Notifier;
  let resender: AlertmanagerResender;
  let closeSenders: () => void;

  const messages = () => alertmanagerMessages(receiver);

  /** A rule named `name` notifying Alertmanager. */
  async function createRule(name: string): Promise<string> {
    const ruleId = newId('rul');
    await db.sql`
      insert into alert_rules (id, org_id, name, metric, condition, threshold, duration_minutes,
        severity, channels)
      values (${ruleId}, ${orgId}, ${name}, 'disk_used_percent', 'greater_than', 90, 0,
        'critical', array['alertmanager'])
    `;
    return ruleId;
  }

  async function fire(ruleId: string, host: string): Promise<Alert> {
    const firedAt = new Date();
    const result = await db.sql.begin((tx) =>
      fireAlert(tx, { orgId, ruleId, host, value: 97, startedAt: firedAt, firedAt }),
    );
    if (result.outcome !== 'fired') throw new Error(`fireAlert: ${result.outcome}`);
    return result.alert;
  }

  async function pendingCount(): Promise<number> {
    const [row] = await db.sql<{ pending: number }[]>`
      select count(*)::int as pending from notifications where status = 'pending'
    `;
    return row!.pending;
  }

  /** Runs notifier rounds until no message is pending any more. */
  async function drain(): Promise<void> {
    await waitFor(
      async () => {
        await notifier.runOnce();
        return (await pendingCount()) === 0 ? true : undefined;
      },
      30_000,
      'the outbox to drain',
    );
  }

  beforeAll(async () => {
    testDb = await createTestDatabase(serviceUrl('postgres'), 'alertmanager');
    db = createDatabase({ url: testDb.url, maxConnections: 4 });
    await migrate(db);
    orgId = (await createOrgStore(db).createOrganization('acme')).id;
    receiver = await startHttpReceiver();
    alertmanager = await startAlertmanager({ webhookUrl: receiver.url, groupWaitSeconds: 1 });
    await createNotificationChannelStore(db).putChannel(orgId, 'alertmanager', {
      urls: [alertmanager.url],
      timeout_seconds: 5,
    });
    const senders = createNotificationSenders({
      smtpUrl: undefined,
      allowedTargetNetworks: [receiverNetwork],
      alertmanagerResendIntervalMs: resendIntervalMs,
      consoleUrl,
    });
    closeSenders = senders.close;
    notifier = createNotifier(
      { store: createNotificationStore(db), senders: senders.senders, logger },
      {
        pollIntervalMs: 50,
        batchSize: 20,
        leaseMs: 10_000,
        // Enough attempts, close enough together, to outlast an Alertmanager restart.
        retry: { baseDelayMs: 100, maxDelayMs: 500, maxAttempts: 200, jitterRatio: 0.2 },
      },
    );
    resender = createAlertmanagerResender(
      {
        store: createAlertmanagerResendStore(db),
        sender: senders.alertmanager,
        logger,
        consoleUrl,
      },
      { resendIntervalMs, pageSize: 100 },
    );
  });

  afterAll(async () => {
    await alertmanager?.stop();
    await receiver?.close();
    closeSenders?.();
    await db?.close();
    await testDb?.drop();
  });

  it('delivers several alerts of a rule as one group, then their resolution', async () => {
    const ruleId = await createRule('disk full');
    const fired = [
      await fire(ruleId, 'db-1'),
      await fire(ruleId, 'db-2'),
      await fire(ruleId, 'db-3'),
    ];
    await drain();

    const group = await waitFor(
      () =>
        messages().find(
          (message) =>
            message.groupLabels['alertname'] === 'disk full' && message.status === 'firing',
        ),
      30_000,
      'the firing group',
    );
    // All three arrived in the group's first notification.
    expect(group.alerts.map((alert) => alert.labels['host']).sort()).toEqual([
      'db-1',
      'db-2',
      'db-3',
    ]);
    for (const alert of fired) {
      const received = group.alerts.find((a) => a.labels['host'] === alert.host)!;
      expect(received.status).toBe('firing');
      expect(received.labels).toEqual({
        alertname: 'disk full',
        rule_id: ruleId,
        host: alert.host,
        metric: 'disk_used_percent',
        severity: 'critical',
      });
      expect(received.annotations).toMatchObject({
        summary: `critical: disk full on ${alert.host}`,
        alert_id: alert.id,
        value: '97',
      });
      expect(received.annotations['description']).toContain('disk_used_percent is 97');
      expect(Date.parse(received.startsAt)).toBe(alert.firedAt.getTime());
      expect(received.generatorURL).toBe(`${consoleUrl}/rules/${ruleId}`);
    }

    const resolvedAt = new Date();
    await db.sql.begin(async (tx) => {
      for (const alert of fired) {
        await resolveAlerts(tx, { orgId, ruleId, host: alert.host }, resolvedAt);
      }
    });
    await drain();
    const resolved = await waitFor(
      () =>
        messages().find(
          (message) =>
            message.groupLabels['alertname'] === 'disk full' && message.status === 'resolved',
        ),
      30_000,
      'the resolved group',
    );
    expect(resolved.alerts).toHaveLength(3);
    for (const alert of resolved.alerts) {
      expect(alert.status).toBe('resolved');
      expect(Date.parse(alert.endsAt)).toBe(resolvedAt.getTime());
    }
  });

  it('posts a firing message that goes out after its alert resolved as resolved', async () => {
    const ruleId = await createRule('queue stuck');
    const alert = await fire(ruleId, 'worker-1');
    await db.sql.begin((tx) => resolveAlerts(tx, { orgId, ruleId, host: alert.host }, new Date()));
    // The firing message waits for a retry (as when Alertmanager was down): the resolution
    // goes out first, then the firing message.
    const held = await db.sql`
      update notifications set next_attempt_at = now() + interval '1 hour'
      where alert_id = ${alert.id} and transition = 'fired' returning id
    `;
    expect(held).toHaveLength(1);
    await waitFor(
      async () => {
        await notifier.runOnce();
        const [row] = await db.sql<{ status: string }[]>`
        select status from notifications where alert_id = ${alert.id} and transition = 'resolved'
      `;
        return row?.status === 'delivered' ? true : undefined;
      },
      30_000,
      'the resolution to be delivered',
    );
    await db.sql`update notifications set next_attempt_at = now() where id = ${held[0]!['id'] as string}`;
    await drain();

    const listed = await fetch(`${alertmanager.url}/api/v2/alerts?filter=alertname="queue stuck"`);
    const alerts = (await listed.json()) as { endsAt: string; status: { state: string } }[];
    // Alertmanager lists it, if at all, ended: the late firing message did not reopen it.
    for (const listedAlert of alerts) {
      expect(Date.parse(listedAlert.endsAt)).toBeLessThanOrEqual(Date.now());
    }
    expect(
      messages().filter(
        (message) =>
          message.groupLabels['alertname'] === 'queue stuck' && message.status === 'firing',
      ),
    ).toEqual([]);
  });

  it('loses no alert across an Alertmanager restart: the outbox retries, re-sends restore the rest', async () => {
    const ruleId = await createRule('memory high');
    const before = await fire(ruleId, 'app-1');
    await drain();
    await waitFor(
      () => messages().find((message) => message.groupLabels['alertname'] === 'memory high'),
      30_000,
      'the first alert',
    );

    await alertmanager.stop();
    const during = await fire(ruleId, 'app-2');
    await notifier.runOnce();
    const [attempted] = await db.sql<{ status: string; attempts: number }[]>`
      select status, attempts from notifications where alert_id = ${during.id}
    `;
    expect(attempted).toEqual({ status: 'pending', attempts: 1 });

    // A new Alertmanager on the same address: it knows no alert of before.
    alertmanager = await startAlertmanager({
      webhookUrl: receiver.url,
      groupWaitSeconds: 1,
      port: alertmanager.port,
    });
    const restartedAt = receiver.requests.length;
    await drain();
    const round = await resender.runOnce();
    expect(round).toMatchObject({ alerts: 2, posts: 1, failedPosts: 0 });

    const both = await waitFor(
      () =>
        messages()
          .slice(restartedAt)
          .find(
            (message) =>
              message.groupLabels['alertname'] === 'memory high' &&
              message.alerts.filter((alert) => alert.status === 'firing').length === 2,
          ),
      30_000,
      'both alerts after the restart',
    );
    expect(both.alerts.map((alert) => alert.annotations['alert_id']).sort()).toEqual(
      [before.id, during.id].sort(),
    );
    // Alertmanager holds both firing until 4 re-send intervals from now.
    const response = await fetch(
      `${alertmanager.url}/api/v2/alerts?filter=alertname="memory high"`,
    );
    const active = (await response.json()) as { endsAt: string; status: { state: string } }[];
    expect(active).toHaveLength(2);
    for (const alert of active) {
      expect(alert.status.state).toBe('active');
      expect(Date.parse(alert.endsAt)).toBeGreaterThan(Date.now() + 3 * resendIntervalMs);
    }
  });
});
