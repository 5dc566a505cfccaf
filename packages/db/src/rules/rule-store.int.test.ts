// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fireAlert } from '../alerts/alert-transitions.js';
import type { Database } from '../core/database.js';
import { createOrgStore } from '../orgs/org-store.js';
import type { AlertRuleDraft } from '@monitor/schemas';
import { buildAlertRuleDraft } from '@monitor/testkit/builders';
import type { RuleStore } from './rule-store.js';
import { createRuleStore } from './rule-store.js';
import { migratedDatabase } from '../testing/clean-database.js';

const cpuHigh: AlertRuleDraft = buildAlertRuleDraft({
  durationMinutes: 5,
  channels: ['slack', 'email'],
  scope: { environment: 'prod' },
});

describe('rule store on postgres', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  let store: RuleStore;
  let orgId: string;
  let otherOrgId: string;
  const now = new Date('2026-11-22T10:30:00.000Z');

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'rule_store'));
    store = createRuleStore(db);
    const orgs = createOrgStore(db);
    orgId = (await orgs.createOrganization('a')).id;
    otherOrgId = (await orgs.createOrganization('b')).id;
  });

  afterAll(async () => {
    await dispose();
  });

  const revisionOf = async (id: string): Promise<bigint> => {
    const [row] = await db.sql<{ revision: string }[]>`
      select revision from alert_rules where id = ${id}`;
    return BigInt(row!.revision);
  };

  /** Fires an alert of the rule on `host` (the evaluator's path) and returns its id. */
  async function fire(ruleId: string, host: string, ruleOrgId = orgId): Promise<string> {
    const result = await db.sql.begin((tx) =>
      fireAlert(tx, {
        orgId: ruleOrgId,
        ruleId,
        host,
        value: 97,
        startedAt: new Date('2026-11-22T10:00:00.000Z'),
        firedAt: new Date('2026-11-22T10:05:00.000Z'),
      }),
    );
    if (result.outcome !== 'fired') throw new Error(`fire: ${result.outcome}`);
    return result.alert.id;
  }

  const alertsOf = (ruleId: string) =>
    db.sql<{ id: string; status: string; resolved_at: Date | null; rule_name: string }[]>`
      select id, status, resolved_at, rule_name from alerts where rule_id = ${ruleId} order by id`;

  const notificationsOf = (alertId: string) =>
    db.sql<{ transition: string; channel: string; idempotency_key: string }[]>`
      select transition, channel, idempotency_key from notifications
      where alert_id = ${alertId} order by transition, channel`;

  it('stores a rule with a fresh id and reads it back', async () => {
    const created = await store.createRule(orgId, cpuHigh);
    expect(created).toEqual({
      id: expect.stringMatching(/^rul_[0-9A-Z]{26}$/),
      name: 'cpu high',
      metric: 'cpu_percent',
      condition: 'greater_than',
      threshold: 90,
      durationMinutes: 5,
      severity: 'critical',
      channels: ['slack', 'email'],
      scope: { environment: 'prod' },
      enabled: true,
      recoveryThreshold: null,
      keepFiringForMinutes: 0,
      noDataMinutes: null,
      noDataState: 'alerting',
      renotifyMinutes: null,
      messageTemplate: null,
      flapping: null,
      createdAt: expect.any(Date),
      updatedAt: created.createdAt,
    });
    expect(await store.getRule(orgId, created.id)).toEqual(created);
  });

  const options = {
    recoveryThreshold: 80.5,
    keepFiringForMinutes: 10,
    noDataMinutes: 15,
    noDataState: 'ok',
    renotifyMinutes: 120,
    messageTemplate: '{{host}}: {{metric}} at {{value}}',
    flapping: { windowMinutes: 30, maxTransitions: 4 },
  } as const;

  it('stores and reads back the rule options, and sets them back to null', async () => {
    const created = await store.createRule(orgId, { ...cpuHigh, ...options });
    expect(created).toMatchObject(options);
    expect(await store.getRule(orgId, created.id)).toEqual(created);
    const cleared = await store.updateRule(
      orgId,
      created.id,
      {
        recoveryThreshold: null,
        noDataMinutes: null,
        renotifyMinutes: null,
        messageTemplate: null,
        flapping: null,
      },
      now,
    );
    expect(cleared).toEqual({
      ...created,
      recoveryThreshold: null,
      noDataMinutes: null,
      renotifyMinutes: null,
      messageTemplate: null,
      flapping: null,
      updatedAt: expect.any(Date),
    });
    const changed = await store.updateRule(
      orgId,
      created.id,
      {
        keepFiringForMinutes: 0,
        noDataState: 'keep',
        flapping: { windowMinutes: 5, maxTransitions: 2 },
      },
      now,
    );
    expect(changed).toMatchObject({
      keepFiringForMinutes: 0,
      noDataState: 'keep',
      flapping: { windowMinutes: 5, maxTransitions: 2 },
      threshold: 90,
    });
  });

  it('validates the rule as it would be stored, and a refused change changes nothing', async () => {
    const created = await store.createRule(orgId, { ...cpuHigh, recoveryThreshold: 80 });
    const alertId = await fire(created.id, 'web-validate');
    const revision = await revisionOf(created.id);
    const seen: unknown[] = [];
    const refuse = (rule: unknown) => {
      seen.push(rule);
      throw new Error('refused');
    };
    // A threshold below the recovery threshold would put it on the breaching side.
    await expect(
      store.updateRule(orgId, created.id, { threshold: 70 }, now, refuse),
    ).rejects.toThrow('refused');
    expect(seen).toEqual([
      expect.objectContaining({ threshold: 70, recoveryThreshold: 80, condition: 'greater_than' }),
    ]);
    expect(await store.getRule(orgId, created.id)).toEqual(created);
    expect(await revisionOf(created.id)).toBe(revision);
    // The threshold change would have restarted evaluation: the alert is still active.
    expect((await alertsOf(created.id)).map((alert) => [alert.id, alert.status])).toEqual([
      [alertId, 'active'],
    ]);
    const accepted = await store.updateRule(orgId, created.id, { threshold: 85 }, now, () => {});
    expect(accepted).toMatchObject({ threshold: 85, recoveryThreshold: 80 });
  });

  it('keeps evaluation going when only how alerts resolve, repeat, read or flap changes', async () => {
    const created = await store.createRule(orgId, cpuHigh);
    await fire(created.id, 'web-options');
    await addWindow(created.id, 'web-options');
    const first = await generationOf(created.id);
    await store.updateRule(orgId, created.id, options, now);
    expect((await alertsOf(created.id)).map((alert) => alert.status)).toEqual(['active']);
    expect(await windowsOf(created.id)).toBe(1);
    expect((await generationOf(created.id)).generation).toBe(first.generation);
  });

  it('does not show a rule to another organization', async () => {
    const created = await store.createRule(orgId, cpuHigh);
    expect(await store.getRule(otherOrgId, created.id)).toBeUndefined();
    expect(await store.updateRule(otherOrgId, created.id, { name: 'x' }, now)).toBeUndefined();
    expect(await store.deleteRule(otherOrgId, created.id, now)).toBe(false);
    expect(await store.getRule(orgId, created.id)).toMatchObject({ name: 'cpu high' });
  });

  it('lists the organization’s live rules newest first, with the total', async () => {
    const { id: orgOnly } = await createOrgStore(db).createOrganization('lists');
    const ids: string[] = [];
    for (const name of ['r1', 'r2', 'r3', 'r4']) {
      ids.push((await store.createRule(orgOnly, { ...cpuHigh, name })).id);
    }
    await store.deleteRule(orgOnly, ids[1]!, now);
    await store.createRule(otherOrgId, cpuHigh);
    const first = await store.listRules({ orgId: orgOnly, limit: 2, offset: 0 });
    expect(first.rules.map((rule) => rule.name)).toEqual(['r4', 'r3']);
    expect(first.total).toBe(3);
    const second = await store.listRules({ orgId: orgOnly, limit: 2, offset: 2 });
    expect(second.rules.map((rule) => rule.name)).toEqual(['r1']);
    expect(await store.listRules({ orgId: orgOnly, limit: 2, offset: 9 })).toEqual({
      rules: [],
      total: 3,
    });
  });

  it('changes only the given fields and renews the revision and updated_at', async () => {
    const created = await store.createRule(orgId, cpuHigh);
    const before = await revisionOf(created.id);
    const updated = await store.updateRule(
      orgId,
      created.id,
      { threshold: 80.5, channels: [], scope: {}, durationMinutes: 0 },
      now,
    );
    expect(updated).toEqual({
      ...created,
      threshold: 80.5,
      channels: [],
      scope: {},
      durationMinutes: 0,
      updatedAt: expect.any(Date),
    });
    expect(updated!.updatedAt.getTime()).toBeGreaterThanOrEqual(created.updatedAt.getTime());
    const after = await revisionOf(created.id);
    expect(after).toBeGreaterThan(before);
    const renamed = await store.updateRule(
      orgId,
      created.id,
      { name: 'renamed', condition: 'less_than', severity: 'info', metric: 'load', enabled: true },
      now,
    );
    expect(renamed).toMatchObject({
      name: 'renamed',
      condition: 'less_than',
      severity: 'info',
      metric: 'load',
      threshold: 80.5,
    });
    expect(await revisionOf(created.id)).toBeGreaterThan(after);
  });

  it('grows the change fingerprint with every change, deletions included', async () => {
    const fingerprint = async () => {
      const [row] = await db.sql<{ n: string; sum: string }[]>`
        select count(*) as n, coalesce(sum(revision), 0) as sum from alert_rules`;
      return `${row!.n}:${row!.sum}`;
    };
    const start = await fingerprint();
    const created = await store.createRule(orgId, cpuHigh);
    const afterCreate = await fingerprint();
    await store.updateRule(orgId, created.id, { threshold: 1 }, now);
    const afterUpdate = await fingerprint();
    await store.deleteRule(orgId, created.id, now);
    const afterDelete = await fingerprint();
    expect(new Set([start, afterCreate, afterUpdate, afterDelete]).size).toBe(4);
  });

  it('soft-deletes: 404 from then on, the row kept with deleted_at, its alerts resolved', async () => {
    const created = await store.createRule(orgId, cpuHigh);
    const alertId = await fire(created.id, 'web-1');
    const otherAlertId = await fire(created.id, 'web-2');
    const before = await revisionOf(created.id);

    expect(await store.deleteRule(orgId, created.id, now)).toBe(true);

    expect(await store.getRule(orgId, created.id)).toBeUndefined();
    expect(await store.updateRule(orgId, created.id, { name: 'x' }, now)).toBeUndefined();
    expect(await store.deleteRule(orgId, created.id, now)).toBe(false);
    const [row] = await db.sql<{ deleted_at: Date | null }[]>`
      select deleted_at from alert_rules where id = ${created.id}`;
    expect(row!.deleted_at).toBeInstanceOf(Date);
    expect(await revisionOf(created.id)).toBeGreaterThan(before);
    expect(await alertsOf(created.id)).toEqual([
      { id: alertId, status: 'resolved', resolved_at: now, rule_name: 'cpu high' },
      { id: otherAlertId, status: 'resolved', resolved_at: now, rule_name: 'cpu high' },
    ]);
    expect(await notificationsOf(alertId)).toEqual([
      { transition: 'fired', channel: 'email', idempotency_key: `${alertId}:fired` },
      { transition: 'fired', channel: 'slack', idempotency_key: `${alertId}:fired` },
      { transition: 'resolved', channel: 'email', idempotency_key: `${alertId}:resolved` },
      { transition: 'resolved', channel: 'slack', idempotency_key: `${alertId}:resolved` },
    ]);
    // The evaluator sees the rule gone: nothing fires for it any more.
    const refire = await db.sql.begin((tx) =>
      fireAlert(tx, {
        orgId,
        ruleId: created.id,
        host: 'web-1',
        value: 99,
        startedAt: now,
        firedAt: now,
      }),
    );
    expect(refire.outcome).toBe('rule-gone');
  });

  const windowsOf = async (ruleId: string) => {
    const [row] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from evaluator_states where rule_id = ${ruleId}`;
    return row?.n ?? 0;
  };
  const generationOf = async (ruleId: string) => {
    const [row] = await db.sql<{ generation: string; revision: string }[]>`
      select generation, revision from alert_rules where id = ${ruleId}`;
    return { generation: BigInt(row!.generation), revision: BigInt(row!.revision) };
  };
  const addWindow = (ruleId: string, host: string) => db.sql`
    insert into evaluator_states (org_id, host, rule_id, state)
    values (${orgId}, ${host}, ${ruleId}, '{"v": 1, "status": "firing"}'::jsonb)`;

  it('restarts evaluation when what the rule evaluates changes: alerts resolved, windows gone', async () => {
    const created = await store.createRule(orgId, { ...cpuHigh, channels: ['webhook'] });
    const alertId = await fire(created.id, 'web-1');
    await addWindow(created.id, 'web-1');
    const first = await generationOf(created.id);

    // Name, severity and channels do not change what is evaluated: nothing restarts.
    await store.updateRule(orgId, created.id, { name: 'cpu very high', channels: ['slack'] }, now);
    expect((await alertsOf(created.id)).map((alert) => alert.status)).toEqual(['active']);
    expect(await windowsOf(created.id)).toBe(1);
    expect((await generationOf(created.id)).generation).toBe(first.generation);

    const changed = await store.updateRule(orgId, created.id, { threshold: 95 }, now);
    expect(changed).toMatchObject({ threshold: 95, enabled: true });
    expect(await alertsOf(created.id)).toEqual([
      { id: alertId, status: 'resolved', resolved_at: now, rule_name: 'cpu high' },
    ]);
    // The resolution goes to the channels the alert fired with.
    expect((await notificationsOf(alertId)).map((n) => `${n.transition}:${n.channel}`)).toEqual([
      'fired:webhook',
      'resolved:webhook',
    ]);
    expect(await windowsOf(created.id)).toBe(0);
    const { generation, revision } = await generationOf(created.id);
    expect(generation).toBe(revision);
  });

  it('restarts on disable and on enable, so a quick off-and-on still voids old windows', async () => {
    const created = await store.createRule(orgId, cpuHigh);
    await fire(created.id, 'web-2');
    await addWindow(created.id, 'web-2');
    await store.updateRule(orgId, created.id, { enabled: false }, now);
    expect((await alertsOf(created.id)).map((alert) => alert.status)).toEqual(['resolved']);
    expect(await windowsOf(created.id)).toBe(0);
    const disabled = await generationOf(created.id);
    await store.updateRule(orgId, created.id, { enabled: true }, now);
    expect((await generationOf(created.id)).generation).toBeGreaterThan(disabled.generation);
    expect(await store.getRule(orgId, created.id)).toMatchObject({ enabled: true });
  });

  it('gives generations out in commit order and keeps the epoch at the newest committed', async () => {
    const epoch = async () => {
      const [row] = await db.sql<{ generation: string }[]>`select generation from alert_rule_epoch`;
      return BigInt(row!.generation);
    };
    const created = await store.createRule(orgId, cpuHigh);
    expect((await generationOf(created.id)).generation).toBe(await epoch());
    // A rule change in progress holds the epoch: a rule created meanwhile waits for its commit,
    // so whoever sees the later generation also sees the earlier one.
    let releaseChange!: () => void;
    const held = new Promise<void>((resolve) => (releaseChange = resolve));
    let changeStarted!: () => void;
    const started = new Promise<void>((resolve) => (changeStarted = resolve));
    const change = db.sql.begin(async (tx) => {
      await tx`update alert_rule_epoch set generation = nextval('alert_rule_revisions')`;
      changeStarted();
      await held;
    });
    await started;
    let createdLater = false;
    const later = store.createRule(orgId, { ...cpuHigh, name: 'later' }).then((rule) => {
      createdLater = true;
      return rule;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(createdLater).toBe(false);
    releaseChange();
    await change;
    const laterRule = await later;
    expect((await generationOf(laterRule.id)).generation).toBe(await epoch());
    expect(await epoch()).toBeGreaterThan((await generationOf(created.id)).generation + 1n);
  });

  it('takes no generation for a change of a rule that is not there', async () => {
    const [before] = await db.sql<
      { generation: string }[]
    >`select generation from alert_rule_epoch`;
    expect(
      await store.updateRule(orgId, 'rul_01M00000000000000000000000', { threshold: 5 }, now),
    ).toBeUndefined();
    const created = await store.createRule(otherOrgId, cpuHigh);
    const [afterCreate] = await db.sql<{ generation: string }[]>`
      select generation from alert_rule_epoch`;
    // Another organization's rule is not there either.
    expect(await store.updateRule(orgId, created.id, { threshold: 5 }, now)).toBeUndefined();
    const [after] = await db.sql<{ generation: string }[]>`select generation from alert_rule_epoch`;
    expect(after!.generation).toBe(afterCreate!.generation);
    expect(BigInt(afterCreate!.generation)).toBeGreaterThan(BigInt(before!.generation));
    expect((await generationOf(created.id)).generation).toBe(BigInt(after!.generation));
  });

  it('leaves alerts of other rules alone', async () => {
    const deleted = await store.createRule(orgId, cpuHigh);
    const kept = await store.createRule(orgId, cpuHigh);
    await fire(deleted.id, 'db-1');
    const keptAlertId = await fire(kept.id, 'db-1');
    await store.deleteRule(orgId, deleted.id, now);
    expect(await alertsOf(kept.id)).toEqual([
      { id: keptAlertId, status: 'active', resolved_at: null, rule_name: 'cpu high' },
    ]);
  });
});
