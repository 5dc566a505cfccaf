// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import type { RuleGroupEvaluationRecord, RuleGroupStateStore, RuleGroupStore } from '../index.js';
import { createOrgStore, createRuleGroupStateStore, createRuleGroupStore } from '../index.js';
import type { TestServer } from '../testing/clean-database.js';
import { migratedDatabase } from '../testing/clean-database.js';

const definition = 'name: node\nrules:\n- record: r\n  expr: up\n';

function evaluation(lastEvaluationMs: number, note: string): RuleGroupEvaluationRecord {
  return {
    state: { rules: { [note]: { alerts: [], writtenSeries: [{ __name__: 'r' }] } } },
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
    await groups.putGroup(orgId, 'ns', { name: 'node', definition, ruleCount: 1 }, 100);
    expect(await states.listAllGroups()).toEqual([{ ...key, definition }]);
    expect(await states.loadGroup(key)).toEqual({ definition, evaluation: undefined });

    // Times past 2^31 and 2^32, as epoch milliseconds are.
    const t0 = 1_764_000_000_000;
    expect(await states.saveEvaluation(key, undefined, evaluation(t0, 'first'))).toBe(true);
    // A second writer that also read "never evaluated" is refused.
    expect(await states.saveEvaluation(key, undefined, evaluation(t0, 'second'))).toBe(false);
    expect(await states.loadGroup(key)).toEqual({
      definition,
      evaluation: evaluation(t0, 'first'),
    });

    expect(await states.saveEvaluation(key, t0, evaluation(t0 + 60_000, 'next'))).toBe(true);
    // The previous owner, which read t0, writes late: refused, the newer state stays.
    expect(await states.saveEvaluation(key, t0, evaluation(t0 + 60_000, 'stale'))).toBe(false);
    expect((await states.loadGroup(key))?.evaluation).toEqual(evaluation(t0 + 60_000, 'next'));

    expect(await states.listOrgGroups(orgId)).toEqual([
      { namespace: 'ns', name: 'node', definition, evaluation: evaluation(t0 + 60_000, 'next') },
    ]);
    expect(await states.listOrgGroups('org_none')).toEqual([]);

    // Replacing the group's rules keeps its state (Prometheus carries it across a reload).
    const changed = `${definition}- record: s\n  expr: up\n`;
    await groups.putGroup(orgId, 'ns', { name: 'node', definition: changed, ruleCount: 2 }, 100);
    expect(await states.loadGroup(key)).toEqual({
      definition: changed,
      evaluation: evaluation(t0 + 60_000, 'next'),
    });

    // Deleting the group deletes its state; an evaluation finishing after that writes nothing.
    await groups.deleteGroup(orgId, 'ns', 'node');
    expect(await states.loadGroup(key)).toBeUndefined();
    expect(await states.saveEvaluation(key, t0 + 60_000, evaluation(t0 + 120_000, 'x'))).toBe(
      false,
    );
    expect(await states.saveEvaluation(key, undefined, evaluation(t0 + 120_000, 'x'))).toBe(false);
    const [left] = await db.sql<{ count: number }[]>`
      select count(*)::int as count from prometheus_rule_group_states`;
    expect(left?.count).toBe(0);
  });
});
