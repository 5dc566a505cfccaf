import type { BatchContext, ConsumedRecord, DeadLetterSink, RecordBatch } from '@monitor/bus';
import { createConsumerBatchPolicy } from '@monitor/bus';
import type {
  AlertEvent,
  EvaluatorStateKey,
  EvaluatorStateRecord,
  EvaluatorStore,
  HostWatermarkRecord,
  LiveRule,
  NoDataSweepResult,
  SeenMetric,
} from '@monitor/db';
import type { Logger } from '@monitor/platform';
import { isRetriable } from '@monitor/platform';
import type { DecodedSample, SampleRecordDecoder } from '@monitor/schemas';
import { conditionHolds, decodeSampleRecord, sampleRecordIndexHeader } from '@monitor/schemas';
import type { RuleGroup, RuleSet } from './rule-set.js';
import { markKeyOf } from './rule-set.js';
import type { WindowEvent, WindowState } from './rule-window.js';
import { evaluateSample, isPlainOk, parseWindowState, scopeMatches } from './rule-window.js';

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

export type EvaluatorMetrics = {
  /** (rule, host) evaluations of one batch: one per sample per rule that applies to it. */
  evaluated(evaluations: number): void;
  alertsFired(count: number): void;
  alertsResolved(count: number): void;
  /**
   * Records passed over: already applied (a replay), not a sample message (dead-lettered by the
   * writer), or one whose evaluation fails for good (set aside to the dead letters).
   */
  recordsSkipped(reason: 'replayed' | 'undecodable' | 'unprocessable', count: number): void;
  /** A partition whose stored offset was past the end of its log started afresh. */
  logRestarted(): void;
};

type Clock = { nowMs(): number };

export type AlertEvaluatorDeps = {
  rules: RuleSource;
  store: Pick<
    EvaluatorStore,
    | 'appliedOffset'
    | 'appliedPosition'
    | 'loadHosts'
    | 'commit'
    | 'dropOrphanStates'
    | 'sweepNoData'
  >;
  /** Where a record whose evaluation fails for good goes, with the reason. */
  deadLetters: DeadLetterSink;
  metrics: EvaluatorMetrics;
  logger: Logger;
  clock: Clock;
  /** Waits between attempts at one record before it is set aside. Default: setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Decodes a record's value. Default: `decodeSampleRecord`. */
  decodeRecord?: SampleRecordDecoder;
};

/**
 * A host's last-seen time of a watched metric is written at most this often per partition (on
 * the evaluator's clock), not on every batch; silences count from it plus this long, so a
 * no-data alert comes at most this late and never early.
 */
const defaultSeenRefreshMs = 15_000;

export type AlertEvaluatorOptions = {
  /** See defaultSeenRefreshMs (default 15 s). */
  noDataSeenRefreshMs?: number;
  /** Hosts remembered per partition; beyond it the least recently seen are forgotten (and reloaded when seen again). */
  maxCachedHostsPerPartition: number;
};

export type AlertEvaluator = {
  /**
   * Evaluates a batch of one partition and commits states, alerts and the next offset in one
   * transaction. Records below the stored offset are skipped (replays cost nothing). Throws to
   * have the batch redelivered: on a database error, or when another consumer advanced the
   * partition meanwhile (the redelivery then skips what it applied).
   */
  handleBatch(batch: RecordBatch, ctx: BatchContext): Promise<void>;
  /**
   * After rules were deleted, disabled or restarted: forgets what it cached under the old rules
   * and deletes the stored windows of rules that are no longer live. Returns how many.
   */
  rulesRemoved(): Promise<number>;
  /**
   * No data (wall clock, the evaluator's clock): acts once on each silence of a (rule, host)
   * whose host sent the rule's metric before and none for the rule's no_data_minutes, whether
   * or not its partition receives anything (see EvaluatorStore.sweepNoData). Call it
   * periodically; safe on every replica at once.
   */
  sweepNoData(): Promise<NoDataSweepResult>;
};

