import { partitionForKey } from '@monitor/bus';

/** Which rule group: its organization, namespace and name. */
export type RuleGroupRef = { orgId: string; namespace: string; name: string };

/** One string per group, unambiguous whatever its names contain. */
export function ruleGroupId(group: RuleGroupRef): string {
  return JSON.stringify([group.orgId, group.namespace, group.name]);
}

/**
 * The samples topic's partition whose owner evaluates the group: the Kafka assignment of the
 * evaluator group then spreads groups over replicas and moves them on scale-out and failover.
 */
export function ruleGroupPartition(group: RuleGroupRef, partitions: number): number {
  return partitionForKey(ruleGroupId(group), partitions);
}

/** FNV-1a, 32 bits: a stable spread of groups over their interval. */
function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * The group's latest evaluation slot at or before `nowMs`, as Prometheus' `EvalTimestamp`:
 * slots are `intervalMs` apart, offset from the epoch by a hash of the group so that groups of
 * the same interval do not all run at once. The same on every replica, so a new owner goes on
 * where the previous one stopped.
 */
export function ruleGroupSlotMs(group: RuleGroupRef, intervalMs: number, nowMs: number): number {
  const offsetMs = hash32(ruleGroupId(group)) % intervalMs;
  const adjusted = nowMs - offsetMs;
  return adjusted - (((adjusted % intervalMs) + intervalMs) % intervalMs) + offsetMs;
}
