// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertQueries } from './alert-queries.js';
import { createAlertQueries } from './alert-queries.js';
import { fireAlert, resolveAlerts } from './alert-transitions.js';
import type { Database } from '../core/database.js';
import { createOrgStore } from '../orgs/org-store.js';
import { buildAlertRuleDraft } from '@monitor/testkit/builders';
import { createRuleStore } from '../rules/rule-store.js';
import { migratedDatabase } from '../testing/clean-database.js';
import type { Alert } from '@monitor/schemas';

describe('alert queries on postgres', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  let queries: AlertQueries;
  let orgId: string;
  let otherOrgId: string;
  /** Fired in this order: ids (and so "newest first") follow it. */
  const fired: Alert[] = [];
  let criticalRuleId: string;
  let otherOrgAlert: Alert;

  async function fire(ruleOrgId: string, ruleId: string, host: string): Promise<Alert> {
    const result = await db.sql.begin((tx) =>
      fireAlert(tx, {
        orgId: ruleOrgId,
        ruleId,
        host,
        value: 95,
        startedAt: new Date('2026-11-22T10:00:00.000Z'),
        firedAt: new Date('2026-11-22T10:01:00.000Z'),
      }),
    );
    if (result.outcome !== 'fired') throw new Error(`fire: ${result.outcome}`);
    return result.alert;
  }

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'alert_queries'));
    queries = createAlertQueries(db);
    const orgs = createOrgStore(db);
    orgId = (await orgs.createOrganization('a')).id;
    otherOrgId = (await orgs.createOrganization('b')).id;
    const rules = createRuleStore(db);
    criticalRuleId = (await rules.createRule(orgId, buildAlertRuleDraft({ name: 'cpu critical' })))
      .id;
    const warningRuleId = (
      await rules.createRule(
        orgId,
        buildAlertRuleDraft({ name: 'cpu warning', severity: 'warning' }),
      )
    ).id;
    const otherRuleId = (await rules.createRule(otherOrgId, buildAlertRuleDraft({ name: 'other' })))
      .id;
    fired.push(await fire(orgId, criticalRuleId, 'web-1'));
    fired.push(await fire(orgId, warningRuleId, 'web-1'));
    fired.push(await fire(orgId, criticalRuleId, 'web-2'));
    await db.sql.begin((tx) =>
      resolveAlerts(
        tx,
        { orgId, ruleId: criticalRuleId, host: 'web-1' },
        new Date('2026-11-22T10:02:00.000Z'),
      ),
    );
    fired.push(await fire(orgId, criticalRuleId, 'web-1')); // fires again once resolved
    otherOrgAlert = await fire(otherOrgId, otherRuleId, 'web-1');
  });

  afterAll(async () => {
    await dispose();
  });

  const ids = (alerts: readonly Alert[]) => alerts.map((alert) => alert.id);

  it('lists the active or the resolved alerts, or all, newest first', async () => {
    const active = await queries.listAlerts({ orgId, status: 'active', limit: 50, offset: 0 });
    expect(ids(active.alerts)).toEqual([fired[3]!.id, fired[2]!.id, fired[1]!.id]);
    expect(active.total).toBe(3);
    const resolved = await queries.listAlerts({ orgId, status: 'resolved', limit: 50, offset: 0 });
    expect(resolved.alerts.map((alert) => [alert.id, alert.status, alert.resolvedAt])).toEqual([
      [fired[0]!.id, 'resolved', new Date('2026-11-22T10:02:00.000Z')],
    ]);
    expect(resolved.total).toBe(1);
    const all = await queries.listAlerts({ orgId, status: 'all', limit: 50, offset: 0 });
    expect(ids(all.alerts)).toEqual(ids([...fired].reverse()));
    expect(all.total).toBe(4);
  });

  it('filters by severity, service and rule, combining them', async () => {
    const warnings = await queries.listAlerts({
      orgId,
      status: 'all',
      severity: 'warning',
      limit: 50,
      offset: 0,
    });
    expect(ids(warnings.alerts)).toEqual([fired[1]!.id]);
    const web2 = await queries.listAlerts({
      orgId,
      status: 'all',
      serviceId: fired[2]!.serviceId,
      limit: 50,
      offset: 0,
    });
    expect(ids(web2.alerts)).toEqual([fired[2]!.id]);
    const byRule = await queries.listAlerts({
      orgId,
      status: 'all',
      ruleId: criticalRuleId,
      serviceId: fired[0]!.serviceId,
      limit: 50,
      offset: 0,
    });
    expect(ids(byRule.alerts)).toEqual([fired[3]!.id, fired[0]!.id]);
    const none = await queries.listAlerts({
      orgId,
      status: 'all',
      severity: 'info',
      limit: 50,
      offset: 0,
    });
    expect(none).toEqual({ alerts: [], total: 0 });
  });

  it('pages with limit and offset and reports the total past the end', async () => {
    const page = await queries.listAlerts({ orgId, status: 'all', limit: 2, offset: 1 });
    expect(ids(page.alerts)).toEqual([fired[2]!.id, fired[1]!.id]);
    expect(page.total).toBe(4);
    expect(await queries.listAlerts({ orgId, status: 'all', limit: 2, offset: 10 })).toEqual({
      alerts: [],
      total: 4,
    });
  });

  it('keeps organizations apart', async () => {
    const other = await queries.listAlerts({
      orgId: otherOrgId,
      status: 'all',
      limit: 50,
      offset: 0,
    });
    expect(ids(other.alerts)).toEqual([otherOrgAlert.id]);
    expect(await queries.getAlert(orgId, otherOrgAlert.id)).toBeUndefined();
    expect(await queries.getAlert(otherOrgId, fired[0]!.id)).toBeUndefined();
  });

  it('reads one alert with every field', async () => {
    const alert = await queries.getAlert(orgId, fired[2]!.id);
    expect(alert).toEqual({
      ...fired[2],
      ruleName: 'cpu critical',
      host: 'web-2',
      status: 'active',
      value: 95,
      threshold: 90,
      condition: 'greater_than',
      metric: 'cpu_percent',
      severity: 'critical',
      startedAt: new Date('2026-11-22T10:00:00.000Z'),
      firedAt: new Date('2026-11-22T10:01:00.000Z'),
      resolvedAt: null,
      investigationId: expect.stringMatching(/^inv_/),
    });
  });
});
