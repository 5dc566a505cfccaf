import type { LiveRule } from '@monitor/db';

/** The live rules, indexed for the per-sample lookup. Immutable: a change builds a new one. */
export type RuleSet = {
  /** The rules of `orgId` on `metric` (scope not checked). */
  rulesFor(orgId: string, metric: string): readonly LiveRule[];
  has(ruleId: string): boolean;
  readonly ruleIds: ReadonlySet<string>;
};

const none: readonly LiveRule[] = [];

export function createRuleSet(rules: readonly LiveRule[]): RuleSet {
  const byOrg = new Map<string, Map<string, LiveRule[]>>();
  for (const rule of rules) {
    let byMetric = byOrg.get(rule.orgId);
    if (byMetric === undefined) byOrg.set(rule.orgId, (byMetric = new Map<string, LiveRule[]>()));
    const list = byMetric.get(rule.metric);
    if (list === undefined) byMetric.set(rule.metric, [rule]);
    else list.push(rule);
  }
  const ruleIds = new Set(rules.map((rule) => rule.id));
  return {
    rulesFor: (orgId, metric) => byOrg.get(orgId)?.get(metric) ?? none,
    has: (ruleId) => ruleIds.has(ruleId),
    ruleIds,
  };
}
