import type { LiveRule, LiveRuleSnapshot } from '@monitor/db';

/**
 * The rules of one organization on one metric with the same scope. They apply to exactly the
 * same samples of a host, so one watermark per host tells how far all of them evaluated (except
 * those that started later, see HostWindows in host-windows.ts).
 */
export type RuleGroup = {
  metric: string;
  /** The scope's pairs sorted, as JSON: equal for equal scopes. */
  scopeKey: string;
  /** Names the group among the org's: metric and scope key. */
  markKey: string;
  /** The scope every rule of the group has; checked once per sample for the group. */
  scope: Readonly<Record<string, string>>;
  /** Whether the scope has any pair (otherwise every host's sample of the metric applies). */
  scoped: boolean;
  rules: readonly LiveRule[];
};

/** Rules with no-data on of one metric and scope. */
type NoDataGroup = {
  scope: Readonly<Record<string, string>>;
  ruleIds: readonly string[];
};

/** Where the evaluator reads the current rules (the rule poller). */
export type RuleSource = {
  /** The live rules now; a new object after every change. */
  current(): RuleSet;
  /** Reloads the rules now if they changed (rejects when that fails). */
  poll(): Promise<void>;
  /**
   * Resolves once `current()` holds every rule change committed before this call; rejects when
   * the rules cannot be read.
   */
  refresh(): Promise<void>;
};

/** The live rules, indexed for the per-sample lookup. Immutable: a change builds a new one. */
export type RuleSet = {
  /** The rules of `orgId` on `metric` (scope not checked). */
  rulesFor(orgId: string, metric: string): readonly LiveRule[];
  /** The rule groups of `orgId` by metric; undefined when the org has no rules. */
  groupsByMetric(orgId: string): ReadonlyMap<string, readonly RuleGroup[]> | undefined;
  /** Whether `orgId` has a rule group of that markKey. */
  hasGroup(orgId: string, markKey: string): boolean;
  has(ruleId: string): boolean;
  /** The rule's generation (see LiveRule); undefined when it is not live. */
  generationOf(ruleId: string): number | undefined;
  /** The rules of `orgId` on `metric` with no-data on, by scope (checked once per group). */
  noDataGroupsFor(orgId: string, metric: string): readonly NoDataGroup[];
  /** The metrics of `orgId` some rule with no-data on watches; undefined when none. */
  noDataMetrics(orgId: string): ReadonlySet<string> | undefined;
  /** Every rule with no-data on. */
  readonly noDataRules: readonly LiveRule[];
  /** The epoch the rules were read at (see LiveRuleSnapshot). */
  readonly epoch: number;
  readonly ruleIds: ReadonlySet<string>;
};

const none: readonly LiveRule[] = [];
const noGroups: readonly NoDataGroup[] = [];

/** The canonical form of a scope: its pairs sorted by key, as JSON. */
function scopeKeyOf(scope: Readonly<Record<string, string>>): string {
  const keys = Object.keys(scope).sort();
  return keys.length === 0 ? '' : JSON.stringify(keys.map((key) => [key, scope[key]]));
}

/** A group's markKey. */
export function markKeyOf(metric: string, scopeKey: string): string {
  return `${metric}\u0000${scopeKey}`;
}

export function createRuleSet({ rules, epoch }: LiveRuleSnapshot): RuleSet {
  type Building = { rules: LiveRule[]; groups: Map<string, RuleGroup & { rules: LiveRule[] }> };
  const byOrg = new Map<string, Map<string, Building>>();
  for (const rule of rules) {
    let byMetric = byOrg.get(rule.orgId);
    if (byMetric === undefined) byOrg.set(rule.orgId, (byMetric = new Map<string, Building>()));
    let building = byMetric.get(rule.metric);
    if (building === undefined) {
      byMetric.set(rule.metric, (building = { rules: [], groups: new Map() }));
    }
    building.rules.push(rule);
    const scopeKey = scopeKeyOf(rule.scope);
    let group = building.groups.get(scopeKey);
    if (group === undefined) {
      group = {
        metric: rule.metric,
        scopeKey,
        markKey: markKeyOf(rule.metric, scopeKey),
        scope: rule.scope,
        scoped: scopeKey !== '',
        rules: [],
      };
      building.groups.set(scopeKey, group);
    }
    group.rules.push(rule);
  }
  const groups = new Map<string, Map<string, RuleGroup[]>>();
  const markKeys = new Map<string, Set<string>>();
  for (const [orgId, byMetric] of byOrg) {
    const orgGroups = new Map<string, RuleGroup[]>();
    const orgMarkKeys = new Set<string>();
    for (const [metric, building] of byMetric) {
      orgGroups.set(metric, [...building.groups.values()]);
      for (const group of building.groups.values()) orgMarkKeys.add(group.markKey);
    }
    groups.set(orgId, orgGroups);
    markKeys.set(orgId, orgMarkKeys);
  }
  const noDataRules = rules.filter((rule) => rule.noDataMinutes !== null);
  const noData = new Map<string, Map<string, NoDataGroup[]>>();
  for (const rule of noDataRules) {
    let byMetric = noData.get(rule.orgId);
    if (byMetric === undefined) {
      noData.set(rule.orgId, (byMetric = new Map<string, NoDataGroup[]>()));
    }
    let list = byMetric.get(rule.metric);
    if (list === undefined) byMetric.set(rule.metric, (list = []));
    const scopeKey = scopeKeyOf(rule.scope);
    const group = list.find((g) => scopeKeyOf(g.scope) === scopeKey);
    if (group === undefined) list.push({ scope: rule.scope, ruleIds: [rule.id] });
    else (group.ruleIds as string[]).push(rule.id);
  }
  const noDataMetrics = new Map(
    [...noData].map(([orgId, byMetric]) => [orgId, new Set(byMetric.keys())]),
  );
  const generations = new Map(rules.map((rule) => [rule.id, rule.generation]));
  const ruleIds = new Set(generations.keys());
  return {
    rulesFor: (orgId, metric) => byOrg.get(orgId)?.get(metric)?.rules ?? none,
    groupsByMetric: (orgId) => groups.get(orgId),
    hasGroup: (orgId, markKey) => markKeys.get(orgId)?.has(markKey) === true,
    has: (ruleId) => ruleIds.has(ruleId),
    generationOf: (ruleId) => generations.get(ruleId),
    noDataGroupsFor: (orgId, metric) => noData.get(orgId)?.get(metric) ?? noGroups,
    noDataMetrics: (orgId) => noDataMetrics.get(orgId),
    noDataRules,
    epoch,
    ruleIds,
  };
}