/** The batch was not committed because its partition moved to another consumer. */
export class PartitionMovedError extends Error {
  override readonly name = 'PartitionMovedError';
}

/** A checkpoint was written under rules this process has not loaded yet: retry once it has. */
class RulesBehindError extends Error {
  override readonly name = 'RulesBehindError';
}

/** Attempts at a single record that fails for good before it is set aside. */
const attemptsPerRecord = 3;

/**
 * How far a rule group (rules of one metric and scope) evaluated on a host: the newest sample
 * time its rules evaluated, and the epoch of the rule set it was evaluated under. Every rule of
 * the group whose generation is at most `epoch` evaluated up to `lastSampleMs`, unless the host
 * holds a window of its own for it; a rule of a later generation reached the evaluator after
 * that and has evaluated nothing here, unless it has a window.
 */
type GroupMark = { readonly lastSampleMs: number; readonly epoch: number };

/**
 * What this process knows of one host. The contract ignores a sample older than the newest one
 * evaluated for that (rule, host); one mark per rule group holds that time for nearly every
 * rule, and a rule gets a window of its own only where it differs: a window that is pending or
 * firing, or an ok one whose last sample is not the group's (a rule that started later, or one
 * that took an out-of-order sample the others had passed). Marks and windows are checkpointed
 * in the batch's transaction, so restarts and partition moves keep the exact semantics.
 */
type HostWindows = {
  orgId: string;
  host: string;
  /** Rule group markKey → its mark. Marks are replaced, never changed, so copies can share them. */
  marks: Map<string, GroupMark>;
  /** rule id → the rule's own window, where the group's mark does not tell its state. */
  windows: Map<string, WindowState>;
};

/**
 * What this process knows of one partition's hosts, valid while `nextOffset` is the stored one
 * and the rules are `rules`: after any rule change the hosts are read again from the database,
 * where another replica may have written windows of a generation this one did not know yet.
 */
type PartitionCache = {
  /** The next offset this process last committed for the partition. */
  nextOffset: number;
  /** The partition's windows' revision then (a no-data sweep that resets a window raises it). */
  revision: number;
  rules: RuleSet;
  /** org and host (see hostKey) → its windows; in order of last use, least recent first. */
  hosts: Map<string, HostWindows>;
  /** org, host and watched metric → when this process last wrote its last-seen time. */
  seenWrittenMs: Map<string, number>;
};

