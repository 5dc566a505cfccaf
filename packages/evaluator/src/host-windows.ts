import type { RuleSet } from './rule-set.js';
import { markKeyOf } from './rule-set.js';
import type { WindowState } from './rule-window.js';

/**
 * How far a rule group (rules of one metric and scope) evaluated on a host: the newest sample
 * time its rules evaluated, and the epoch of the rule set it was evaluated under. Every rule of
 * the group whose generation is at most `epoch` evaluated up to `lastSampleMs`, unless the host
 * holds a window of its own for it; a rule of a later generation reached the evaluator after
 * that and has evaluated nothing here, unless it has a window.
 */
export type GroupMark = { readonly lastSampleMs: number; readonly epoch: number };

/**
 * What this process knows of one host. The contract ignores a sample older than the newest one
 * evaluated for that (rule, host); one mark per rule group holds that time for nearly every
 * rule, and a rule gets a window of its own only where it differs: a window that is pending or
 * firing, or an ok one whose last sample is not the group's (a rule that started later, or one
 * that took an out-of-order sample the others had passed). Marks and windows are checkpointed
 * in the batch's transaction, so restarts and partition moves keep the exact semantics.
 */
export type HostWindows = {
  orgId: string;
  host: string;
  /** Rule group markKey → its mark. Marks are replaced, never changed, so copies can share them. */
  marks: Map<string, GroupMark>;
  /** rule id → the rule's own window, where the group's mark does not tell its state. */
  windows: Map<string, WindowState>;
};

export function hostKey(orgId: string, host: string): string {
  return `${orgId}\u0000${host}`;
}

/** Checkpointed marks: `[metric, scopeKey, lastSampleMs, epoch]` per group, versioned. */
type StoredMarks = { v: 1; groups: [string, string, number, number][] };

export function marksToJson(host: HostWindows, rules: RuleSet): StoredMarks {
  const groups: StoredMarks['groups'] = [];
  for (const [markKey, mark] of host.marks) {
    // A group without live rules: a rule that joins it later is new to every mark anyway.
    if (!rules.hasGroup(host.orgId, markKey)) {
      host.marks.delete(markKey);
      continue;
    }
    const [metric = '', scopeKey = ''] = markKey.split('\u0000');
    groups.push([metric, scopeKey, mark.lastSampleMs, mark.epoch]);
  }
  return { v: 1, groups };
}

/** Stored marks read back, or undefined when they are not what this code writes. */
export function parseMarks(json: unknown): Map<string, GroupMark> | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const { v, groups } = json as Partial<StoredMarks>;
  if (v !== 1 || !Array.isArray(groups)) return undefined;
  const marks = new Map<string, GroupMark>();
  for (const entry of groups as unknown[]) {
    if (!Array.isArray(entry) || entry.length !== 4) return undefined;
    const [metric, scopeKey, lastSampleMs, epoch] = entry as unknown[];
    if (typeof metric !== 'string' || typeof scopeKey !== 'string') return undefined;
    if (!Number.isFinite(lastSampleMs) || !Number.isFinite(epoch)) return undefined;
    marks.set(markKeyOf(metric, scopeKey), {
      lastSampleMs: lastSampleMs as number,
      epoch: epoch as number,
    });
  }
  return marks;
}
