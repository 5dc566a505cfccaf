// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import type {
  RuleAlertFiring,
  RuleGroupAlertChanges,
  RuleGroupEvaluationRecord,
  RuleGroupKey,
  RuleGroupStateStore,
  RuleGroupStore,
} from '../index.js';
import {
  createAlertQueries,
  createAlertmanagerResendStore,
  createNotificationChannelStore,
  createOrgStore,
  createRuleGroupStateStore,
  createRuleGroupStore,
} from '../index.js';
import { migratedDatabase } from '../testing/clean-database.js';

const t0 = 1_764_000_000_000;
const minute = 60_000;
const hot = 'name: node\nrules:\n- alert: Hot\n  expr: temp > 50\n- alert: Down\n  expr: up == 0\n';
const keys = { ruleKeys: ['Hot{}', 'Down{}'], alertingRuleKeys: ['Hot{}', 'Down{}'] };

function record(lastEvaluationMs: number): RuleGroupEvaluationRecord {
  return { state: { rules: {} }, lastEvaluationMs, durationMs: 1, health: [] };
}

function firing(
  ruleKey: string,
  labels: Record<string, string>,
  overrides: Partial<RuleAlertFiring> = {},
): RuleAlertFiring {
  return {
    ruleKey,
    ruleName: ruleKey.replace('{}', ''),
    host: labels['instance']?.replace(/:\d+$/, '') ?? 'prometheus-rules',
    severity: 'warning',
    labels: { alertname: ruleKey.replace('{}', ''), ...labels },
    annotations: { summary: 'hot' },
    value: 71,
    activeAtMs: t0 - minute,
    firedAtMs: t0,
    validUntilMs: t0 + 4 * minute,
    ...overrides,
  };
}

const none: RuleGroupAlertChanges = { fire: [], resolve: [], annotate: [], resend: [] };