/** One batch's work: copies of its hosts' windows, changed in place, kept only once committed. */
type BatchWork = {
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

type DecodedRecord = { message: DecodedSample; hostKey: string };

function hostKey(orgId: string, host: string): string {
  return `${orgId}\u0000${host}`;
}

function markChanged(work: BatchWork, host: HostWindows, ruleId: string): void {
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

/** Checkpointed marks: `[metric, scopeKey, lastSampleMs, epoch]` per group, versioned. */
type StoredMarks = { v: 1; groups: [string, string, number, number][] };

function marksToJson(host: HostWindows, rules: RuleSet): StoredMarks {
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
function parseMarks(json: unknown): Map<string, GroupMark> | undefined {
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

export function createAlertEvaluator(
  deps: AlertEvaluatorDeps,
  options: AlertEvaluatorOptions,
): AlertEvaluator {
  const { store, metrics, logger: log, clock } = deps;
  const decodeRecord = deps.decodeRecord ?? decodeSampleRecord;
  const caches = new Map<number, PartitionCache>();
  const seenRefreshMs = options.noDataSeenRefreshMs ?? defaultSeenRefreshMs;

  /** The batch's watched metrics whose last-seen time is due a write (see defaultSeenRefreshMs). */
  function seenToWrite(work: BatchWork, cache: PartitionCache | undefined, nowMs: number) {
    const due: SeenMetric[] = [];
    for (const [key, seen] of work.seen) {
      const writtenMs = cache?.seenWrittenMs.get(key);
      if (writtenMs === undefined || nowMs - writtenMs >= seenRefreshMs) due.push(seen);
      else work.seen.delete(key);
    }
    return due;
  }

  /** The fresh records decoded, with how many were undecodable. */
  function decode(records: RecordBatch['records']) {
    const decoded: DecodedRecord[] = [];
    let undecodable = 0;
    for (const record of records) {
      const result = decodeRecord(record.value);
      if (!result.ok) {
        undecodable++;
        continue;
      }
      // A host that does not decode is passed over alone (the writer dead-letters it); the
      // record's other hosts are evaluated, in the order the record carries them.
      for (const { decoded: host } of result.value) {
        if (!host.ok) undecodable++;
        else
          decoded.push({
            message: host.value,
            hostKey: hostKey(host.value.orgId, host.value.host),
          });
      }
    }
    return { decoded, undecodable };
  }

  /**
   * The batch's hosts with rules to apply: copies of the cached ones, the others loaded from the
   * store in one call. A stored state or marks that this code cannot read (damaged) are dropped
   * with a warning: its rules then count as having evaluated nothing on the host.
   * Returns how many hosts were loaded and the newest epoch among their marks.
   */
  async function hostsOf(
    decoded: readonly DecodedRecord[],
    rules: RuleSet,
    cache: PartitionCache | undefined,
    work: BatchWork,
  ): Promise<{ loaded: number; newestEpoch: number }> {
    const missing: HostWindows[] = [];
    for (const { message, hostKey: key } of decoded) {
      if (work.hosts.has(key) || rules.groupsByMetric(message.orgId) === undefined) continue;
      const cached = cache?.hosts.get(key);
      const host: HostWindows = {
        orgId: message.orgId,
        host: message.host,
        marks: new Map(cached?.marks),
        windows: new Map(cached?.windows),
      };
      work.hosts.set(key, host);
      if (cached === undefined) missing.push(host);
    }
    let newestEpoch = 0;
    if (missing.length === 0) return { loaded: 0, newestEpoch };
    const stored = await store.loadHosts(missing);
    for (const record of stored.states) {
      const host = work.hosts.get(hostKey(record.orgId, record.host));
      if (host === undefined) continue;
      const state = parseWindowState(record.state);
      if (state !== undefined) host.windows.set(record.ruleId, state);
      else {
        log.warn({ ruleId: record.ruleId, host: record.host }, 'unreadable window state reset');
        markChanged(work, host, record.ruleId);
      }
    }
    for (const record of stored.watermarks) {
      const host = work.hosts.get(hostKey(record.orgId, record.host));
      if (host === undefined) continue;
      const marks = parseMarks(record.marks);
      if (marks === undefined) {
        log.warn({ host: record.host }, 'unreadable watermarks reset');
        work.marked.add(host);
        continue;
      }
      host.marks = marks;
      for (const mark of marks.values()) newestEpoch = Math.max(newestEpoch, mark.epoch);
    }
    return { loaded: missing.length, newestEpoch };
  }

  /** The changed windows and marks as the store takes them: states and marks to upsert, keys to delete. */
  function changesOf(work: BatchWork, rules: RuleSet) {
    const states: EvaluatorStateRecord[] = [];
    const cleared: EvaluatorStateKey[] = [];
    for (const [host, ruleIds] of work.changed) {
      for (const ruleId of ruleIds) {
        const key = { orgId: host.orgId, host: host.host, ruleId };
        const state = host.windows.get(ruleId);
        if (state === undefined) cleared.push(key);
        else states.push({ ...key, state });
      }
    }
    const watermarks: HostWatermarkRecord[] = [];
    for (const host of work.marked) {
      watermarks.push({ orgId: host.orgId, host: host.host, marks: marksToJson(host, rules) });
    }
    return { states, cleared, watermarks };
  }

  /** Keeps the committed work, most recently used hosts last, and forgets beyond the bound. */
  function remember(
    cache: PartitionCache,
    work: BatchWork,
    reset: readonly EvaluatorStateKey[],
  ): void {
    for (const key of reset)
      work.hosts.get(hostKey(key.orgId, key.host))?.windows.delete(key.ruleId);
    for (const [key, host] of work.hosts) {
      cache.hosts.delete(key);
      cache.hosts.set(key, host);
    }
    for (const key of cache.hosts.keys()) {
      if (cache.hosts.size <= options.maxCachedHostsPerPartition) break;
      cache.hosts.delete(key);
    }
  }

  function newWork(rules: RuleSet): BatchWork {
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
   * Evaluates `batch` and commits it in one transaction; throws to have it redelivered.
   * `advance` false: the offset stays at the batch's last record (one host of a record
   * evaluated alone, the record's other hosts still to come).
   *
   * The partition's applied position is read first, unless this process committed the
   * partition's last batch under the current rules: the commit checks that position under its
   * lock anyway, and a batch that waits for its commit (monitor all's ingest does) saves a round
   * trip. When the position moved meanwhile (another replica, a no-data sweep), the commit
   * writes nothing and the batch is evaluated again from the position read.
   */
  async function evaluateBatch(
    batch: RecordBatch,
    ctx: BatchContext,
    advance = true,
  ): Promise<void> {
    const startedMs = clock.nowMs();
    const { partition } = batch;
    const known = caches.get(partition);
    const trusted = known !== undefined && known.rules === deps.rules.current();
    const { nextOffset: storedOffset, revision } = trusted
      ? { nextOffset: known.nextOffset, revision: known.revision }
      : await store.appliedPosition(partition);
    // A stored offset past the log's end belongs to an earlier log of the topic (created
    // again): nothing of this log was applied, so nothing is skipped as a replay.
    const logRestarted = storedOffset > batch.logEndOffset;
    const appliedOffset = logRestarted ? 0 : storedOffset;
    let rules = deps.rules.current();
    let cache = caches.get(partition);
    if (
      cache !== undefined &&
      (cache.nextOffset !== storedOffset || cache.revision !== revision || cache.rules !== rules)
    ) {
      // Another replica owned the partition meanwhile (its windows moved on without us), a
      // no-data sweep reset a window, or the rules changed (a replica that knew first may have
      // written windows of theirs).
      caches.delete(partition);
      cache = undefined;
    }
    const fresh = batch.records.filter((record) => Number(record.offset) >= appliedOffset);
    const replayed = batch.records.length - fresh.length;
    const last = fresh[fresh.length - 1];
    if (last === undefined) {
      if (replayed > 0) metrics.recordsSkipped('replayed', replayed);
      return;
    }

    const { decoded, undecodable } = decode(fresh);
    let work = newWork(rules);
    let { loaded: loadedHosts, newestEpoch } = await hostsOf(decoded, rules, cache, work);
    if (newestEpoch > rules.epoch) {
      // A replica with newer rules wrote these marks: rules it knew and this process does not
      // yet would count as new here. Catch up first.
      await deps.rules.poll();
      rules = deps.rules.current();
      if (newestEpoch > rules.epoch) {
        throw new RulesBehindError(`rules at epoch ${rules.epoch}, a checkpoint at ${newestEpoch}`);
      }
      caches.delete(partition);
      cache = undefined;
      work = newWork(rules);
      ({ loaded: loadedHosts, newestEpoch } = await hostsOf(decoded, rules, cache, work));
    }
    const batchStartedMs = clock.nowMs();
    const seenFresh = (key: string): boolean => {
      const writtenMs = cache?.seenWrittenMs.get(key);
      return writtenMs !== undefined && batchStartedMs - writtenMs < seenRefreshMs;
    };
    for (const { message, hostKey: key } of decoded) {
      const host = work.hosts.get(key);
      const groupsByMetric = rules.groupsByMetric(message.orgId);
      if (host !== undefined && groupsByMetric !== undefined) {
        evaluateMessage(work, host, message, groupsByMetric);
      }
      if (rules.noDataRules.length > 0) noteSeen(work, rules, message, seenFresh);
    }

    if (ctx.isStale()) throw new PartitionMovedError(`partition ${partition} was reassigned`);
    const nextOffset = Number(last.offset) + (advance ? 1 : 0);
    const { states, cleared, watermarks } = changesOf(work, rules);
    const ruleGenerations: Record<string, number> = {};
    for (const { ruleId } of [...states, ...cleared, ...work.events]) {
      const generation = rules.generationOf(ruleId);
      if (generation !== undefined) ruleGenerations[ruleId] = generation;
    }
    const seenAtMs = clock.nowMs();
    const seen = seenToWrite(work, cache, seenAtMs);
    const result = await store.commit({
      partition,
      fromOffset: storedOffset,
      fromRevision: revision,
      ...(seen.length > 0 ? { seen, seenAtMs } : {}),
      nextOffset,
      states,
      cleared,
      watermarks,
      events: work.events,
      ruleGenerations,
    });
    if (result.outcome === 'offset-moved') {
      caches.delete(partition);
      // Evaluated from this process's own last position: again, from the one stored.
      if (trusted) return await evaluateBatch(batch, ctx, advance);
      throw new PartitionMovedError(
        `partition ${partition} advanced to ${result.storedOffset} by another consumer`,
      );
    }

    if (deps.rules.current() === rules) {
      cache ??= { nextOffset, revision, rules, hosts: new Map(), seenWrittenMs: new Map() };
      cache.nextOffset = nextOffset;
      // Bounded like the hosts: forgetting only means the next batch writes again.
      if (cache.seenWrittenMs.size > 4 * options.maxCachedHostsPerPartition) {
        cache.seenWrittenMs.clear();
      }
      for (const key of work.seen.keys()) cache.seenWrittenMs.set(key, seenAtMs);
      remember(cache, work, result.reset);
      caches.set(partition, cache);
    } else {
      // The rules changed during the batch: its windows may belong to a removed rule.
      caches.delete(partition);
    }

    // Counted once committed: an attempt evaluated again (or redelivered) is not counted twice.
    if (replayed > 0) metrics.recordsSkipped('replayed', replayed);
    if (undecodable > 0) metrics.recordsSkipped('undecodable', undecodable);
    metrics.evaluated(work.evaluations);
    if (result.fired > 0) metrics.alertsFired(result.fired);
    if (result.resolved > 0) metrics.alertsResolved(result.resolved);
    const summary = {
      partition,
      records: batch.records.length,
      replayed,
      undecodable,
      evaluations: work.evaluations,
      loadedHosts,
      statesWritten: states.length,
      statesCleared: cleared.length,
      watermarksWritten: watermarks.length,
      fired: result.fired,
      alreadyActive: result.alreadyActive,
      resolved: result.resolved,
      reset: result.reset.length,
      durationMs: clock.nowMs() - startedMs,
    };
    if (logRestarted) {
      metrics.logRestarted();
      log.warn(
        { partition, storedOffset, logEndOffset: batch.logEndOffset },
        'stored offset was past the end of the log (topic created again?); the partition starts afresh',
      );
    }
    if (work.events.length > 0) log.info(summary, 'batch evaluated');
    else log.debug(summary, 'batch evaluated');
  }

  /**
   * A batch that fails for good is halved until the record that causes it is alone; after a
   * few attempts that record is dead-lettered and its offset committed, so one bad record never
   * holds back the partition (other hosts, other organizations) behind it. One of many hosts is
   * first evaluated host by host (the offset moving past the record only at its end, a host
   * evaluated again on a replay being a no-op by its watermark), so only the hosts that fail
   * are set aside.
   */
  function isolating(batch: RecordBatch, ctx: BatchContext) {
    return createConsumerBatchPolicy<ConsumedRecord>(
      {
        recordOf: (record) => record,
        process: (records) => evaluateBatch({ ...batch, records: [...records] }, ctx),
        splitRecord: ([record]) => hostRecordsOf(record as ConsumedRecord),
        processAlone: (host) => evaluateBatch({ ...batch, records: [host] }, ctx, false),
        setAside,
        commitPast: (record) => commitPast(batch, record),
        // Errors that say nothing about the records: the whole batch is redelivered as it is.
        handlingOf: (err) =>
          err instanceof PartitionMovedError || err instanceof RulesBehindError || isRetriable(err)
            ? 'redeliver'
            : 'isolate',
        sleep: deps.sleep,
      },
      { attemptsBeforeSetAside: attemptsPerRecord, reattemptDelayMs: (attempt) => 100 * attempt },
    );
  }

  async function setAside(record: ConsumedRecord, err: Error): Promise<void> {
    log.error(
      { err, partition: record.partition, offset: record.offset, attempts: attemptsPerRecord },
      'record cannot be evaluated; dead-lettered, the partition moves on',
    );
    await deps.deadLetters.send(record, `evaluator: ${err.message}`);
    metrics.recordsSkipped('unprocessable', 1);
  }

  /** Commits past `record` with nothing else, unless a replay already did. */
  async function commitPast(batch: RecordBatch, record: ConsumedRecord) {
    const storedOffset = await store.appliedOffset(batch.partition);
    const nextOffset = Number(record.offset) + 1;
    if (storedOffset <= batch.logEndOffset && storedOffset >= nextOffset) return;
    const result = await store.commit({
      partition: batch.partition,
      fromOffset: storedOffset,
      nextOffset,
      states: [],
      cleared: [],
      watermarks: [],
      events: [],
      ruleGenerations: {},
    });
    caches.delete(batch.partition);
    if (result.outcome === 'offset-moved') {
      throw new PartitionMovedError(
        `partition ${batch.partition} advanced to ${result.storedOffset} by another consumer`,
      );
    }
  }

  return {
    async handleBatch(batch, ctx) {
      // Every rule change answered before these records were accepted must apply to them: they
      // were accepted before they reached this process, so a check that starts now sees them.
      await deps.rules.refresh();
      await isolating(batch, ctx).handle(batch.records);
    },

    async sweepNoData() {
      const rules = deps.rules.current();
      const result = await store.sweepNoData({
        nowMs: clock.nowMs(),
        graceMs: seenRefreshMs,
        rules: rules.noDataRules.map((rule) => ({
          orgId: rule.orgId,
          ruleId: rule.id,
          metric: rule.metric,
          scope: rule.scope,
          noDataMinutes: rule.noDataMinutes ?? 0,
          noDataState: rule.noDataState,
          generation: rule.generation,
        })),
      });
      if (result.fired > 0) metrics.alertsFired(result.fired);
      if (result.resolved > 0) metrics.alertsResolved(result.resolved);
      if (result.fired + result.resolved > 0) log.info(result, 'no data swept');
      return result;
    },

    async rulesRemoved() {
      // The caches belong to the rules before the change (a batch would drop them anyway).
      caches.clear();
      return await store.dropOrphanStates();
    },
  };
}

/**
 * The hosts of a record of many hosts, each as a record of its own (same position, its own
 * message, its place in the record in `x-sample-record-index`); one entry for any other record.
 */
function hostRecordsOf(record: ConsumedRecord): ConsumedRecord[] {
  const decoded = decodeSampleRecord(record.value);
  if (!decoded.ok || decoded.value.length <= 1) return [record];
  return decoded.value.map(({ message, index, decoded: host }) => ({
    ...record,
    key: host.ok ? `${host.value.orgId}:${host.value.host}` : record.key,
    value: message,
    headers: { ...record.headers, [sampleRecordIndexHeader]: String(index) },
  }));
}
