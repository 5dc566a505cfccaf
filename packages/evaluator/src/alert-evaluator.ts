import type { BatchContext, RecordBatch } from '@monitor/bus';
import type {
  AlertEvent,
  EvaluatorStateKey,
  EvaluatorStateRecord,
  EvaluatorStore,
  LiveRule,
} from '@monitor/db';
import type { Logger } from '@monitor/platform';
import type { SampleMessage } from '@monitor/schemas';
import { conditionHolds, decodeSampleMessage } from '@monitor/schemas';
import type { MetricRules, RuleSet } from './rule-set.js';
import type { WindowEvent, WindowState } from './rule-window.js';
import { evaluateSample, parseWindowState, ruleApplies } from './rule-window.js';

/** Where the evaluator reads the current rules (the rule poller). */
export type RuleSource = {
  /** The live rules now; a new object after every change. */
  current(): RuleSet;
};

export type EvaluatorMetrics = {
  /** (rule, host) evaluations of one batch: one per sample per rule that applies to it. */
  evaluated(evaluations: number): void;
  alertsFired(count: number): void;
  alertsResolved(count: number): void;
  /** Records passed over: already applied (a replay), or not a sample message (dead-lettered by the writer). */
  recordsSkipped(reason: 'replayed' | 'undecodable', count: number): void;
};

export type Clock = { nowMs(): number };

export type AlertEvaluatorDeps = {
  rules: RuleSource;
  store: Pick<EvaluatorStore, 'appliedOffset' | 'loadHostStates' | 'commit' | 'dropOrphanStates'>;
  metrics: EvaluatorMetrics;
  logger: Logger;
  clock: Clock;
};

export type AlertEvaluatorOptions = {
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
   * Forgets the windows of rules that were deleted or disabled, in memory and in the database,
   * so a rule enabled again starts afresh. Returns how many stored states were deleted.
   */
  rulesRemoved(ruleIds: readonly string[]): Promise<number>;
};

/** The batch was not committed because its partition moved to another consumer. */
export class PartitionMovedError extends Error {
  override readonly name = 'PartitionMovedError';
}

/**
 * What this process knows of one host's windows. Only windows that are not ok are stored (in
 * memory and in `evaluator_states`); every other window of the host is ok, and its newest
 * evaluated sample time is the host's watermark of the rule's metric.
 *
 * The watermarks live only in memory: after a restart, a partition move, the host's eviction
 * from the cache or a rule change during its batch they start empty, so one sample older than the newest evaluated before (out of order across
 * that moment) is evaluated on an ok window instead of being ignored. Pending and firing windows
 * keep their exact `lastSampleMs` in their stored state, so a replay can still never fire twice.
 * The other way round, a rule added later (or a scope that starts to match) inherits the
 * watermark: a sample older than one its metric's other rules evaluated is ignored for it too.
 */
type HostWindows = {
  orgId: string;
  host: string;
  /** metric → the newest sample time evaluated on it by any rule. */
  watermarks: Map<string, number>;
  /** rule id → the window's state, for windows that are pending or firing. */
  windows: Map<string, WindowState>;
};

/** What this process knows of one partition's hosts, valid while `nextOffset` is the stored one. */
type PartitionCache = {
  /** The next offset this process last committed for the partition. */
  nextOffset: number;
  /** org and host (see hostKey) → its windows; in order of last use, least recent first. */
  hosts: Map<string, HostWindows>;
};

/** One batch's work: copies of its hosts' windows, changed in place, kept only once committed. */
type BatchWork = {
  hosts: Map<string, HostWindows>;
  /** The windows whose state changed (or whose stored row must go), by host. */
  changed: Map<HostWindows, Set<string>>;
  events: AlertEvent[];
  evaluations: number;
};

type DecodedRecord = { message: SampleMessage; hostKey: string };

function hostKey(orgId: string, host: string): string {
  return `${orgId}\u0000${host}`;
}

function markChanged(work: BatchWork, host: HostWindows, ruleId: string): void {
  let ruleIds = work.changed.get(host);
  if (ruleIds === undefined) work.changed.set(host, (ruleIds = new Set()));
  ruleIds.add(ruleId);
}

