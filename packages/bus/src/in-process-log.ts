import type { BusMessage } from './bus.js';
import { partitionForKey } from './murmur2.js';

// The in-process bus's storage: topics of partition logs in memory, the consumer groups'
// committed offsets, retention (a record goes once every group consumed it), and the waits of
// publishes acknowledged only after a group consumed them.

export type StoredRecord = {
  offset: number;
  key: string;
  value: Buffer;
  headers: Record<string, string>;
  timestampMs: number;
};

export type PartitionLog = {
  /** `records[first]` is the earliest retained record; offsets are contiguous from there. */
  records: StoredRecord[];
  first: number;
  /** The offset the next record gets. */
  end: number;
  /** Called (and removed) on the next append. */
  appendWaiters: Set<() => void>;
};

export type Topic = {
  name: string;
  partitions: PartitionLog[];
  /** Every group that ever subscribed: retention keeps what any of them has not consumed. */
  groups: Set<string>;
};

type AckWaiter = { offset: number; resolve: () => void; cancelled: boolean };

export type Group = {
  id: string;
  /** Per topic, per partition: the next offset to consume. Kept across subscriptions. */
  committed: Map<string, number[]>;
  active: boolean;
  /** Per `topic\u0000partition`, in offset order: publishes waiting for this group. */
  ackWaiters: Map<string, AckWaiter[]>;
};

export type InProcessLog = ReturnType<typeof createInProcessLog>;

export function createInProcessLog(options: {
  defaultPartitions: number;
  now: () => number;
  resumeOffsets: ReadonlyMap<string, readonly number[]> | undefined;
}) {
  const topics = new Map<string, Topic>();
  const groups = new Map<string, Group>();

  function createTopic(name: string, partitions: number): Topic {
    if (!Number.isInteger(partitions) || partitions < 1) {
      throw new RangeError(`partitions must be a positive integer, got ${partitions}`);
    }
    const resumeAt = options.resumeOffsets?.get(name) ?? [];
    const topic: Topic = {
      name,
      partitions: Array.from({ length: partitions }, (_, partition) => ({
        records: [],
        first: 0,
        end: Math.max(0, resumeAt[partition] ?? 0),
        appendWaiters: new Set(),
      })),
      groups: new Set(),
    };
    topics.set(name, topic);
    return topic;
  }

  function getTopic(name: string): Topic {
    return topics.get(name) ?? createTopic(name, options.defaultPartitions);
  }

  function getGroup(id: string): Group {
    let group = groups.get(id);
    if (group === undefined) {
      group = { id, committed: new Map(), active: false, ackWaiters: new Map() };
      groups.set(id, group);
    }
    return group;
  }

  /** Appends in order; returns, per partition, the highest offset written. */
  function append(topicName: string, messages: BusMessage[]): Map<number, number> {
    const topic = getTopic(topicName);
    const highest = new Map<number, number>();
    const timestampMs = options.now();
    const touched = new Set<PartitionLog>();
    for (const message of messages) {
      const partition = message.partition ?? partitionForKey(message.key, topic.partitions.length);
      const log = topic.partitions[partition];
      if (log === undefined) {
        throw new RangeError(`topic ${topicName} has no partition ${partition}`);
      }
      const offset = log.end;
      log.records.push({
        offset,
        key: message.key,
        value: message.value,
        headers: { ...message.headers },
        timestampMs,
      });
      log.end += 1;
      highest.set(partition, offset);
      touched.add(log);
    }
    for (const log of touched) {
      const waiters = [...log.appendWaiters];
      log.appendWaiters.clear();
      for (const wake of waiters) wake();
    }
    return highest;
  }

  function committedOffsets(group: Group, topic: Topic): number[] {
    let committed = group.committed.get(topic.name);
    if (committed === undefined) {
      committed = [];
      group.committed.set(topic.name, committed);
    }
    return committed;
  }

  function commit(group: Group, topic: Topic, partition: number, next: number): void {
    committedOffsets(group, topic)[partition] = next;
    const key = `${topic.name}\u0000${partition}`;
    const waiters = group.ackWaiters.get(key);
    if (waiters !== undefined) {
      while (waiters.length > 0 && (waiters[0]?.offset ?? Infinity) < next) {
        const waiter = waiters.shift();
        if (waiter !== undefined && !waiter.cancelled) waiter.resolve();
      }
      if (waiters.length === 0) group.ackWaiters.delete(key);
    }
    trim(topic, partition);
  }

  /** Drops records every group of the topic has consumed. */
  function trim(topic: Topic, partition: number): void {
    const log = topic.partitions[partition];
    if (log === undefined || topic.groups.size === 0) return;
    let keepFrom = log.end;
    for (const id of topic.groups) {
      const next = groups.get(id)?.committed.get(topic.name)?.[partition];
      keepFrom = Math.min(keepFrom, next ?? earliestOffset(log));
    }
    const drop = keepFrom - earliestOffset(log);
    if (drop <= 0) return;
    log.first += drop;
    // Compact once more than half is consumed, rather than shifting the array on every commit
    // (the copy is of fewer records than were dropped, so amortized constant). No floor on the
    // count: a record of many hosts is up to ~400 KB, and 1,024 consumed ones stayed reachable.
    if (log.first * 2 > log.records.length) {
      log.records = log.records.slice(log.first);
      log.first = 0;
    }
  }

  /** Resolves once `group` committed past `offset` of the partition; `cancel` forgets it. */
  function waitConsumed(
    group: Group,
    topic: Topic,
    partition: number,
    offset: number,
  ): { done: Promise<void>; cancel: () => void } {
    if ((committedOffsets(group, topic)[partition] ?? 0) > offset) {
      return { done: Promise.resolve(), cancel: () => undefined };
    }
    const key = `${topic.name}\u0000${partition}`;
    let waiters = group.ackWaiters.get(key);
    if (waiters === undefined) {
      waiters = [];
      group.ackWaiters.set(key, waiters);
    }
    const list = waiters;
    let waiter: AckWaiter | undefined;
    const done = new Promise<void>((resolve) => {
      waiter = { offset, resolve, cancelled: false };
      list.push(waiter);
    });
    return {
      done,
      cancel: () => {
        if (waiter === undefined) return;
        waiter.cancelled = true;
        const index = list.indexOf(waiter);
        if (index >= 0) list.splice(index, 1);
      },
    };
  }

  return {
    findTopic: (name: string): Topic | undefined => topics.get(name),
    createTopic,
    getTopic,
    getGroup,
    append,
    committedOffsets,
    commit,
    waitConsumed,
  };
}

/** The offset of the earliest record a partition still keeps. */
export function earliestOffset(log: PartitionLog): number {
  return log.records[log.first]?.offset ?? log.end;
}
