import type { Database } from '../core/database.js';
import { expectRow } from '../core/expect-row.js';

/** A Prometheus rule group as stored: its namespace, name and the YAML that was posted. */
export type StoredRuleGroup = { namespace: string; name: string; definition: string };

export type RuleGroupStore = {
  /**
   * Creates or replaces the org's group `group.name` in `namespace`, unless the org would then
   * hold more than `maxRules` rules in all: false, and nothing changes. Serialized per org, so
   * that concurrent writers cannot both pass the limit.
   */
  putGroup(
    orgId: string,
    namespace: string,
    group: { name: string; definition: string; ruleCount: number },
    maxRules: number,
  ): Promise<boolean>;
  /** The org's groups, of one namespace when given, by namespace then name. */
  listGroups(orgId: string, namespace?: string): Promise<StoredRuleGroup[]>;
  /** One group of the org; undefined when there is none (or it is another org's). */
  getGroup(orgId: string, namespace: string, name: string): Promise<StoredRuleGroup | undefined>;
  /** Deletes one group; false when there was none. */
  deleteGroup(orgId: string, namespace: string, name: string): Promise<boolean>;
  /** Deletes every group of a namespace; how many there were. */
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
        await tx`
          insert into prometheus_rule_groups (org_id, namespace, name, definition, rule_count)
          values (${orgId}, ${namespace}, ${group.name}, ${group.definition}, ${group.ruleCount})
          on conflict (org_id, namespace, name) do update
            set definition = excluded.definition, rule_count = excluded.rule_count,
              updated_at = now()`;
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
    async deleteGroup(orgId, namespace, name) {
      const deleted = await sql`
        delete from prometheus_rule_groups
        where org_id = ${orgId} and namespace = ${namespace} and name = ${name}`;
      return deleted.count > 0;
    },
    async deleteNamespace(orgId, namespace) {
      const deleted = await sql`
        delete from prometheus_rule_groups where org_id = ${orgId} and namespace = ${namespace}`;
      return deleted.count;
    },
  };
}