/** Records a window's new state and its events. */
function applyResult(
  work: BatchWork,
  host: HostWindows,
  rule: LiveRule,
  result: { state: WindowState; events: WindowEvent[] },
): void {
  if (result.state.status === 'ok') host.windows.delete(rule.id);
  else host.windows.set(rule.id, result.state);
  markChanged(work, host, rule.id);
  for (const event of result.events) {
    work.events.push({ orgId: host.orgId, host: host.host, ruleId: rule.id, ...event });
  }
}

/**
 * Evaluates every rule that applies to one sample message. The common case, an ok window and a
 * good sample (or one not newer than the watermark), is decided here without calling
 * `evaluateSample`, because that leaves an ok window as it is: nothing is allocated for it.
 */
function evaluateMessage(
  work: BatchWork,
  host: HostWindows,
  message: SampleMessage,
  rulesByMetric: ReadonlyMap<string, MetricRules>,
): void {
  const timeMs = message.time_ms;
  for (const metric in message.metrics) {
    const metricRules = rulesByMetric.get(metric);
    const value = message.metrics[metric];
    if (metricRules === undefined || value === undefined) continue;
    const { rules, scoped } = metricRules;
    const watermark = host.watermarks.get(metric);
    const newer = watermark === undefined || timeMs > watermark;
    let evaluated = false;
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i]!;
      if (scoped[i] === true && !ruleApplies(rule, message)) continue;
      evaluated = true;
      work.evaluations++;
      const window = host.windows.size === 0 ? undefined : host.windows.get(rule.id);
      if (window === undefined) {
        if (!newer || !conditionHolds(rule.condition, value, rule.threshold)) continue;
        const ok: WindowState | undefined =
          watermark === undefined ? undefined : { v: 1, status: 'ok', lastSampleMs: watermark };
        applyResult(work, host, rule, evaluateSample(rule, ok, { timeMs, value }));
        continue;
      }
      const result = evaluateSample(rule, window, { timeMs, value });
      if (result.state !== window) applyResult(work, host, rule, result);
    }
    // After every rule of the sample: they all compare against the watermark before it.
    if (evaluated && newer) host.watermarks.set(metric, timeMs);
  }
}

