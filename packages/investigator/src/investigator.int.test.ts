// @services postgres
import { randomBytes } from 'node:crypto';
import type { Database, HostSample } from '@monitor/db';
import {
  createDatabase,
  createInvestigationStore,
  createSampleStore,
  fireAlert,
  migrate,
  resolveAlerts,
} from '@monitor/db';
import { createLogger } from '@monitor/platform';
import type { IngestPayload, InvestigationFinding, InvestigationReport } from '@monitor/schemas';
import type { TestDatabase } from '@monitor/testkit';
import { createTestDatabase } from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueOrgId } from '@monitor/testkit/builders';
import { analyzeIncident } from './analyze-incident.js';
import type { Investigator } from './investigator.js';
import { createInvestigator } from './investigator.js';
import { buildScenarios } from './scenarios/incident-scenarios.js';
import type { Cause, Scenario } from './scenarios/scenario.js';
import { scenarioHit } from './scenarios/scenario-hit.js';
import { scenarioIncident } from './scenarios/scenario-incident.js';
import { simulateRule } from './scenarios/simulate-rule.js';

const minuteMs = 60_000;
const endMs = Math.floor(Date.now() / minuteMs) * minuteMs - 2 * minuteMs;
const scenarios = buildScenarios({ endMs });

type StoredInvestigation = {
  id: string;
  status: string;
  findings: InvestigationFinding[];
  analysis: InvestigationReport['analysis'] | null;
  timeline: InvestigationReport['timeline'];
  recommendations: InvestigationReport['recommendations'];
};

function toHostSample(orgId: string, payload: IngestPayload): HostSample {
  return {
    orgId,
    host: payload.host,
    timeMs: Date.parse(payload.timestamp ?? ''),
    metrics: payload.metrics,
    tags: payload.tags ?? {},
    containers: payload.docker_containers ?? [],
    processes: payload.processes ?? [],
  };
}

/** Stores the scenario's payloads and fires its rule as the evaluator would, in sample order. */
async function storeScenario(db: Database, orgId: string, scenario: Scenario): Promise<string> {
  const ruleId = `rul_${randomBytes(6).toString('hex')}`;
  await db.sql`insert into organizations (id, name) values (${orgId}, ${scenario.name})`;
  await db.sql`
    insert into alert_rules (id, org_id, name, metric, condition, threshold, duration_minutes,
      severity)
    values (${ruleId}, ${orgId}, ${scenario.rule.name}, ${scenario.rule.metric},
      ${scenario.rule.condition}, ${scenario.rule.threshold}, ${scenario.rule.duration_minutes},
      ${scenario.rule.severity})
  `;
  const samples = scenario.payloads.map((p) => toHostSample(orgId, p));
  const sampleStore = createSampleStore(db);
  for (let i = 0; i < samples.length; i += 1000) {
    await sampleStore.writeBatch({ samples: samples.slice(i, i + 1000) });
  }
  const hosts = [...new Set(scenario.payloads.map((p) => p.host))];
  for (const host of hosts) {
    const points = scenario.payloads
      .filter((p) => p.host === host)
      .map((p) => ({
        timeMs: Date.parse(p.timestamp ?? ''),
        value: p.metrics[scenario.rule.metric] ?? 0,
      }));
    for (const firing of simulateRule(scenario.rule, points)) {
      await db.sql.begin(async (tx) => {
        await fireAlert(tx, {
          orgId,
          ruleId,
          host,
          value: firing.value,
          startedAt: new Date(firing.startedAtMs),
          firedAt: new Date(firing.firedAtMs),
        });
        if (firing.resolvedAtMs !== null) {
          await resolveAlerts(tx, { orgId, ruleId, host }, new Date(firing.resolvedAtMs));
        }
      });
    }
  }
  return ruleId;
}

