// @services postgres kafka
import { afterAll, describe, expect, it } from 'vitest';
import { createApiKeyStore, createOrgStore } from '@monitor/db';
import type { Cause, Scenario } from '@monitor/investigator/scenarios';
import { buildScenarios, scenarioHit } from '@monitor/investigator/scenarios';
import { createApiCall, waitFor } from '@monitor/testkit/builders';
import { postIngest } from './testing/ingest-client.js';
import type { MonitorStack } from './testing/monitor-stack.js';
import { createMonitorStack, evaluatorRulesLoaded } from './testing/monitor-stack.js';
import type { RoleProcess } from './testing/role-process.js';

const minuteMs = 60_000;
const payloadsPerRequest = 200;

type AlertItem = { id: string; host: string; fired_at: string; investigation_id: string | null };
type InvestigationDetail = {
  id: string;
  status: string;
  findings: { title: string; evidence: { cause?: Cause | null; ranked?: Cause[] } }[];
  analysis: { root_cause: string; confidence: number; method: string } | null;
  timeline: { at: string }[];
  recommendations: unknown[];
};

const stacks: MonitorStack[] = [];
afterAll(async () => {
  await Promise.all(stacks.map((stack) => stack.stop()));
});

async function get<T>(api: RoleProcess, key: string, path: string): Promise<T> {
  const reply = await createApiCall({ baseUrl: api.baseUrl, key })<T>(path);
  expect(reply.status, path).toBe(200);
  return reply.body;
}

/** Every scenario in its own organization, so its rule sees only its own hosts. */
async function createScenarioRule(
  stack: MonitorStack,
  api: RoleProcess,
  scenario: Scenario,
): Promise<{ key: string; ruleId: string }> {
  const org = await createOrgStore(stack.db).createOrganization(scenario.name);
  const { key } = await createApiKeyStore(stack.db).createKey({
    orgId: org.id,
    name: 'scenario',
    scopes: ['ingest', 'read', 'write'],
  });
  const created = await createApiCall({ baseUrl: api.baseUrl, key })<{ id: string }>(
    '/api/v1/alerts/rules',
    { method: 'POST', body: scenario.rule },
  );
  expect(created.status).toBe(201);
  return { key, ruleId: created.body.id };
}

describe('investigations of incident scenarios through the real ingest path', () => {
  it('names the right cause, and says inconclusive when nothing explains the spike', async () => {
    const stack = await createMonitorStack('scenarios');
    stacks.push(stack);
    const [gateway, api, evaluator] = await Promise.all([
      stack.start('gateway'),
      stack.start('api'),
      stack.start('evaluator'),
      stack.start('writer'),
      stack.start('investigator'),
    ]);
    const endMs = Math.floor(Date.now() / minuteMs) * minuteMs - 2 * minuteMs;
    const scenarios = buildScenarios({ endMs });
    expect(scenarios.length).toBeGreaterThanOrEqual(10);

    // The rules first: a rule applies to the samples the evaluator processes after it arrived.
    const setups = [];
    for (const scenario of scenarios) setups.push(await createScenarioRule(stack, api, scenario));
    await evaluatorRulesLoaded(evaluator.baseUrl, scenarios.length);

    // HTTP → gateway → Kafka → writer and evaluator → alert → investigator, as agents would.
    for (const [i, scenario] of scenarios.entries()) {
      const { key } = setups[i]!;
      for (let from = 0; from < scenario.payloads.length; from += payloadsPerRequest) {
        const batch = scenario.payloads.slice(from, from + payloadsPerRequest);
        const result = await postIngest(gateway.baseUrl, batch, { key });
        expect(result.status, scenario.name).toBe(200);
      }
    }

    const rows: string[] = [];
    let right = 0;
    for (const [i, scenario] of scenarios.entries()) {
      const { key, ruleId } = setups[i]!;
      // The incident is the rule's last firing on the scenario's host.
      const investigation = await waitFor(
        async () => {
          const { alerts } = await get<{ alerts: AlertItem[] }>(
            api,
            key,
            `/api/v1/alerts?status=all&rule_id=${ruleId}&limit=100`,
          );
          const last = alerts
            .filter((alert) => alert.host === scenario.host)
            .sort((a, b) => Date.parse(b.fired_at) - Date.parse(a.fired_at))[0];
          if (last?.investigation_id == null) return undefined;
          const detail = await get<InvestigationDetail>(
            api,
            key,
            `/api/v1/investigations/${last.investigation_id}`,
          );
          return detail.status === 'completed' || detail.status === 'failed' ? detail : undefined;
        },
        90_000,
        `the investigation of ${scenario.name}`,
      );
      expect(investigation.status, scenario.name).toBe('completed');
      const cause = investigation.findings[0]?.evidence.cause ?? null;
      const ranked = investigation.findings[0]?.evidence.ranked ?? [];
      const named = cause === null ? 'inconclusive' : `${cause.kind} ${cause.subject}`;
      const { expected } = scenario;
      const wanted =
        expected.kind === 'inconclusive' ? 'inconclusive' : `${expected.kind} ${expected.subject}`;
      // A hit as docs/investigations.md defines it: the named cause, every cause of a
      // several-causes scenario among the first k ranked, or nothing named where expected.
      if (scenarioHit(scenario, { cause, ranked })) right += 1;
      if (expected.kind === 'inconclusive') {
        expect(investigation.analysis?.root_cause, scenario.name).toBe('inconclusive');
      }
      const times = investigation.timeline.map((event) => Date.parse(event.at));
      expect(times).toEqual([...times].sort((a, b) => a - b));
      rows.push(
        `${scenario.name.padEnd(24)} ${wanted.padEnd(36)} ${named.padEnd(36)} ` +
          `${investigation.analysis?.confidence.toFixed(2) ?? '-'}`,
      );
    }
    console.log(`scenario / expected / named / confidence\n${rows.join('\n')}`);
    // The bar of issue 6: at least 9 of 10 hits.
    expect(right / scenarios.length).toBeGreaterThanOrEqual(0.9);
  });
});
