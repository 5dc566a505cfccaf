import type { BatchContext, RecordBatch } from '@monitor/bus';
import type {
  AlertEvent,
  EvaluatorStateKey,
  EvaluatorStateRecord,
  EvaluatorStore,
  LiveRule,
} from '@monitor/db';
import type { Logger } from '@monitor/platform';
import { decodeSampleMessage } from '@monitor/schemas';
import type { RuleSet } from './rule-set.js';
import type { MetricSample, WindowState } from './rule-window.js';
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
  store: Pick<EvaluatorStore, 'appliedOffset' | 'loadStates' | 'commit' | 'dropOrphanStates'>;
  metrics: EvaluatorMetrics;
  logger: Logger;
  clock: Clock;
};

export type AlertEvaluatorOptions = {
  /** A partition's cache is dropped (and reloaded as needed) when it grows beyond this many windows. */
  maxCachedWindowsPerPartition: number;
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

/** What this process knows of one partition's windows, valid while `nextOffset` is the stored one. */
type PartitionCache = {
  /** The next offset this process last committed for the partition. */
  nextOffset: number;
  /** rule id → (org, host) → the window's state; null: known to have none. */
  windows: Map<string, Map<string, WindowState | null>>;
  size: number;
};

type Evaluation = { key: EvaluatorStateKey; id: string; rule: LiveRule; sample: MetricSample };

function hostKey(key: Pick<EvaluatorStateKey, 'orgId' | 'host'>): string {
  return `${key.orgId}\u0000${key.host}`;
}

function windowId(key: EvaluatorStateKey): string {
  return `${key.ruleId}\u0000${hostKey(key)}`;
}

export function createAlertEvaluator(
  deps: AlertEvaluatorDeps,
  options: AlertEvaluatorOptions,
): AlertEvaluator {
  const { store, metrics, logger: log, clock } = deps;
  const caches = new Map<number, PartitionCache>();

  function cached(cache: PartitionCache | undefined, key: EvaluatorStateKey) {
    return cache?.windows.get(key.ruleId)?.get(hostKey(key));
  }

  function remember(cache: PartitionCache, key: EvaluatorStateKey, state: WindowState | null) {
    let hosts = cache.windows.get(key.ruleId);
    if (hosts === undefined)
      cache.windows.set(key.ruleId, (hosts = new Map<string, WindowState | null>()));
    const host = hostKey(key);
    if (!hosts.has(host)) cache.size++;
    hosts.set(host, state);
  }

  /** The (rule, host) evaluations of the records, in record order, and how many were undecodable. */
  function evaluationsOf(records: RecordBatch['records'], rules: RuleSet) {
    const evaluations: Evaluation[] = [];
    let undecodable = 0;
    for (const record of records) {
      const decoded = decodeSampleMessage(record.value);
      if (!decoded.ok) {
        undecodable++;
        continue;
      }
      const message = decoded.value;
      for (const [metric, value] of Object.entries(message.metrics)) {
        for (const rule of rules.rulesFor(message.org_id, metric)) {
          if (!ruleApplies(rule, message)) continue;
          const key = { orgId: message.org_id, host: message.host, ruleId: rule.id };
          evaluations.push({
            key,
            id: windowId(key),
            rule,
            sample: { timeMs: message.time_ms, value },
          });
        }
      }
    }
    return { evaluations, undecodable };
  }

  /** Every window of the evaluations: from the cache, else from the store in one call. */
  async function windowsOf(evaluations: readonly Evaluation[], cache: PartitionCache | undefined) {
    const windows = new Map<string, WindowState | undefined>();
    const missing: EvaluatorStateKey[] = [];
    for (const { key, id } of evaluations) {
      if (windows.has(id)) continue;
      const state = cached(cache, key);
      if (state === undefined) missing.push(key);
      windows.set(id, state ?? undefined);
    }
    if (missing.length > 0) {
      for (const stored of await store.loadStates(missing)) {
        const state = parseWindowState(stored.state);
        if (state === undefined) {
          log.warn({ ruleId: stored.ruleId, host: stored.host }, 'unreadable window state reset');
        }
        windows.set(windowId(stored), state);
      }
    }
    return windows;
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
      const { evaluations, undecodable } = evaluationsOf(fresh, rules);
      if (undecodable > 0) metrics.recordsSkipped('undecodable', undecodable);
      const windows = await windowsOf(evaluations, cache);
      const changed = new Map<string, EvaluatorStateRecord>();
      const events: AlertEvent[] = [];
      for (const { key, id, rule, sample } of evaluations) {
        const before = windows.get(id);
        const { state, events: windowEvents } = evaluateSample(rule, before, sample);
        if (state === before) continue;
        windows.set(id, state);
        changed.set(id, { ...key, state });
        for (const event of windowEvents) events.push({ ...key, ...event });
      }

      if (ctx.isStale()) throw new PartitionMovedError(`partition ${partition} was reassigned`);
      const nextOffset = Number(last.offset) + 1;
      const result = await store.commit({
        partition,
        fromOffset: appliedOffset,
        nextOffset,
        states: [...changed.values()],
        events,
      });
      if (result.outcome === 'offset-moved') {
        caches.delete(partition);
        throw new PartitionMovedError(
          `partition ${partition} advanced to ${result.storedOffset} by another consumer`,
        );
      }

      if (deps.rules.current() === rules) {
        cache ??= { nextOffset, windows: new Map(), size: 0 };
        cache.nextOffset = nextOffset;
        for (const { key, id } of evaluations) remember(cache, key, windows.get(id) ?? null);
        for (const key of result.reset) remember(cache, key, null);
        if (cache.size <= options.maxCachedWindowsPerPartition) caches.set(partition, cache);
        else caches.delete(partition);
      } else {
        // The rules changed during the batch: what was cached may belong to a removed rule.
        caches.delete(partition);
      }

      metrics.evaluated(evaluations.length);
      if (result.fired > 0) metrics.alertsFired(result.fired);
      if (result.resolved > 0) metrics.alertsResolved(result.resolved);
      const summary = {
        partition,
        records: batch.records.length,
        replayed,
        undecodable,
        evaluations: evaluations.length,
        fired: result.fired,
        alreadyActive: result.alreadyActive,
        resolved: result.resolved,
        reset: result.reset.length,
        durationMs: clock.nowMs() - startedMs,
      };
      if (events.length > 0) log.info(summary, 'batch evaluated');
      else log.debug(summary, 'batch evaluated');
    },

    async rulesRemoved(ruleIds) {
      for (const cache of caches.values()) {
        for (const ruleId of ruleIds) {
          cache.size -= cache.windows.get(ruleId)?.size ?? 0;
          cache.windows.delete(ruleId);
        }
      }
      return await store.dropOrphanStates();
    },
  };
}
