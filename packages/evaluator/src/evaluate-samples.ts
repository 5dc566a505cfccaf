import type { AlertEvent, LiveRule, SeenMetric } from '@monitor/db';
import type { DecodedSample } from '@monitor/schemas';
import { conditionHolds } from '@monitor/schemas';
import type { DecodedHostSample } from './decode-samples.js';
import type { GroupMark, HostWindows } from './host-windows.js';
import { hostKey } from './host-windows.js';
import type { RuleGroup, RuleSet } from './rule-set.js';
import type { WindowEvent, WindowState } from './rule-window.js';
import { evaluateSample, isPlainOk, scopeMatches } from './rule-window.js';

/** One batch's work: copies of its hosts' windows, changed in place, kept only once committed. */
export type BatchWork = {
  /** The epoch of the rule set the batch is evaluated under. */
  epoch: number;
  hosts: Map<string, HostWindows>;
  /** The windows whose state changed (or whose stored row must go), by host. */
  changed: Map<HostWindows, Set<string>>;
  /** Hosts whose marks changed. */
  marked: Set<HostWindows>;
  events: AlertEvent[];
  evaluations: number;
  /** Metrics watched for silence that the batch took, by org, host and metric. */
  seen: Map<string, SeenMetric>;
};

export function newBatchWork(rules: RuleSet): BatchWork {
  return {
    epoch: rules.epoch,
    hosts: new Map(),
    changed: new Map(),
    marked: new Set(),
    events: [],
    evaluations: 0,
    seen: new Map(),
  };
}

/**
 * Evaluates the batch's samples, in order, on the windows of `work.hosts` (loaded before), and
 * notes the watched metrics they carry unless `seenFresh` says their last-seen time was written
 * recently enough.
 */
export function evaluateSamples(
  work: BatchWork,
  decoded: readonly DecodedHostSample[],
  rules: RuleSet,
  seenFresh: (key: string) => boolean,
): void {
  for (const { message, hostKey: key } of decoded) {
    const host = work.hosts.get(key);
    const groupsByMetric = rules.groupsByMetric(message.orgId);
    if (host !== undefined && groupsByMetric !== undefined) {
      evaluateMessage(work, host, message, groupsByMetric);
    }
    if (rules.noDataRules.length > 0) noteSeen(work, rules, message, seenFresh);
  }
}

export function markChanged(work: BatchWork, host: HostWindows, ruleId: string): void {
  let ruleIds = work.changed.get(host);
  if (ruleIds === undefined) work.changed.set(host, (ruleIds = new Set()));
  ruleIds.add(ruleId);
}

/**
 * Records a window's new state and its events; a plain ok state (nothing but its last sample,
 * see isPlainOk) is kept only when `keepOk`. An ok state carrying flap data is always kept.
 */
function applyResult(
  work: BatchWork,
  host: HostWindows,
  rule: LiveRule,
  result: { state: WindowState; events: WindowEvent[] },
  keepOk: boolean,
): void {
  if (isPlainOk(result.state) && !keepOk) host.windows.delete(rule.id);
  else host.windows.set(rule.id, result.state);
  markChanged(work, host, rule.id);
  for (const event of result.events) {
    work.events.push({ orgId: host.orgId, host: host.host, ruleId: rule.id, ...event });
  }
}

/**
 * A sample newer than the group's mark: newer than every sample its rules evaluated, so each of
 * them takes it, and afterwards all are at the new mark. The common case, no window of its own
 * and a good sample, allocates nothing.
 */
function evaluateAhead(
  work: BatchWork,
  host: HostWindows,
  rules: readonly LiveRule[],
  sample: { timeMs: number; value: number },
): void {
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!;
    const window = host.windows.size === 0 ? undefined : host.windows.get(rule.id);
    if (window === undefined && !conditionHolds(rule.condition, sample.value, rule.threshold)) {
      continue;
    }
    const result = evaluateSample(rule, window, sample);
    // Ignored: only when the mark was lost (unreadable) while the window was not.
    if (result.state === window) continue;
    applyResult(work, host, rule, result, false);
  }
}

/**
 * A sample not newer than the group's mark: only rules whose own last sample is older take it
 * (rules that started later, or that took fewer out-of-order samples), each keeping a window of
 * its own unless it ends exactly at the mark.
 */
function evaluateBehind(
  work: BatchWork,
  host: HostWindows,
  rules: readonly LiveRule[],
  mark: GroupMark,
  sample: { timeMs: number; value: number },
): void {
  for (const rule of rules) {
    const window = host.windows.get(rule.id);
    const atMark = rule.generation <= mark.epoch;
    const lastSampleMs = window?.lastSampleMs ?? (atMark ? mark.lastSampleMs : undefined);
    if (lastSampleMs !== undefined && sample.timeMs <= lastSampleMs) continue;
    const result = evaluateSample(rule, window, sample);
    applyResult(work, host, rule, result, !(atMark && sample.timeMs === mark.lastSampleMs));
  }
}

/**
 * Notes the metrics of a sample that rules with no-data on (whose scope it matches) watch,
 * unless `fresh` says their last-seen time was written recently enough (then nothing is done
 * for them, allocations included).
 */
function noteSeen(
  work: BatchWork,
  rules: RuleSet,
  message: DecodedSample,
  fresh: (key: string) => boolean,
): void {
  const watched = rules.noDataMetrics(message.orgId);
  if (watched === undefined) return;
  for (const metric of watched) {
    if (!Object.hasOwn(message.metrics, metric)) continue;
    const key = `${hostKey(message.orgId, message.host)}\u0000${metric}`;
    if (fresh(key)) continue;
    const earlier = work.seen.get(key);
    if (earlier !== undefined && earlier.sampleMs > message.timeMs) continue;
    const ruleIds: string[] = [];
    for (const group of rules.noDataGroupsFor(message.orgId, metric)) {
      if (scopeMatches(group.scope, message.tags)) ruleIds.push(...group.ruleIds);
    }
    if (ruleIds.length === 0) continue;
    work.seen.set(key, {
      orgId: message.orgId,
      host: message.host,
      metric,
      tags: message.tags,
      sampleMs: message.timeMs,
      ruleIds,
    });
  }
}

/** Evaluates every rule group that applies to one sample message. */
function evaluateMessage(
  work: BatchWork,
  host: HostWindows,
  message: DecodedSample,
  groupsByMetric: ReadonlyMap<string, readonly RuleGroup[]>,
): void {
  const timeMs = message.timeMs;
  for (const metric in message.metrics) {
    const groups = groupsByMetric.get(metric);
    const value = message.metrics[metric];
    // NaN and ±Inf (agents may send them: stored, read back by PromQL) are no value a threshold
    // compares against: rules skip them, as the aggregates do.
    if (groups === undefined || value === undefined || !Number.isFinite(value)) continue;
    for (const group of groups) {
      if (group.scoped && !scopeMatches(group.scope, message.tags)) continue;
      work.evaluations += group.rules.length;
      const mark = host.marks.get(group.markKey);
      if (mark !== undefined && timeMs <= mark.lastSampleMs) {
        evaluateBehind(work, host, group.rules, mark, { timeMs, value });
        continue;
      }
      evaluateAhead(work, host, group.rules, { timeMs, value });
      host.marks.set(group.markKey, { lastSampleMs: timeMs, epoch: work.epoch });
      work.marked.add(host);
    }
  }
}
