/** Which rule group: its organization, namespace and name. */
export type RuleGroupKey = { orgId: string; namespace: string; name: string };
