// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import type { RuleGroupEvaluationRecord, RuleGroupStateStore, RuleGroupStore } from '../index.js';
import { createOrgStore, createRuleGroupStateStore, createRuleGroupStore } from '../index.js';
import type { TestServer } from '../testing/clean-database.js';
import { migratedDatabase } from '../testing/clean-database.js';

const definition = 'name: node\nrules:\n- record: r\n  expr: up\n';
const keys = { ruleKeys: ['r{}'], alertingRuleKeys: [] };

function evaluation(lastEvaluationMs: number, note: string): RuleGroupEvaluationRecord {
  return {
    state: { rules: { 'r{}': { alerts: [], writtenSeries: [{ __name__: 'r', note }] } } },
    lastEvaluationMs,
    durationMs: 1.5,
    health: [{ health: 'ok', lastError: null }],
  };
}

describe.each<TestServer>(['postgres', 'timescale'])('rule group state store on %s', (server) => {
  let db: Database;
  let dispose: () => Promise<void>;
  let groups: RuleGroupStore;
  let states: RuleGroupStateStore;
  let orgId: string;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase(server, 'rule_group_states'));
    groups = createRuleGroupStore(db);
    states = createRuleGroupStateStore(db);
    orgId = (await createOrgStore(db).createOrganization('a')).id;
  });

  afterAll(async () => {
    await dispose();
  });

  it('keeps the last evaluation of a group, written only by the owner that read it last', async () => {
    const key = { orgId, namespace: 'ns', name: 'node' };
    await groups.putGroup(orgId, 'ns', { name: 'node', definition, ruleCount: 1, ...keys }, 100);
    expect(await states.listAllGroups()).toEqual([{ ...key, definition }]);
    const loaded = await states.loadGroup(key);
    expect(loaded).toEqual({ definition, revision: expect.any(String), evaluation: undefined });
    const revision = loaded!.revision;
    const at = (lastEvaluationMs: number | undefined) => ({ lastEvaluationMs, revision });

    // Times past 2^31 and 2^32, as epoch milliseconds are.
    const t0 = 1_764_000_000_000;
    expect(await states.saveEvaluation(key, at(undefined), evaluation(t0, 'first'))).toBe(true);
    // A second writer that also read "never evaluated" is refused.
    expect(await states.saveEvaluation(key, at(undefined), evaluation(t0, 'second'))).toBe(false);
    expect(await states.loadGroup(key)).toEqual({
      definition,
      revision,
      evaluation: evaluation(t0, 'first'),
    });

    expect(await states.saveEvaluation(key, at(t0), evaluation(t0 + 60_000, 'next'))).toBe(true);
    // The previous owner, which read t0, writes late: refused, the newer state stays.
    expect(await states.saveEvaluation(key, at(t0), evaluation(t0 + 60_000, 'stale'))).toBe(false);
    expect((await states.loadGroup(key))?.evaluation).toEqual(evaluation(t0 + 60_000, 'next'));

    expect(await states.listOrgGroups(orgId)).toEqual([
      { namespace: 'ns', name: 'node', definition, evaluation: evaluation(t0 + 60_000, 'next') },
    ]);
    expect(await states.listOrgGroups('org_none')).toEqual([]);

    // The same YAML posted again changes nothing, its revision included.
    await groups.putGroup(orgId, 'ns', { name: 'node', definition, ruleCount: 1, ...keys }, 100);
    expect((await states.loadGroup(key))?.revision).toBe(revision);

    // Replacing the group's rules keeps the state of the rules it keeps (Prometheus carries it
    // across a reload), under a new revision: an evaluation of the old rules saves nothing.
    const changed = `${definition}- record: s\n  expr: up\n`;
    await groups.putGroup(
      orgId,
      'ns',
      {
        name: 'node',
        definition: changed,
        ruleCount: 2,
        ruleKeys: ['r{}', 's{}'],
        alertingRuleKeys: [],
      },
      100,
    );
    const reloaded = await states.loadGroup(key);
    expect(reloaded).toEqual({
      definition: changed,
      revision: expect.any(String),
      evaluation: evaluation(t0 + 60_000, 'next'),
    });
    expect(reloaded?.revision).not.toBe(revision);
    expect(await states.saveEvaluation(key, at(t0 + 60_000), evaluation(t0 + 120_000, 'old'))).toBe(
      false,
    );
    // Without the rule, its state goes.
    const other = 'name: node\nrules:\n- record: s\n  expr: up\n';
    await groups.putGroup(
      orgId,
      'ns',
      { name: 'node', definition: other, ruleCount: 1, ruleKeys: ['s{}'], alertingRuleKeys: [] },
      100,
    );
    expect((await states.loadGroup(key))?.evaluation?.state).toEqual({ rules: {} });
    const latest = (await states.loadGroup(key))!.revision;

    // Deleting the group deletes its state; an evaluation finishing after that writes nothing.
    await groups.deleteGroup(orgId, 'ns', 'node');
    expect(await states.loadGroup(key)).toBeUndefined();
    expect(
      await states.saveEvaluation(
        key,
        { lastEvaluationMs: t0 + 60_000, revision: latest },
        evaluation(t0 + 120_000, 'x'),
      ),
    ).toBe(false);
    expect(
      await states.saveEvaluation(
        key,
        { lastEvaluationMs: undefined, revision: latest },
        evaluation(t0 + 120_000, 'x'),
      ),
    ).toBe(false);
    const [left] = await db.sql<{ count: number }[]>`
      select count(*)::int as count from prometheus_rule_group_states`;
    expect(left?.count).toBe(0);
  });
});