describe('the investigator on PostgreSQL', () => {
  let testDb: TestDatabase;
  let db: Database;
  let investigator: Investigator;
  const orgs = new Map<string, string>();

  beforeAll(async () => {
    testDb = await createTestDatabase(serviceUrl('postgres'), 'investigator');
    db = createDatabase({ url: testDb.url, maxConnections: 4 });
    await migrate(db);
    for (const scenario of scenarios) {
      const orgId = uniqueOrgId();
      orgs.set(scenario.name, orgId);
      await storeScenario(db, orgId, scenario);
    }
    investigator = createInvestigator({
      store: createInvestigationStore(db),
      clock: { now: () => new Date() },
      logger: createLogger({ level: 'silent' }),
      metrics: { investigationFinished: () => undefined, narrated: () => undefined },
    });
  });

  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  /** The investigation of the rule's last alert on the scenario's host. */
  async function lastInvestigation(scenario: Scenario): Promise<StoredInvestigation | undefined> {
    const [row] = await db.sql<StoredInvestigation[]>`
      select i.id, i.status, i.findings, i.analysis, i.timeline, i.recommendations
      from alerts a join investigations i on i.id = a.investigation_id
      where a.org_id = ${orgs.get(scenario.name) ?? ''} and a.host = ${scenario.host}
      order by a.fired_at desc
      limit 1
    `;
    return row;
  }

  it('completes every queued investigation and names each scenario’s cause', async () => {
    let outcome = await investigator.runOnce();
    let runs = 0;
    while (outcome.status !== 'idle') {
      expect(outcome.status).toBe('completed');
      runs++;
      outcome = await investigator.runOnce();
    }
    const [{ total } = { total: 0 }] = await db.sql<{ total: number }[]>`
      select count(*)::int as total from investigations`;
    expect(runs).toBe(total);
    expect(runs).toBeGreaterThanOrEqual(scenarios.length);

    for (const scenario of scenarios) {
      const stored = await lastInvestigation(scenario);
      expect(stored?.status, scenario.name).toBe('completed');
      const evidence = stored?.findings[0]?.evidence ?? {};
      const cause = (evidence.cause ?? null) as Cause | null;
      const ranked = (evidence.ranked ?? []) as Cause[];
      expect(scenarioHit(scenario, { cause, ranked }), scenario.name).toBe(true);
      const { expected } = scenario;
      if (expected.kind === 'inconclusive') {
        expect(cause, scenario.name).toBeNull();
        expect(stored?.analysis?.root_cause).toBe('inconclusive');
      } else if ((expected.topK ?? 1) === 1) {
        expect(cause, scenario.name).toEqual({ kind: expected.kind, subject: expected.subject });
        expect(stored?.analysis?.root_cause).toContain(expected.subject);
      }
      if (scenario.traits?.includes('no_snapshot')) {
        expect(evidence, scenario.name).toMatchObject({ basis: 'none', confidence: 0 });
      }
      // The stored evidence matches what the payloads themselves say.
      const inMemory = analyzeIncident(scenarioIncident(scenario).input);
      expect(stored?.analysis?.confidence, scenario.name).toBe(inMemory.verdict.confidence);
      expect(stored?.analysis?.method).toBe('statistical');
      const times = stored?.timeline.map((e) => Date.parse(e.at)) ?? [];
      expect(times).toEqual([...times].sort((a, b) => a - b));
      expect(stored?.recommendations.length).toBeGreaterThan(0);
    }
  });

  it('investigates a service and time range on demand', async () => {
    const scenario = scenarios.find((s) => s.name === 'backup-job-memory') as Scenario;
    const orgId = orgs.get(scenario.name) ?? '';
    const [alert] = await db.sql<{ service_id: string; started_at: Date; fired_at: Date }[]>`
      select service_id, started_at, fired_at from alerts where org_id = ${orgId} and host = ${scenario.host}
    `;
    await db.sql`
      insert into investigations (id, org_id, service_id, title, window_from, window_to)
      values ('inv_on_demand', ${orgId}, ${alert?.service_id ?? ''}, 'on demand',
        ${alert?.started_at ?? null}, ${alert?.fired_at ?? null})
    `;
    expect(await investigator.runOnce()).toMatchObject({
      status: 'completed',
      investigationId: 'inv_on_demand',
      verdict: { kind: 'process', subject: 'pg_dump' },
    });
  });
});
