// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '@monitor/schemas';
import { buildAlertRuleDraft } from '@monitor/testkit/builders';
import { fireAlert, resolveAlerts } from '../alerts/alert-transitions.js';
import type { AlertQueries } from '../alerts/alert-queries.js';
import { createAlertQueries } from '../alerts/alert-queries.js';
import type { Database } from '../core/database.js';
import { createOrgStore } from '../orgs/org-store.js';
import { createRuleStore } from '../rules/rule-store.js';
import { migratedDatabase } from '../testing/clean-database.js';
import type { SilenceStore } from './silence-store.js';
import { createSilenceStore, silencesInForce } from './silence-store.js';

const now = new Date('2026-11-24T03:00:00.000Z');
const hours = (n: number) => new Date(now.getTime() + n * 3_600_000);

describe('silences and what they do to alerts on postgres', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  let silences: SilenceStore;
  let alerts: AlertQueries;
  let orgId: string;
  let otherOrgId: string;
  let web1: Alert;
  let web2: Alert;
  let db1Warning: Alert;

  async function fire(ruleId: string, host: string, ruleOrgId = orgId): Promise<Alert> {
    const result = await db.sql.begin((tx) =>
      fireAlert(tx, {
        orgId: ruleOrgId,
        ruleId,
        host,
        value: 95,
        startedAt: hours(-2),
        firedAt: hours(-1),
      }),
    );
    if (result.outcome !== 'fired') throw new Error(`fire: ${result.outcome}`);
    return result.alert;
  }

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'silence_store'));
    silences = createSilenceStore(db);
    alerts = createAlertQueries(db);
    const orgs = createOrgStore(db);
    orgId = (await orgs.createOrganization('a')).id;
    otherOrgId = (await orgs.createOrganization('b')).id;
    const rules = createRuleStore(db);
    const critical = (await rules.createRule(orgId, buildAlertRuleDraft({ name: 'cpu critical' })))
      .id;
    const warning = (
      await rules.createRule(
        orgId,
        buildAlertRuleDraft({ name: 'cpu warning', severity: 'warning' }),
      )
    ).id;
    web1 = await fire(critical, 'web-1');
    web2 = await fire(critical, 'web-2');
    db1Warning = await fire(warning, 'db-1');
    await db.sql`update services set tags = '{"env": "prod", "team": "core"}' where name = 'web-1'`;
    await db.sql`update services set tags = '{"env": "staging"}' where name = 'web-2'`;
  });

  afterAll(async () => {
    await dispose();
  });

  const list = (query: Partial<Parameters<AlertQueries['listAlerts']>[0]> = {}) =>
    alerts.listAlerts({ orgId, status: 'all', now, limit: 50, offset: 0, ...query });

  it('stores a silence and reads it back', async () => {
    const created = await silences.createSilence(orgId, 'key_1', {
      matchers: { host: 'web-9', tags: { env: 'prod' } },
      startsAt: hours(-1),
      endsAt: hours(1),
      comment: 'disk swap',
      recurrence: null,
    });
    expect(created).toEqual({
      id: expect.stringMatching(/^sil_[0-9A-Z]{26}$/),
      matchers: { host: 'web-9', tags: { env: 'prod' } },
      startsAt: hours(-1),
      endsAt: hours(1),
      comment: 'disk swap',
      recurrence: null,
      createdAt: expect.any(Date),
      createdBy: 'key_1',
    });
    expect(await silences.getSilence(orgId, created.id)).toEqual(created);
    expect(await silences.getSilence(otherOrgId, created.id)).toBeUndefined();
  });

  it('computes silenced from the silences in force, tags against the service', async () => {
    expect((await list()).alerts.map((alert) => alert.silenced)).toEqual([false, false, false]);
    const prod = await silences.createSilence(orgId, 'key_1', {
      matchers: { tags: { env: 'prod' }, severity: 'critical' },
      startsAt: hours(-1),
      endsAt: hours(1),
      comment: 'prod maintenance',
      recurrence: null,
    });
    const silenced = await list({ silenced: true });
    expect(silenced.alerts.map((alert) => alert.id)).toEqual([web1.id]);
    expect(silenced.total).toBe(1);
    expect(silenced.alerts[0]?.silenced).toBe(true);
    expect((await list({ silenced: false })).alerts.map((alert) => alert.id)).toEqual([
      db1Warning.id,
      web2.id,
    ]);
    expect((await alerts.getAlert(orgId, web1.id, now))?.silenced).toBe(true);
    // Not yet in force, and no longer in force.
    expect((await alerts.getAlert(orgId, web1.id, hours(-2)))?.silenced).toBe(false);
    expect((await alerts.getAlert(orgId, web1.id, hours(1)))?.silenced).toBe(false);
    // Expired now: silenced no more, listed as expired.
    expect(await silences.expireSilence(orgId, prod.id, now)).toBe(true);
    expect((await alerts.getAlert(orgId, web1.id, now))?.silenced).toBe(false);
    expect(await silences.getSilence(orgId, prod.id)).toMatchObject({ endsAt: now });
    expect(await silences.expireSilence(otherOrgId, prod.id, now)).toBe(false);
  });

  it('silences through a recurring window only while the window is open', async () => {
    await silences.createSilence(orgId, 'key_1', {
      matchers: { host: 'web-2' },
      startsAt: hours(-48),
      endsAt: hours(48),
      comment: 'nightly backup',
      // 03:00-03:30 UTC every day: open at `now` (03:00Z), shut at 03:30.
      recurrence: { rrule: 'FREQ=DAILY;BYHOUR=3;BYMINUTE=0', durationMinutes: 30, timezone: 'UTC' },
    });
    expect((await alerts.getAlert(orgId, web2.id, now))?.silenced).toBe(true);
    expect((await alerts.getAlert(orgId, web2.id, hours(0.5)))?.silenced).toBe(false);
    expect((await alerts.getAlert(orgId, web2.id, hours(24.25)))?.silenced).toBe(true);
    expect(
      (await silencesInForce(db.sql, now, orgId)).map((silence) => silence.comment).sort(),
    ).toEqual(['disk swap', 'nightly backup']);
    expect(
      (await silencesInForce(db.sql, hours(0.5), orgId)).map((silence) => silence.comment),
    ).toEqual(['disk swap']);
    expect(await silencesInForce(db.sql, now, otherOrgId)).toEqual([]);
  });

  it('lists by state at the given time, newest first, all but expired by default, paged', async () => {
    const { id: listOrg } = await createOrgStore(db).createOrganization('lists');
    const make = (comment: string, startsAt: Date, endsAt: Date, recurrence = null as never) =>
      silences.createSilence(listOrg, 'key_2', {
        matchers: { host: 'h' },
        startsAt,
        endsAt,
        comment,
        recurrence,
      });
    await make('expired', hours(-5), hours(-4));
    await make('active', hours(-1), hours(1));
    await make('pending', hours(1), hours(2));
    await silences.createSilence(listOrg, 'key_2', {
      matchers: { host: 'h' },
      startsAt: hours(-48),
      endsAt: hours(48),
      comment: 'between windows',
      recurrence: { rrule: 'FREQ=DAILY;BYHOUR=12', durationMinutes: 60, timezone: 'UTC' },
    });
    const comments = async (state?: 'active' | 'pending' | 'expired', limit = 50, offset = 0) => {
      const page = await silences.listSilences({ orgId: listOrg, state, now, limit, offset });
      return [page.silences.map((silence) => silence.comment), page.total];
    };
    expect(await comments()).toEqual([['between windows', 'pending', 'active'], 3]);
    expect(await comments(undefined, 2, 1)).toEqual([['pending', 'active'], 3]);
    expect(await comments('active')).toEqual([['active'], 1]);
    expect(await comments('pending')).toEqual([['between windows', 'pending'], 2]);
    expect(await comments('pending', 1, 1)).toEqual([['pending'], 2]);
    expect(await comments('expired')).toEqual([['expired'], 1]);
  });

  it('expires a pending silence at once: it starts and ends now', async () => {
    const pending = await silences.createSilence(orgId, 'key_1', {
      matchers: { host: 'x' },
      startsAt: hours(2),
      endsAt: hours(3),
      comment: 'later',
      recurrence: null,
    });
    expect(await silences.expireSilence(orgId, pending.id, now)).toBe(true);
    expect(await silences.getSilence(orgId, pending.id)).toMatchObject({
      startsAt: now,
      endsAt: now,
    });
    // Again: still there, unchanged.
    expect(await silences.expireSilence(orgId, pending.id, hours(1))).toBe(true);
    expect(await silences.getSilence(orgId, pending.id)).toMatchObject({ endsAt: now });
  });

  it('acknowledges once (the first time and comment stay), undoes it, and filters on it', async () => {
    const first = await alerts.acknowledgeAlert({
      orgId,
      alertId: web2.id,
      keyId: 'key_ack',
      comment: 'on it',
      now,
    });
    expect(first).toMatchObject({
      acknowledgedAt: now,
      acknowledgedBy: 'key_ack',
      acknowledgementComment: 'on it',
    });
    const again = await alerts.acknowledgeAlert({
      orgId,
      alertId: web2.id,
      keyId: 'key_other',
      comment: 'me too',
      now: hours(1),
    });
    expect(again).toMatchObject({
      acknowledgedAt: now,
      acknowledgedBy: 'key_ack',
      acknowledgementComment: 'on it',
    });
    expect((await list({ acknowledged: true })).alerts.map((alert) => alert.id)).toEqual([web2.id]);
    expect((await list({ acknowledged: false })).total).toBe(2);
    expect(
      await alerts.acknowledgeAlert({
        orgId: otherOrgId,
        alertId: web2.id,
        keyId: 'k',
        comment: null,
        now,
      }),
    ).toBeUndefined();
    const undone = await alerts.unacknowledgeAlert(orgId, web2.id, now);
    expect(undone).toMatchObject({
      acknowledgedAt: null,
      acknowledgedBy: null,
      acknowledgementComment: null,
    });
    expect((await list({ acknowledged: true })).total).toBe(0);
  });

  it('acknowledges a resolved alert, and filters by reason', async () => {
    await db.sql.begin((tx) =>
      resolveAlerts(tx, { orgId, ruleId: db1Warning.ruleId, host: 'db-1' }, now),
    );
    const acknowledged = await alerts.acknowledgeAlert({
      orgId,
      alertId: db1Warning.id,
      keyId: 'key_ack',
      comment: null,
      now,
    });
    expect(acknowledged).toMatchObject({ status: 'resolved', acknowledgedAt: now });
    await db.sql`update alerts set reason = 'no_data', value = null where id = ${web1.id}`;
    const noData = await list({ reason: 'no_data' });
    expect(noData.alerts.map((alert) => [alert.id, alert.reason, alert.value])).toEqual([
      [web1.id, 'no_data', null],
    ]);
    expect((await list({ reason: 'threshold' })).total).toBe(2);
  });
});
