// @services postgres
import { setTimeout as sleep } from 'node:timers/promises';
import { newId } from '@monitor/platform';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fireAlert, resolveAlerts } from '../alerts/alert-transitions.js';
import type { Database } from '../core/database.js';
import { createNotificationChannelStore } from './notification-channel-store.js';
import type { ClaimedNotification, NotificationStore } from './notification-store.js';
import { abandonedAttemptDetail, createNotificationStore } from './notification-store.js';
import { createOrgStore } from '../orgs/org-store.js';
import type { Alert } from '@monitor/schemas';
import { migratedDatabase } from '../testing/clean-database.js';

describe('notification store', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  let store: NotificationStore;
  let orgId: string;
  let otherOrgId: string;
  const lease = { leaseMs: 30_000, maxAttempts: 5 };

  /** A rule notifying `channels`, fired for a new host: its outbox rows are queued. */
  async function fire(channels: string[], org = orgId): Promise<Alert> {
    const ruleId = newId('rul');
    await db.sql`
      insert into alert_rules (id, org_id, name, metric, condition, threshold, duration_minutes,
        severity, channels)
      values (${ruleId}, ${org}, 'cpu high', 'cpu_percent', 'greater_than', 90, 0, 'info',
        ${db.sql.array(channels)})
    `;
    const firedAt = new Date();
    const result = await db.sql.begin((tx) =>
      fireAlert(tx, {
        orgId: org,
        ruleId,
        host: `web-${ruleId}`,
        value: 97,
        startedAt: firedAt,
        firedAt,
      }),
    );
    if (result.outcome !== 'fired') throw new Error(`fireAlert: ${result.outcome}`);
    return result.alert;
  }

  async function rowOf(id: string) {
    const [row] = await db.sql<
      {
        status: string;
        attempts: number;
        last_error: string | null;
        next_attempt_at: Date;
        lease_until: Date | null;
        delivered_at: Date | null;
      }[]
    >`select status, attempts, last_error, next_attempt_at, lease_until, delivered_at
      from notifications where id = ${id}`;
    return row!;
  }

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'notification_store'));
    store = createNotificationStore(db);
    const orgs = createOrgStore(db);
    orgId = (await orgs.createOrganization('acme')).id;
    otherOrgId = (await orgs.createOrganization('other')).id;
    await createNotificationChannelStore(db).putChannel(orgId, 'slack', {
      webhook_url: 'https://hooks.example/x',
    });
  });

  beforeEach(async () => {
    await db.sql`delete from notifications`;
  });

  afterAll(async () => {
    await dispose();
  });

  it('claims the outbox rows of a fired alert with the org’s target of each channel', async () => {
    const alert = await fire(['slack', 'webhook']);
    const claims = await store.claimDue({ limit: 10, ...lease });
    expect(claims.map((c) => c.channel).sort()).toEqual(['slack', 'webhook']);
    const slack = claims.find((c) => c.channel === 'slack')!;
    expect(slack).toMatchObject({
      orgId,
      alertId: alert.id,
      transition: 'fired',
      idempotencyKey: `${alert.id}:fired`,
      attempt: 1,
      target: { webhook_url: 'https://hooks.example/x' },
      payload: { transition: 'fired', alert: { id: alert.id, host: alert.host, value: 97 } },
    });
    expect(claims.find((c) => c.channel === 'webhook')!.target).toBeUndefined();
    // Leased: nobody else gets them while the lease holds.
    expect(await store.claimDue({ limit: 10, ...lease })).toEqual([]);
  });

  it('hands each due row to exactly one of several concurrent claimers', async () => {
    for (let i = 0; i < 6; i += 1) await fire(['slack', 'email', 'webhook']);
    const rounds = await Promise.all(
      Array.from({ length: 4 }, () => store.claimDue({ limit: 5, ...lease })),
    );
    const ids = rounds.flat().map((c) => c.id);
    expect(ids).toHaveLength(18);
    expect(new Set(ids).size).toBe(18);
  });

  it('records a delivery and never hands the row out again', async () => {
    await fire(['slack']);
    const [claim] = await store.claimDue({ limit: 10, ...lease });
    const attemptedAt = new Date();
    expect(
      await store.recordAttempt({
        notification: claim!,
        attemptedAt,
        durationMs: 12,
        detail: 'HTTP 200',
        outcome: 'delivered',
      }),
    ).toBe(true);
    expect(await rowOf(claim!.id)).toMatchObject({
      status: 'delivered',
      attempts: 1,
      lease_until: null,
      delivered_at: new Date(attemptedAt.getTime() + 12),
    });
    await sleep(5);
    expect(await store.claimDue({ limit: 10, leaseMs: 1, maxAttempts: 5 })).toEqual([]);
  });

  it('schedules a failed attempt after its backoff, then fails it after the last attempt', async () => {
    await fire(['slack']);
    const [first] = await store.claimDue({ limit: 10, ...lease });
    await store.recordAttempt({
      notification: first!,
      attemptedAt: new Date(),
      durationMs: 3,
      detail: 'HTTP 500: try again',
      outcome: 'failed',
      retryInMs: 300,
    });
    const retrying = await rowOf(first!.id);
    expect(retrying).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_error: 'HTTP 500: try again',
    });
    expect(await store.claimDue({ limit: 10, ...lease })).toEqual([]);
    await sleep(350);
    const [second] = await store.claimDue({ limit: 10, ...lease });
    expect(second).toMatchObject({ id: first!.id, attempt: 2 });
    await store.recordAttempt({
      notification: second!,
      attemptedAt: new Date(),
      durationMs: 4,
      detail: 'HTTP 502',
      outcome: 'failed',
      retryInMs: undefined,
    });
    expect(await rowOf(first!.id)).toMatchObject({
      status: 'failed',
      attempts: 2,
      last_error: 'HTTP 502',
    });
    const [record] = (await store.listForAlert(orgId, first!.alertId))!;
    expect(record).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(record!.attemptLog.map((a) => [a.attempt, a.outcome, a.detail, a.durationMs])).toEqual([
      [1, 'failed', 'HTTP 500: try again', 3],
      [2, 'failed', 'HTTP 502', 4],
    ]);
  });

  it('retries a row whose claimer died once its lease ends, recording the lost attempt', async () => {
    await fire(['slack']);
    const [dead] = await store.claimDue({ limit: 10, leaseMs: 200, maxAttempts: 5 });
    expect(await store.claimDue({ limit: 10, ...lease })).toEqual([]);
    await sleep(250);
    const [reclaimed] = await store.claimDue({ limit: 10, ...lease });
    expect(reclaimed).toMatchObject({ id: dead!.id, attempt: 2 });
    // The first claimer, had it only stalled, can no longer record: the row moved on.
    const late = { attemptedAt: new Date(), durationMs: 1, detail: 'HTTP 200' };
    expect(await store.recordAttempt({ notification: dead!, ...late, outcome: 'delivered' })).toBe(
      false,
    );
    expect(
      await store.recordAttempt({ notification: reclaimed!, ...late, outcome: 'delivered' }),
    ).toBe(true);
    const [record] = (await store.listForAlert(orgId, dead!.alertId))!;
    expect(record).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(record!.attemptLog.map((a) => [a.attempt, a.outcome, a.detail])).toEqual([
      [1, 'failed', abandonedAttemptDetail],
      [2, 'delivered', 'HTTP 200'],
    ]);
  });

  it('fails a row whose lost attempts exhaust the maximum instead of retrying it forever', async () => {
    await fire(['slack']);
    let last: ClaimedNotification | undefined;
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      const claims = await store.claimDue({ limit: 10, leaseMs: 50, maxAttempts: 3 });
      expect(claims.map((c) => c.attempt)).toEqual([attempt]);
      last = claims[0];
      await sleep(80);
    }
    const reported: { id: string; alertId: string; channel: string }[] = [];
    expect(
      await store.claimDue({
        limit: 10,
        leaseMs: 50,
        maxAttempts: 3,
        onAbandonedFailed: (failed) => reported.push(...failed),
      }),
    ).toEqual([]);
    // Failed inside the claim, it is reported so the notifier can log and count it.
    expect(reported).toEqual([{ id: last!.id, alertId: last!.alertId, channel: 'slack' }]);
    expect(await rowOf(last!.id)).toMatchObject({
      status: 'failed',
      attempts: 3,
      lease_until: null,
      last_error: abandonedAttemptDetail,
    });
  });

  it('lists an alert’s rows, fired before resolved, only to its organization', async () => {
    const alert = await fire(['webhook', 'slack']);
    const otherAlert = await fire(['slack'], otherOrgId);
    await db.sql.begin((tx) =>
      resolveAlerts(tx, { orgId, ruleId: alert.ruleId, host: alert.host }, new Date()),
    );
    const records = (await store.listForAlert(orgId, alert.id))!;
    expect(records.map((r) => [r.transition, r.channel])).toEqual([
      ['fired', 'slack'],
      ['fired', 'webhook'],
      ['resolved', 'slack'],
      ['resolved', 'webhook'],
    ]);
    expect(records[0]).toMatchObject({
      alertId: alert.id,
      idempotencyKey: `${alert.id}:fired`,
      status: 'pending',
      attempts: 0,
      lastError: null,
      deliveredAt: null,
      attemptLog: [],
      nextAttemptAt: expect.any(Date),
    });
    expect(records[2]!.idempotencyKey).toBe(`${alert.id}:resolved`);
    expect(await store.listForAlert(orgId, otherAlert.id)).toBeUndefined();
    expect(await store.listForAlert(otherOrgId, alert.id)).toBeUndefined();
    expect(await store.listForAlert(orgId, newId('alr'))).toBeUndefined();
  });
});