export function createAlertEvaluator(
  deps: AlertEvaluatorDeps,
  options: AlertEvaluatorOptions,
): AlertEvaluator {
  const { store, metrics, logger: log, clock } = deps;
  const caches = new Map<number, PartitionCache>();

  /** The fresh records decoded, with how many were undecodable. */
  function decode(records: RecordBatch['records']) {
    const decoded: DecodedRecord[] = [];
    let undecodable = 0;
    for (const record of records) {
      const result = decodeSampleMessage(record.value);
      if (!result.ok) undecodable++;
      else
        decoded.push({
          message: result.value,
          hostKey: hostKey(result.value.org_id, result.value.host),
        });
    }
    return { decoded, undecodable };
  }

  /**
   * The batch's hosts with rules to apply: copies of the cached ones, the others loaded from the
   * store in one call. Rows that are ok or unreadable (written by an older version, or damaged)
   * count as ok windows and are marked for deletion.
   */
  async function hostsOf(
    decoded: readonly DecodedRecord[],
    rules: RuleSet,
    cache: PartitionCache | undefined,
    work: BatchWork,
  ): Promise<number> {
    const missing: HostWindows[] = [];
    for (const { message, hostKey: key } of decoded) {
      if (work.hosts.has(key) || rules.rulesByMetric(message.org_id) === undefined) continue;
      const cached = cache?.hosts.get(key);
      const host: HostWindows = {
        orgId: message.org_id,
        host: message.host,
        watermarks: new Map(cached?.watermarks),
        windows: new Map(cached?.windows),
      };
      work.hosts.set(key, host);
      if (cached === undefined) missing.push(host);
    }
    if (missing.length === 0) return 0;
    for (const stored of await store.loadHostStates(missing)) {
      const host = work.hosts.get(hostKey(stored.orgId, stored.host));
      if (host === undefined) continue;
      const state = parseWindowState(stored.state);
      if (state === undefined) {
        log.warn({ ruleId: stored.ruleId, host: stored.host }, 'unreadable window state reset');
      }
      if (state === undefined || state.status === 'ok') markChanged(work, host, stored.ruleId);
      else host.windows.set(stored.ruleId, state);
    }
    return missing.length;
  }

  /** The changed windows as the store takes them: states to upsert, keys to delete. */
  function changesOf(work: BatchWork) {
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
    return { states, cleared };
  }

  /** Keeps the committed work, most recently used hosts last, and forgets beyond the bound. */
  function remember(
    cache: PartitionCache,
    work: BatchWork,
    reset: readonly EvaluatorStateKey[],
    rulesChanged: boolean,
  ): void {
    for (const key of reset)
      work.hosts.get(hostKey(key.orgId, key.host))?.windows.delete(key.ruleId);
    for (const [key, host] of work.hosts) {
      cache.hosts.delete(key);
      // The rules changed during the batch: its windows may belong to a removed rule.
      if (!rulesChanged) cache.hosts.set(key, host);
    }
    for (const key of cache.hosts.keys()) {
      if (cache.hosts.size <= options.maxCachedHostsPerPartition) break;
      cache.hosts.delete(key);
    }
  }

  return {
    async handleBatch(batch, ctx) {
      const startedMs = clock.nowMs();
      const { partition } = batch;
      const appliedOffset = await store.appliedOffset(partition);
      let cache = caches.get(partition);
      if (cache !== undefined && cache.nextOffset !== appliedOffset) {
        // Another replica owned the partition meanwhile: its windows moved on without us.
        caches.delete(partition);
        cache = undefined;
      }
      const fresh = batch.records.filter((record) => Number(record.offset) >= appliedOffset);
      const replayed = batch.records.length - fresh.length;
      if (replayed > 0) metrics.recordsSkipped('replayed', replayed);
      const last = fresh[fresh.length - 1];
      if (last === undefined) return;

      const rules = deps.rules.current();
      const { decoded, undecodable } = decode(fresh);
      if (undecodable > 0) metrics.recordsSkipped('undecodable', undecodable);
      const work: BatchWork = { hosts: new Map(), changed: new Map(), events: [], evaluations: 0 };
      const loadedHosts = await hostsOf(decoded, rules, cache, work);
      for (const { message, hostKey: key } of decoded) {
        const host = work.hosts.get(key);
        const rulesByMetric = rules.rulesByMetric(message.org_id);
        if (host !== undefined && rulesByMetric !== undefined) {
          evaluateMessage(work, host, message, rulesByMetric);
        }
      }

      if (ctx.isStale()) throw new PartitionMovedError(`partition ${partition} was reassigned`);
      const nextOffset = Number(last.offset) + 1;
      const { states, cleared } = changesOf(work);
      const ruleGenerations: Record<string, number> = {};
      for (const { ruleId } of [...states, ...work.events]) {
        const generation = rules.generationOf(ruleId);
        if (generation !== undefined) ruleGenerations[ruleId] = generation;
      }
      const result = await store.commit({
        partition,
        fromOffset: appliedOffset,
        nextOffset,
        states,
        cleared,
        events: work.events,
        ruleGenerations,
      });
      if (result.outcome === 'offset-moved') {
        caches.delete(partition);
        throw new PartitionMovedError(
          `partition ${partition} advanced to ${result.storedOffset} by another consumer`,
        );
      }

      cache ??= { nextOffset, hosts: new Map() };
      cache.nextOffset = nextOffset;
      remember(cache, work, result.reset, deps.rules.current() !== rules);
      caches.set(partition, cache);

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
        fired: result.fired,
        alreadyActive: result.alreadyActive,
        resolved: result.resolved,
        reset: result.reset.length,
        durationMs: clock.nowMs() - startedMs,
      };
      if (work.events.length > 0) log.info(summary, 'batch evaluated');
      else log.debug(summary, 'batch evaluated');
    },

    async rulesRemoved(ruleIds) {
      for (const cache of caches.values()) {
        for (const host of cache.hosts.values()) {
          if (host.windows.size === 0) continue;
          for (const ruleId of ruleIds) host.windows.delete(ruleId);
        }
      }
      return await store.dropOrphanStates();
    },
  };
}
