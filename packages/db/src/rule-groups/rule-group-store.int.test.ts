// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import type { RuleGroupStore, StoredRuleGroup } from '../index.js';
import { createOrgStore, createRuleGroupStore } from '../index.js';
import type { TestServer } from '../testing/clean-database.js';
import { migratedDatabase } from '../testing/clean-database.js';

const node = {
  name: 'node',
  definition: 'name: node\nrules:\n- record: r\n  expr: up\n',
  ruleCount: 1,
  ruleKeys: ['r{}'],
  alertingRuleKeys: [],
};
const api = {
  name: 'api',
  definition: 'name: api\nrules: []\n',
  ruleCount: 2,
  ruleKeys: [],
  alertingRuleKeys: [],
};

describe.each<TestServer>(['postgres', 'timescale'])('rule group store on %s', (server) => {
  let db: Database;
  let dispose: () => Promise<void>;
  let store: RuleGroupStore;
  let orgId: string;
  let otherOrgId: string;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase(server, 'rule_groups'));
    store = createRuleGroupStore(db);
    const orgs = createOrgStore(db);
    orgId = (await orgs.createOrganization('a')).id;
    otherOrgId = (await orgs.createOrganization('b')).id;
  });

  afterAll(async () => {
    await dispose();
  });

  it('stores, replaces, lists and deletes groups per namespace, within one organization', async () => {
    expect(await store.putGroup(orgId, 'team-a', node, 10)).toBe(true);
    expect(await store.putGroup(orgId, 'team-a', api, 10)).toBe(true);
    expect(await store.putGroup(orgId, 'team-b', node, 10)).toBe(true);
    const replaced = { ...node, definition: 'name: node\nrules: []\n' };
    expect(await store.putGroup(orgId, 'team-a', replaced, 10)).toBe(true);

    expect(await store.listGroups(orgId)).toEqual([
      { namespace: 'team-a', name: 'api', definition: api.definition },
      { namespace: 'team-a', name: 'node', definition: replaced.definition },
      { namespace: 'team-b', name: 'node', definition: node.definition },
    ]);
    expect((await store.listGroups(orgId, 'team-b')).map((g) => g.name)).toEqual(['node']);
    const stored: StoredRuleGroup = {
      namespace: 'team-a',
      name: 'node',
      definition: replaced.definition,
    };
    expect(await store.getGroup(orgId, 'team-a', 'node')).toEqual(stored);
    // Another organization sees none of it.
    expect(await store.listGroups(otherOrgId)).toEqual([]);
    expect(await store.getGroup(otherOrgId, 'team-a', 'node')).toBeUndefined();
    expect(await store.deleteGroup(otherOrgId, 'team-a', 'node')).toBe(false);

    expect(await store.deleteGroup(orgId, 'team-a', 'node')).toBe(true);
    expect(await store.deleteGroup(orgId, 'team-a', 'node')).toBe(false);
    expect(await store.deleteNamespace(orgId, 'team-a')).toBe(1);
    expect(await store.listGroups(orgId)).toEqual([
      { namespace: 'team-b', name: 'node', definition: node.definition },
    ]);
    await store.deleteNamespace(orgId, 'team-b');
  });

  it('refuses a group that would take the organization past its rule limit', async () => {
    expect(await store.putGroup(orgId, 'ns', api, 3)).toBe(true);
    expect(await store.putGroup(orgId, 'ns', { ...node, name: 'other', ruleCount: 2 }, 3)).toBe(
      false,
    );
    // Replacing a group counts its new size, not both.
    expect(await store.putGroup(orgId, 'ns', { ...api, ruleCount: 3 }, 3)).toBe(true);
    expect((await store.listGroups(orgId)).map((g) => g.name)).toEqual(['api']);
    // Writers race for the last rules: the org's lock lets exactly one of them in.
    await store.deleteNamespace(orgId, 'ns');
    const results = await Promise.all(
      ['a', 'b', 'c', 'd'].map((name) =>
        store.putGroup(orgId, 'race', { ...node, name, ruleCount: 2 }, 5),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(2);
  });
});
