import type { Database, TransactionSql } from '../core/database.js';
import { expectRow } from '../core/expect-row.js';
import { resolveRemovedRuleAlerts } from './rule-group-alerts.js';

/** A Prometheus rule group as stored: its namespace, name and the YAML that was posted. */
export type StoredRuleGroup = { namespace: string; name: string; definition: string };

/** A group to store: its YAML and what the store must know of its rules. */
type RuleGroupToStore = {
  name: string;
  definition: string;
  ruleCount: number;
  /** The state key of every rule (`ruleStateKeys`), in order: state of other keys is dropped. */
  ruleKeys: readonly string[];
  /** The keys of its alerting rules: active alerts of other rules of the group resolve. */
  alertingRuleKeys: readonly string[];
};

export type RuleGroupStore = {
  /**
   * Creates or replaces the org's group `group.name` in `namespace`, unless the org would then
   * hold more than `maxRules` rules in all: false, and nothing changes. Serialized per org, so
   * that concurrent writers cannot both pass the limit. A changed group takes a new revision
   * (an evaluation of the old one in flight saves nothing), forgets the state of rules it no
   * longer has, and resolves the active alerts of alerting rules it no longer has.
   */
  putGroup(
    orgId: string,
    namespace: string,
    group: RuleGroupToStore,
    maxRules: number,
  ): Promise<boolean>;
  /** The org's groups, of one namespace when given, by namespace then name. */
  listGroups(orgId: string, namespace?: string): Promise<StoredRuleGroup[]>;
  /** One group of the org; undefined when there is none (or it is another org's). */
  getGroup(orgId: string, namespace: string, name: string): Promise<StoredRuleGroup | undefined>;
  /** Deletes one group, resolving its rules' active alerts; false when there was none. */
  deleteGroup(orgId: string, namespace: string, name: string): Promise<boolean>;
  /** Deletes every group of a namespace, resolving their alerts; how many there were. */
  deleteNamespace(orgId: string, namespace: string): Promise<number>;
};

/** Rule groups per organization in `prometheus_rule_groups`. */
export function createRuleGroupStore(db: Database): RuleGroupStore {
  const { sql } = db;
  return {
    putGroup(orgId, namespace, group, maxRules) {
      return sql.begin(async (tx) => {
        // The org's row is the lock that orders writers of its rule count.
        await tx`select 1 from organizations where id = ${orgId} for update`;
        const rows = await tx<{ others: number }[]>`
          select coalesce(sum(rule_count), 0)::int as others from prometheus_rule_groups
          where org_id = ${orgId} and not (namespace = ${namespace} and name = ${group.name})`;
        const others = expectRow(rows, 'the rule count').others;
        if (others + group.ruleCount > maxRules) return false;
        const [previous] = await tx<{ definition: string }[]>`
          select definition from prometheus_rule_groups
          where org_id = ${orgId} and namespace = ${namespace} and name = ${group.name}
          for update`;
        await tx`
          insert into prometheus_rule_groups as g (org_id, namespace, name, definition,
            rule_count)
          values (${orgId}, ${namespace}, ${group.name}, ${group.definition}, ${group.ruleCount})
          on conflict (org_id, namespace, name) do update
            set definition = excluded.definition, rule_count = excluded.rule_count,
              updated_at = now(),
              revision = case when g.definition = excluded.definition then g.revision
                else nextval('prometheus_rule_group_revisions') end`;
        // A new group has no alerts yet; the same YAML posted again changes nothing.
        if (previous === undefined || previous.definition === group.definition) return true;
        const key = { orgId, namespace, name: group.name };
        await resolveRemovedRuleAlerts(tx, key, new Date(), group.alertingRuleKeys);
        await forgetRemovedRules(tx, key, group.ruleKeys);
        return true;
      });
    },
    async listGroups(orgId, namespace) {
      return sql<StoredRuleGroup[]>`
        select namespace, name, definition from prometheus_rule_groups
        where org_id = ${orgId} ${namespace === undefined ? sql`` : sql`and namespace = ${namespace}`}
        order by namespace, name`;
    },
    async getGroup(orgId, namespace, name) {
      const [group] = await sql<StoredRuleGroup[]>`
        select namespace, name, definition from prometheus_rule_groups
        where org_id = ${orgId} and namespace = ${namespace} and name = ${name}`;
      return group;
    },
    deleteGroup(orgId, namespace, name) {
      return sql.begin(async (tx) => {
        const deleted = await tx<{ name: string }[]>`
          select name from prometheus_rule_groups
          where org_id = ${orgId} and namespace = ${namespace} and name = ${name}
          for update`;
        return (await deleteGroups(tx, orgId, namespace, deleted)) > 0;
      });
    },
    deleteNamespace(orgId, namespace) {
      return sql.begin(async (tx) => {
        const deleted = await tx<{ name: string }[]>`
          select name from prometheus_rule_groups
          where org_id = ${orgId} and namespace = ${namespace}
          for update`;
        return deleteGroups(tx, orgId, namespace, deleted);
      });
    },
  };
}

/** Resolves the alerts of the (locked) groups and deletes them; how many there were. */
async function deleteGroups(
  tx: TransactionSql,
  orgId: string,
  namespace: string,
  groups: readonly { name: string }[],
): Promise<number> {
  const now = new Date();
  for (const { name } of groups)
    await resolveRemovedRuleAlerts(tx, { orgId, namespace, name }, now);
  if (groups.length === 0) return 0;
  const deleted = await tx`
    delete from prometheus_rule_groups
    where org_id = ${orgId} and namespace = ${namespace}
      and name = any(${tx.array(groups.map((group) => group.name))}::text[])`;
  return deleted.count;
}

/** Drops the saved state of the group's rules whose keys are not in `keep`. */
async function forgetRemovedRules(
  tx: TransactionSql,
  key: { orgId: string; namespace: string; name: string },
  keep: readonly string[],
): Promise<void> {
  await tx`
    update prometheus_rule_group_states set state = jsonb_set(state, '{rules}', (
      select coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb)
      from jsonb_each(coalesce(state -> 'rules', '{}'::jsonb)) as e
      where e.key = any(${tx.array([...keep])}::text[])))
    where org_id = ${key.orgId} and namespace = ${key.namespace} and name = ${key.name}`;
}
