import type { LiveRule } from '@monitor/db';

/** The rules of one organization on one metric, in rule order. */
export type MetricRules = {
  rules: readonly LiveRule[];
  /** `scoped[i]`: rules[i] has a tag scope to check; the others apply to every host. */
  scoped: readonly boolean[];
};

/** The live rules, indexed for the per-sample lookup. Immutable: a change builds a new one. */
export type RuleSet = {
  /** The rules of `orgId` on `metric` (scope not checked). */
  rulesFor(orgId: string, metric: string): readonly LiveRule[];
  /** The rules of `orgId` by metric (scope not checked); undefined when the org has none. */
  rulesByMetric(orgId: string): ReadonlyMap<string, MetricRules> | undefined;
  has(ruleId: string): boolean;
  /** The rule's generation (see LiveRule); undefined when it is not live. */
  generationOf(ruleId: string): number | undefined;
  readonly ruleIds: ReadonlySet<string>;
};

const none: readonly LiveRule[] = [];

export function createRuleSet(rules: readonly LiveRule[]): RuleSet {
  type Building = { rules: LiveRule[]; scoped: boolean[] };
  const byOrg = new Map<string, Map<string, Building>>();
  for (const rule of rules) {
    let byMetric = byOrg.get(rule.orgId);
    if (byMetric === undefined) byOrg.set(rule.orgId, (byMetric = new Map<string, Building>()));
    let list = byMetric.get(rule.metric);
    if (list === undefined) byMetric.set(rule.metric, (list = { rules: [], scoped: [] }));
    list.rules.push(rule);
    list.scoped.push(Object.keys(rule.scope).length > 0);
  }
  const generations = new Map(rules.map((rule) => [rule.id, rule.generation]));
  const ruleIds = new Set(generations.keys());
  return {
    rulesFor: (orgId, metric) => byOrg.get(orgId)?.get(metric)?.rules ?? none,
    rulesByMetric: (orgId) => byOrg.get(orgId),
    has: (ruleId) => ruleIds.has(ruleId),
    generationOf: (ruleId) => generations.get(ruleId),
    ruleIds,
  };
}