describe('alerts of rule groups, saved with their evaluations', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  let groups: RuleGroupStore;
  let states: RuleGroupStateStore;
  let orgId: string;
  let key: RuleGroupKey;

  /** Saves an evaluation at `timeMs` that went on from the stored one, with `changes`. */
  async function save(timeMs: number, changes: Partial<RuleGroupAlertChanges>): Promise<boolean> {
    const loaded = await states.loadGroup(key);
    return states.saveEvaluation(
      key,
      { lastEvaluationMs: loaded?.evaluation?.lastEvaluationMs, revision: loaded!.revision },
      record(timeMs),
      { ...none, ...changes },
    );
  }

  async function notifications(
    alertId: string,
  ): Promise<{ transition: string; channel: string }[]> {
    return db.sql<{ transition: string; channel: string }[]>`
      select transition, channel from notifications where alert_id = ${alertId}
      order by created_at, transition`;
  }

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'rule_group_alerts'));
    groups = createRuleGroupStore(db);
    states = createRuleGroupStateStore(db);
    orgId = (await createOrgStore(db).createOrganization('a')).id;
    key = { orgId, namespace: 'ns', name: 'node' };
    await createNotificationChannelStore(db).putChannel(orgId, 'alertmanager', {
      urls: ['http://alertmanager.example:9093'],
      timeout_seconds: 10,
    });
    await groups.putGroup(
      orgId,
      'ns',
      { name: 'node', definition: hot, ruleCount: 2, ...keys },
      10,
    );
  });

  afterAll(async () => {
    await dispose();
  });

  it('fires, annotates, re-sends and resolves alerts of rule files, once each', async () => {
    const node1 = firing('Hot{}', { instance: 'node-1:9100' }, { severity: 'critical' });
    const total = firing('Down{}', {}, { severity: 'info', value: null });
    expect(await save(t0, { fire: [node1, total] })).toBe(true);

    const rows = await states.listGroupAlerts(key, t0);
    expect(rows.map((row) => [row.ruleKey, row.status, row.labels])).toEqual(
      expect.arrayContaining([
        ['Hot{}', 'active', { alertname: 'Hot', instance: 'node-1:9100' }],
        ['Down{}', 'active', { alertname: 'Down' }],
      ]),
    );
    const alerts = createAlertQueries(db);
    const { alerts: listed } = await alerts.listAlerts({
      orgId,
      status: 'active',
      limit: 10,
      offset: 0,
    });
    const onNode = listed.find((alert) => alert.host === 'node-1');
    expect(onNode).toMatchObject({
      ruleId: expect.stringMatching(/^rul_/) as unknown,
      ruleName: 'Hot',
      metric: 'Hot',
      condition: null,
      threshold: null,
      severity: 'critical',
      value: 71,
      startedAt: new Date(t0 - minute),
      firedAt: new Date(t0),
      labels: node1.labels,
      annotations: { summary: 'hot' },
    });
    // A critical alert opens an investigation; an info one does not. Both go to Alertmanager.
    expect(onNode?.investigationId).toMatch(/^inv_/);
    const aggregate = listed.find((alert) => alert.metric === 'Down');
    expect(aggregate).toMatchObject({ host: 'prometheus-rules', investigationId: null });
    expect(await notifications(onNode!.id)).toEqual([
      { transition: 'fired', channel: 'alertmanager' },
    ]);

    // A replay after a lost save (a newer CAS, the same alerts) fires nothing twice; a save that
    // lost the race applies nothing.
    expect(await save(t0 + minute, { fire: [node1] })).toBe(true);
    expect(
      await states.saveEvaluation(
        key,
        { lastEvaluationMs: t0, revision: (await states.loadGroup(key))!.revision },
        record(t0 + minute),
        { ...none, fire: [firing('Hot{}', { instance: 'node-2:9100' })] },
      ),
    ).toBe(false);
    expect(await states.listGroupAlerts(key, t0 + minute)).toHaveLength(2);
    expect(await notifications(onNode!.id)).toHaveLength(1);

    // Annotations follow the evaluations; a re-send is taken once.
    const resendAt = t0 + 2 * minute;
    expect(
      await save(resendAt, {
        annotate: [{ id: onNode!.id, annotations: { summary: 'hotter' } }],
        resend: [{ id: onNode!.id, validUntilMs: resendAt + 4 * minute }],
      }),
    ).toBe(true);
    const resends = createAlertmanagerResendStore(db);
    const taken = await resends.takeRuleAlertResends(new Date(), 100);
    expect(taken).toEqual([
      expect.objectContaining({
        orgId,
        validUntil: new Date(resendAt + 4 * minute),
        alert: expect.objectContaining({ id: onNode!.id, annotations: { summary: 'hotter' } }),
      }),
    ]);
    expect(await resends.takeRuleAlertResends(new Date(), 100)).toEqual([]);
    // Our own rules' re-sends leave rule files' alerts to their evaluations.
    expect(await resends.listResends(new Date(), { limit: 100 })).toEqual([]);

    // Resolved at its evaluation's time, notified once; re-sent resolved afterwards.
    const resolvedAt = t0 + 3 * minute;
    expect(
      await save(resolvedAt, { resolve: [{ id: onNode!.id, resolvedAtMs: resolvedAt }] }),
    ).toBe(true);
    expect(await save(t0 + 4 * minute, { resend: [{ id: onNode!.id, validUntilMs: null }] })).toBe(
      true,
    );
    expect(await resends.takeRuleAlertResends(new Date(), 100)).toEqual([
      expect.objectContaining({
        alert: expect.objectContaining({ status: 'resolved', resolvedAt: new Date(resolvedAt) }),
      }),
    ]);
    expect((await notifications(onNode!.id)).map((n) => n.transition)).toEqual([
      'fired',
      'resolved',
    ]);
    const recent = await states.listGroupAlerts(key, t0 + 4 * minute);
    expect(recent.find((row) => row.id === onNode!.id)).toMatchObject({
      status: 'resolved',
      resolvedAtMs: resolvedAt,
    });
    // 20 minutes on, a resolved alert is no longer read.
    expect(
      (await states.listGroupAlerts(key, resolvedAt + 21 * minute)).map((r) => r.ruleKey),
    ).toEqual(['Down{}']);

    // The same labels fire again: a new alert.
    expect(
      await save(t0 + 5 * minute, { fire: [firing('Hot{}', { instance: 'node-1:9100' })] }),
    ).toBe(true);
    const again = (await states.listGroupAlerts(key, t0 + 5 * minute)).filter(
      (row) => row.ruleKey === 'Hot{}' && row.status === 'active',
    );
    expect(again).toHaveLength(1);
    expect(again[0]!.id).not.toBe(onNode!.id);
  });

  it('resolves the alerts of rules a change removes, and of a deleted group', async () => {
    const hotOnly = 'name: node\nrules:\n- alert: Hot\n  expr: temp > 50\n';
    await groups.putGroup(
      orgId,
      'ns',
      {
        name: 'node',
        definition: hotOnly,
        ruleCount: 1,
        ruleKeys: ['Hot{}'],
        alertingRuleKeys: ['Hot{}'],
      },
      10,
    );
    const active = await states.listGroupAlerts(key, t0 + 6 * minute);
    expect(active.filter((row) => row.status === 'active').map((row) => row.ruleKey)).toEqual([
      'Hot{}',
    ]);
    const [down] = await db.sql<{ status: string; id: string }[]>`
      select status, id from alerts where metric = 'Down'`;
    expect(down?.status).toBe('resolved');
    expect((await notifications(down!.id)).map((n) => n.transition)).toEqual(['fired', 'resolved']);

    await groups.deleteGroup(orgId, 'ns', 'node');
    const [left] = await db.sql<{ count: number }[]>`
      select count(*)::int as count from alerts where status = 'active'`;
    expect(left?.count).toBe(0);
    const [rules] = await db.sql<{ count: number }[]>`
      select count(*)::int as count from prometheus_rules`;
    expect(rules?.count).toBe(0);
  });
});
