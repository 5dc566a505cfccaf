import type { EvaluatorStateKey, SeenMetric } from '@monitor/db';
import type { BatchWork } from './evaluate-samples.js';
import type { HostWindows } from './host-windows.js';
import { hostKey } from './host-windows.js';
import type { RuleSet } from './rule-set.js';

/**
 * What this process knows of one partition's hosts, valid while `nextOffset` is the stored one
 * and the rules are `rules`: after any rule change the hosts are read again from the database,
 * where another replica may have written windows of a generation this one did not know yet.
 */
export type PartitionCache = {
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

/** A partition's applied position: its next offset and its windows' revision. */
type Position = { nextOffset: number; revision: number };

/** What a committed batch leaves for the next one of its partition. */
type CommittedBatch = Position & {
  rules: RuleSet;
  work: BatchWork;
  /** Windows the commit found gone (their rule was restarted meanwhile): forgotten. */
  reset: readonly EvaluatorStateKey[];
  /** When the batch's last-seen times were written. */
  seenAtMs: number;
};

export type PartitionCaches = ReturnType<typeof createPartitionCaches>;

/**
 * The caches of the partitions this process evaluates, each kept only while nothing but this
 * process changed its partition; each holds at most `maxCachedHostsPerPartition` hosts.
 */
export function createPartitionCaches(options: { maxCachedHostsPerPartition: number }) {
  const caches = new Map<number, PartitionCache>();
  const maxHosts = options.maxCachedHostsPerPartition;

  return {
    /** The position this process last committed, if it did so under `rules`: no need to read it. */
    trustedPosition(partition: number, rules: RuleSet): Position | undefined {
      const known = caches.get(partition);
      if (known === undefined || known.rules !== rules) return undefined;
      return { nextOffset: known.nextOffset, revision: known.revision };
    },

    /** The partition's cache if it still holds at `position` under `rules`; otherwise dropped. */
    validAt(partition: number, position: Position, rules: RuleSet): PartitionCache | undefined {
      const cache = caches.get(partition);
      if (cache === undefined) return undefined;
      if (
        cache.nextOffset === position.nextOffset &&
        cache.revision === position.revision &&
        cache.rules === rules
      ) {
        return cache;
      }
      // Another replica owned the partition meanwhile (its windows moved on without us), a
      // no-data sweep reset a window, or the rules changed (a replica that knew first may have
      // written windows of theirs).
      caches.delete(partition);
      return undefined;
    },

    drop(partition: number): void {
      caches.delete(partition);
    },

    clear(): void {
      caches.clear();
    },

    /** Keeps the committed work as the partition's cache, most recently used hosts last. */
    keepCommitted(partition: number, cache: PartitionCache | undefined, batch: CommittedBatch) {
      const { nextOffset, revision, rules, work } = batch;
      cache ??= { nextOffset, revision, rules, hosts: new Map(), seenWrittenMs: new Map() };
      cache.nextOffset = nextOffset;
      // Bounded like the hosts: forgetting only means the next batch writes again.
      if (cache.seenWrittenMs.size > 4 * maxHosts) cache.seenWrittenMs.clear();
      for (const key of work.seen.keys()) cache.seenWrittenMs.set(key, batch.seenAtMs);
      for (const key of batch.reset) {
        work.hosts.get(hostKey(key.orgId, key.host))?.windows.delete(key.ruleId);
      }
      for (const [key, host] of work.hosts) {
        cache.hosts.delete(key);
        cache.hosts.set(key, host);
      }
      for (const key of cache.hosts.keys()) {
        if (cache.hosts.size <= maxHosts) break;
        cache.hosts.delete(key);
      }
      caches.set(partition, cache);
    },
  };
}

/**
 * Whether a watched metric's last-seen time (by org, host and metric) was written recently
 * enough, at `nowMs`, that a batch need not note it again.
 */
export function seenFreshness(
  cache: PartitionCache | undefined,
  nowMs: number,
  refreshMs: number,
): (key: string) => boolean {
  return (key) => {
    const writtenMs = cache?.seenWrittenMs.get(key);
    return writtenMs !== undefined && nowMs - writtenMs < refreshMs;
  };
}

/** The batch's watched metrics whose last-seen time is due a write; the others leave `work.seen`. */
export function seenToWrite(
  work: BatchWork,
  cache: PartitionCache | undefined,
  nowMs: number,
  refreshMs: number,
): SeenMetric[] {
  const due: SeenMetric[] = [];
  for (const [key, seen] of work.seen) {
    const writtenMs = cache?.seenWrittenMs.get(key);
    if (writtenMs === undefined || nowMs - writtenMs >= refreshMs) due.push(seen);
    else work.seen.delete(key);
  }
  return due;
}
