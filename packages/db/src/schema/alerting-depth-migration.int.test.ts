// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { cleanDatabase } from '../testing/clean-database.js';
import { migrate, migrateWith } from './migrate.js';
import { migrations } from './migrations.js';

describe.each(['postgres', 'timescale'] as const)(
  'migration 17 (alerting depth) on %s',
  (engine) => {
    let db: Database;
    let dispose: () => Promise<void>;

    beforeAll(async () => {
      ({ db, dispose } = await cleanDatabase(engine, `alerting_depth_${engine}`));
      await migrateWith(
        db,
        migrations.filter((migration) => migration.version < 17),
      );
      // What version 16 holds: a rule, its fired alert and the alert's notification.
      await db.sql`insert into organizations (id, name) values ('org_m', 'm')`;
      await db.sql`
      insert into alert_rules (id, org_id, name, metric, condition, threshold, duration_minutes,
        severity, channels)
      values ('rul_old', 'org_m', 'old', 'cpu', 'greater_than', 90, 0, 'warning', '{slack}')
    `;
      await db.sql`
      insert into alerts (id, org_id, rule_id, rule_name, service_id, host, metric, condition,
        threshold, severity, status, value, started_at, fired_at, channels)
      values ('alr_old', 'org_m', 'rul_old', 'old', 'svc_a', 'a', 'cpu', 'greater_than', 90,
        'warning', 'active', 95, now(), now(), '{slack}')
    `;
      await db.sql`
      insert into notifications (id, org_id, alert_id, transition, channel, idempotency_key, payload)
      values ('ntf_old', 'org_m', 'alr_old', 'fired', 'slack', 'alr_old:fired', '{}')
    `;
      const result = await migrate(db);
      // 17 first, then whatever later versions exist (18: the evaluator's no-data storage).
      expect(result.applied.map((migration) => migration.version)[0]).toBe(17);
    });

    afterAll(async () => {
      await dispose?.();
    });

    it('gives stored rules the defaults: every new behaviour off', async () => {
      const [rule] = await db.sql`
      select recovery_threshold, keep_firing_for_minutes, no_data_minutes, no_data_state,
        renotify_minutes, message_template, flapping
      from alert_rules where id = 'rul_old'
    `;
      expect(rule).toEqual({
        recovery_threshold: null,
        keep_firing_for_minutes: 0,
        no_data_minutes: null,
        no_data_state: 'alerting',
        renotify_minutes: null,
        message_template: null,
        flapping: null,
      });
    });

    it('gives stored alerts reason threshold, unacknowledged, not flapping', async () => {
      const [alert] = await db.sql`
      select reason, value, acknowledged_at, acknowledged_by, acknowledgement_comment, flapping
      from alerts where id = 'alr_old'
    `;
      expect(alert).toEqual({
        reason: 'threshold',
        value: 95,
        acknowledged_at: null,
        acknowledged_by: null,
        acknowledgement_comment: null,
        flapping: false,
      });
    });

    it('refuses rule values out of their bounds', async () => {
      const refused = [
        `keep_firing_for_minutes = 1441`,
        `keep_firing_for_minutes = -1`,
        `no_data_minutes = 0`,
        `no_data_state = 'maybe'`,
        `renotify_minutes = 10081`,
        `message_template = repeat('x', 2001)`,
        `flapping = '[1]'::jsonb`,
      ];
      for (const change of refused) {
        await expect(
          db.sql.unsafe(`update alert_rules set ${change} where id = 'rul_old'`),
          change,
        ).rejects.toThrow(/check constraint/);
      }
    });

    it('stores a no-data alert without a value, and only the two reasons', async () => {
      await db.sql`
      insert into alerts (id, org_id, rule_id, rule_name, service_id, host, metric, condition,
        threshold, severity, status, value, started_at, fired_at, reason)
      values ('alr_nodata', 'org_m', 'rul_old', 'old', 'svc_b', 'b', 'cpu', 'greater_than', 90,
        'warning', 'active', null, now(), now(), 'no_data')
    `;
      await expect(
        db.sql`update alerts set reason = 'other' where id = 'alr_nodata'`,
      ).rejects.toThrow(/check constraint/);
    });

    it('numbers repeated notifications of an alert and keeps replays harmless', async () => {
      const insert = (id: string, transition: string, sequence: number) => db.sql`
      insert into notifications (id, org_id, alert_id, transition, channel, idempotency_key,
        payload, sequence)
      values (${id}, 'org_m', 'alr_old', ${transition}, 'slack',
        ${`alr_old:${transition}:${sequence}`}, '{}', ${sequence})
      on conflict (alert_id, transition, sequence, channel) do nothing
      returning id
    `;
      expect(await insert('ntf_r1', 'renotified', 1)).toHaveLength(1);
      expect(await insert('ntf_r2', 'renotified', 2)).toHaveLength(1);
      expect(await insert('ntf_r1_again', 'renotified', 1)).toHaveLength(0);
      expect(await insert('ntf_u1', 'unsilenced', 1)).toHaveLength(1);
      expect(await insert('ntf_s1', 'settled', 1)).toHaveLength(1);
      // The fired row of version 16 is sequence 0: its replay conflicts with it.
      expect(await insert('ntf_fired_again', 'fired', 0)).toHaveLength(0);
      await db.sql`update notifications set status = 'suppressed' where id = 'ntf_r2'`;
      await expect(
        db.sql`update notifications set transition = 'other' where id = 'ntf_r2'`,
      ).rejects.toThrow(/check constraint/);
    });

    it('stores silences, whose end is never before their start', async () => {
      await db.sql`
      insert into silences (id, org_id, matchers, starts_at, ends_at, comment, recurrence,
        created_by)
      values ('sil_1', 'org_m', '{"host": "a"}', '2026-11-23T00:00:00Z', '2026-11-24T00:00:00Z',
        'maintenance', '{"rrule": "FREQ=DAILY", "duration_minutes": 60, "timezone": "UTC"}',
        'key_1')
    `;
      await expect(db.sql`
      insert into silences (id, org_id, matchers, starts_at, ends_at, comment, created_by)
      values ('sil_2', 'org_m', '{"host": "a"}', '2026-11-24T00:00:00Z', '2026-11-23T00:00:00Z',
        'backwards', 'key_1')
    `).rejects.toThrow(/check constraint/);
    });
  },
);
