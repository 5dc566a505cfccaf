// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { pruneAlertHistory, pruneIdleWatermarks } from './prune-alert-history.js';
import { migratedDatabase } from '../testing/clean-database.js';

const now = new Date('2026-11-22T12:00:00.000Z');
const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000);

describe('pruneAlertHistory', () => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'prune_alert_history'));
  });

  afterAll(async () => {
    await dispose?.();
  });

  async function alert(id: string, resolvedDaysAgo: number | null): Promise<void> {
    const resolvedAt = resolvedDaysAgo === null ? null : daysAgo(resolvedDaysAgo);
    await db.sql`
      insert into alerts (id, org_id, rule_id, rule_name, service_id, host, metric, condition,
        threshold, severity, status, value, started_at, fired_at, resolved_at, investigation_id)
      values (${id}, 'org_1', 'rul_1', 'cpu high', 'svc_1', 'web-1', 'cpu_percent',
        'greater_than', 90, 'critical', ${resolvedAt === null ? 'active' : 'resolved'}, 95,
        ${daysAgo(200)}, ${daysAgo(200)}, ${resolvedAt}, ${`inv_${id}`})
    `;
    await db.sql`
      insert into notifications (id, org_id, alert_id, transition, channel, idempotency_key,
        payload, status)
      values (${`ntf_${id}`}, 'org_1', ${id}, 'fired', 'slack', ${`${id}:fired`}, '{}', 'delivered')
    `;
    await db.sql`
      insert into notification_attempts (notification_id, attempt, attempted_at, outcome, detail,
        duration_ms)
      values (${`ntf_${id}`}, 1, ${daysAgo(200)}, 'delivered', 'HTTP 200', 12)
    `;
    await investigation(`inv_${id}`, id, 'completed', 200);
  }

  async function investigation(
    id: string,
    alertId: string | null,
    status: 'queued' | 'running' | 'completed' | 'failed',
    completedDaysAgo: number,
  ): Promise<void> {
    const done = status === 'completed' || status === 'failed';
    await db.sql`
      insert into investigations (id, org_id, alert_id, service_id, title, status, window_from,
        window_to, created_at, completed_at)
      values (${id}, 'org_1', ${alertId}, 'svc_1', 'why', ${status}, ${daysAgo(201)},
        ${daysAgo(200)}, ${daysAgo(completedDaysAgo)},
        ${done ? daysAgo(completedDaysAgo) : null})
    `;
  }

  const ids = async (table: 'alerts' | 'notifications' | 'investigations') =>
    (await db.sql<{ id: string }[]>`select id from ${db.sql(table)} order by id`).map((r) => r.id);

  it('deletes resolved alerts and finished on-demand investigations past retention, and only those', async () => {
    await alert('alr_old', 100);
    await alert('alr_recent', 10);
    await alert('alr_active', null);
    await investigation('inv_demand_old', null, 'completed', 100);
    await investigation('inv_demand_failed', null, 'failed', 95);
    await investigation('inv_demand_recent', null, 'completed', 5);
    await investigation('inv_demand_running', null, 'running', 100);

    const result = await pruneAlertHistory(db, { now, retentionDays: 90, batchSize: 100 });

    expect(result).toEqual({ alerts: 1, notifications: 1, investigations: 3 });
    expect(await ids('alerts')).toEqual(['alr_active', 'alr_recent']);
    expect(await ids('notifications')).toEqual(['ntf_alr_active', 'ntf_alr_recent']);
    expect(
      (
        await db.sql<{ notification_id: string }[]>`
        select notification_id from notification_attempts order by 1`
      ).map((r) => r.notification_id),
    ).toEqual(['ntf_alr_active', 'ntf_alr_recent']);
    expect(await ids('investigations')).toEqual([
      'inv_alr_active',
      'inv_alr_recent',
      'inv_demand_recent',
      'inv_demand_running',
    ]);
  });

  it('deletes at most a batch per call, oldest first', async () => {
    for (const days of [300, 299, 298]) await alert(`alr_batch_${days}`, days);
    expect(await pruneAlertHistory(db, { now, retentionDays: 90, batchSize: 2 })).toMatchObject({
      alerts: 2,
    });
    expect((await ids('alerts')).filter((id) => id.startsWith('alr_batch'))).toEqual([
      'alr_batch_298',
    ]);
    expect(await pruneAlertHistory(db, { now, retentionDays: 90, batchSize: 2 })).toMatchObject({
      alerts: 1,
    });
    expect(await pruneAlertHistory(db, { now, retentionDays: 90, batchSize: 2 })).toEqual({
      alerts: 0,
      notifications: 0,
      investigations: 0,
    });
  });

  it('deletes the watermarks of hosts silent past the raw retention and a day, and only those', async () => {
    await db.sql`
      insert into evaluator_watermarks (org_id, host, marks, updated_at)
      values ('org_1', 'gone', '{}', ${daysAgo(32)}), ('org_1', 'quiet', '{}', ${daysAgo(30.5)}),
        ('org_1', 'busy', '{}', ${now})
    `;
    expect(await pruneIdleWatermarks(db, { now, rawRetentionDays: 30, batchSize: 100 })).toBe(1);
    const hosts = await db.sql<
      { host: string }[]
    >`select host from evaluator_watermarks order by host`;
    expect(hosts.map((row) => row.host)).toEqual(['busy', 'quiet']);
  });
});
