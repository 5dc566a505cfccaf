// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FireAlertResult } from '../alerts/alert-transitions.js';
import { fireAlert } from '../alerts/alert-transitions.js';
import type { Database } from '../core/database.js';
import type { InvestigationQueries } from './investigation-queries.js';
import { createInvestigationQueries } from './investigation-queries.js';
import { createOrgStore } from '../orgs/org-store.js';
import type { AlertRuleDraft, AlertSeverity } from '@monitor/schemas';
import { buildAlertRuleDraft } from '@monitor/testkit/builders';
import { createRuleStore } from '../rules/rule-store.js';
import type { Alert } from '@monitor/schemas';
import { migratedDatabase } from '../testing/clean-database.js';

const rule = (severity: AlertSeverity): AlertRuleDraft =>
  buildAlertRuleDraft({ name: `cpu ${severity}`, severity, durationMinutes: 5 });

const startedAt = new Date('2026-11-22T10:00:00.000Z');
const firedAt = new Date('2026-11-22T10:05:00.000Z');

describe('investigation queries on postgres', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  let queries: InvestigationQueries;
  let orgId: string;
  let otherOrgId: string;
  let infoRuleId: string;
  let criticalRuleId: string;

  async function fire(ruleId: string, host: string, ruleOrgId = orgId): Promise<Alert> {
    const result: FireAlertResult = await db.sql.begin((tx) =>
      fireAlert(tx, { orgId: ruleOrgId, ruleId, host, value: 95, startedAt, firedAt }),
    );
    if (result.outcome !== 'fired') throw new Error(`fire: ${result.outcome}`);
    return result.alert;
  }

  const investigationIdOfAlert = async (alertId: string) => {
    const [row] = await db.sql<{ investigation_id: string | null }[]>`
      select investigation_id from alerts where id = ${alertId}`;
    return row?.investigation_id;
  };

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'investigation_queries'));
    queries = createInvestigationQueries(db);
    const orgs = createOrgStore(db);
    orgId = (await orgs.createOrganization('a')).id;
    otherOrgId = (await orgs.createOrganization('b')).id;
    const rules = createRuleStore(db);
    infoRuleId = (await rules.createRule(orgId, rule('info'))).id;
    criticalRuleId = (await rules.createRule(orgId, rule('critical'))).id;
  });

  afterAll(async () => {
    await dispose();
  });

  describe('openForAlert', () => {
    it('queues one investigation over the alert’s window and links the alert to it', async () => {
      const alert = await fire(infoRuleId, 'web-1'); // info alerts open none by themselves
      expect(alert.investigationId).toBeNull();
      const opened = await queries.openForAlert(orgId, alert.id);
      expect(opened).toEqual({
        id: expect.stringMatching(/^inv_[0-9A-Z]{26}$/),
        alertId: alert.id,
        serviceId: alert.serviceId,
        title: 'cpu info on web-1',
        status: 'queued',
        findings: [],
        analysis: null,
        timeline: [],
        recommendations: [],
        createdAt: expect.any(Date),
        updatedAt: expect.any(Date),
        completedAt: null,
      });
      const [window] = await db.sql<{ window_from: Date; window_to: Date }[]>`
        select window_from, window_to from investigations where id = ${opened!.id}`;
      expect(window).toEqual({ window_from: startedAt, window_to: firedAt });
      expect(await investigationIdOfAlert(alert.id)).toBe(opened!.id);

      expect(await queries.openForAlert(orgId, alert.id)).toEqual(opened);
    });

    it('opens exactly one under concurrent calls', async () => {
      const alert = await fire(infoRuleId, 'web-2');
      const results = await Promise.all(
        Array.from({ length: 5 }, () => queries.openForAlert(orgId, alert.id)),
      );
      expect(new Set(results.map((result) => result?.id)).size).toBe(1);
      const [count] = await db.sql<{ n: string }[]>`
        select count(*) as n from investigations where alert_id = ${alert.id}`;
      expect(Number(count!.n)).toBe(1);
      expect(await investigationIdOfAlert(alert.id)).toBe(results[0]!.id);
    });

    it('answers the investigation a firing critical alert opened already', async () => {
      const alert = await fire(criticalRuleId, 'web-3');
      expect(alert.investigationId).toMatch(/^inv_/);
      const opened = await queries.openForAlert(orgId, alert.id);
      expect(opened).toMatchObject({ id: alert.investigationId, alertId: alert.id });
    });

    it('finds no alert of another organization or an unknown one', async () => {
      const alert = await fire(infoRuleId, 'web-4');
      expect(await queries.openForAlert(otherOrgId, alert.id)).toBeUndefined();
      expect(await queries.openForAlert(orgId, 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0Z')).toBeUndefined();
      expect(await investigationIdOfAlert(alert.id)).toBeNull();
    });
  });

  describe('openForService', () => {
    it('queues an investigation of the service over the range', async () => {
      const { serviceId } = await fire(infoRuleId, 'db-1');
      const from = new Date('2026-11-21T10:00:00.000Z');
      const to = new Date('2026-11-21T12:00:00.000Z');
      const opened = await queries.openForService({ orgId, serviceId, from, to });
      expect(opened).toMatchObject({
        alertId: null,
        serviceId,
        title: 'db-1 from 2026-11-21T10:00:00.000Z to 2026-11-21T12:00:00.000Z',
        status: 'queued',
        analysis: null,
      });
      const [window] = await db.sql<{ window_from: Date; window_to: Date }[]>`
        select window_from, window_to from investigations where id = ${opened!.id}`;
      expect(window).toEqual({ window_from: from, window_to: to });
      expect(
        await queries.openForService({ orgId: otherOrgId, serviceId, from, to }),
      ).toBeUndefined();
    });
  });

  describe('listInvestigations and getInvestigation', () => {
    it('lists newest first with filters, pages and keeps organizations apart', async () => {
      const { id: listOrg } = await createOrgStore(db).createOrganization('lists');
      const ruleId = (await createRuleStore(db).createRule(listOrg, rule('warning'))).id;
      const first = await fire(ruleId, 'app-1', listOrg);
      const second = await fire(ruleId, 'app-2', listOrg);
      const manual = await queries.openForService({
        orgId: listOrg,
        serviceId: first.serviceId,
        from: startedAt,
        to: firedAt,
      });
      await db.sql`update investigations set status = 'running' where id = ${second.investigationId}`;

      const all = await queries.listInvestigations({ orgId: listOrg, limit: 50, offset: 0 });
      expect(all.investigations.map((row) => row.id)).toEqual([
        manual!.id,
        second.investigationId,
        first.investigationId,
      ]);
      expect(all.total).toBe(3);
      const page = await queries.listInvestigations({ orgId: listOrg, limit: 1, offset: 1 });
      expect(page).toEqual({ investigations: [all.investigations[1]], total: 3 });
      expect(await queries.listInvestigations({ orgId: listOrg, limit: 1, offset: 5 })).toEqual({
        investigations: [],
        total: 3,
      });
      const ids = async (filters: { status?: string; alertId?: string; serviceId?: string }) =>
        (
          await queries.listInvestigations({ orgId: listOrg, limit: 50, offset: 0, ...filters })
        ).investigations.map((row) => row.id);
      expect(await ids({ status: 'running' })).toEqual([second.investigationId]);
      expect(await ids({ alertId: first.id })).toEqual([first.investigationId]);
      expect(await ids({ serviceId: first.serviceId })).toEqual([
        manual!.id,
        first.investigationId,
      ]);
      expect(await ids({ serviceId: first.serviceId, status: 'running' })).toEqual([]);
      expect(
        (await queries.listInvestigations({ orgId: otherOrgId, limit: 50, offset: 0 })).total,
      ).toBe(0);
      expect(await queries.getInvestigation(otherOrgId, manual!.id)).toBeUndefined();
    });

    it('reads the stored findings, analysis, timeline and recommendations', async () => {
      const alert = await fire(criticalRuleId, 'web-9');
      const report = {
        findings: [{ title: 'A hog', detail: 'java grew', evidence: { cpu_percent: [10, 90] } }],
        analysis: { summary: 's', root_cause: 'java', confidence: 0.8, method: 'statistical' },
        timeline: [
          { at: '2026-11-22T10:00:00.000Z', type: 'alert_fired', description: 'd', data: {} },
        ],
        recommendations: [{ title: 'Restart java', detail: 'now', priority: 'high' }],
      };
      const completedAt = new Date('2026-11-22T10:06:00.000Z');
      await db.sql`
        update investigations set status = 'completed', completed_at = ${completedAt},
          findings = ${JSON.stringify(report.findings)}::text::jsonb,
          analysis = ${JSON.stringify(report.analysis)}::text::jsonb,
          timeline = ${JSON.stringify(report.timeline)}::text::jsonb,
          recommendations = ${JSON.stringify(report.recommendations)}::text::jsonb
        where id = ${alert.investigationId}
      `;
      expect(await queries.getInvestigation(orgId, alert.investigationId!)).toMatchObject({
        id: alert.investigationId,
        status: 'completed',
        completedAt,
        ...report,
      });
      const listed = await queries.listInvestigations({
        orgId,
        alertId: alert.id,
        limit: 50,
        offset: 0,
      });
      expect(listed.investigations[0]).toMatchObject({ findings: report.findings });
      expect(listed.investigations[0]).not.toHaveProperty('analysis');
    });
  });
});
