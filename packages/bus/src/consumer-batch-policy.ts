import type { ConsumedRecord } from './bus.js';

/** What a consumer's failure calls for, as the consumer itself judges it. */
export type FailureHandling =
  /** Transient (a connection lost): wait, then try the same work again here. */
  | 'retry'
  /**
   * Says nothing about the records (shutting down, the partition moved): thrown out of the
   * policy, so that the bus delivers the batch again as it is.
   */
  | 'redeliver'
  /** Fails for good because of some record in the work: halve the work to find it. */
  | 'isolate';

/**
 * What a consumer plugs into the policy. An item is what it processes: a record, or one of the
 * parts a record carries (a host of a many-host record); the items of one record are
 * consecutive, and the record is the unit halved, retried, set aside and committed past.
 */
export type ConsumerBatchPorts<T> = {
  /** The record `item` belongs to: the same object for every item of one record. */
  recordOf: (item: T) => ConsumedRecord;
  /** Processes `items` all or nothing, committing past their records with them. */
  process: (items: readonly T[]) => Promise<void>;
  /**
   * The items to take one by one once the whole of one record (its `items`) keeps failing: its
   * parts, or the record alone. At least one; a single one is set aside without another try.
   */
  splitRecord: (items: readonly T[]) => readonly T[];
  /** Processes one item of a split record alone, without committing past its record. Idempotent. */
  processAlone: (item: T) => Promise<void>;
  /** Sets aside an item that fails for good: dead-letters, counts and logs it. Throws to redeliver. */
  setAside: (item: T, err: Error) => Promise<void>;
  /** Commits past `record` alone, once its items were each processed or set aside. */
  commitPast: (record: ConsumedRecord) => Promise<void>;
  /** What `err`, thrown by one of the ports above, calls for. */
  handlingOf: (err: unknown) => FailureHandling;
  /**
   * Called before each wait of a transient failure's retry (for a metric, a log line); `attempt`
   * counts the failures of this work in a row, from 1.
   */
  onRetry?: (err: unknown, retryInMs: number, attempt: number) => void;
  /** Default: setTimeout. */
  sleep?: (ms: number) => Promise<void>;
};

export type ConsumerBatchPolicyOptions = {
  /**
   * Attempts at a record that fails for good on its own, and then at each of its split items,
   * before it is set aside. 1: set aside on the first permanent failure.
   */
  attemptsBeforeSetAside: number;
  /** The wait before attempt `attempt` (2, 3, …) at such a record or item. Default none. */
  reattemptDelayMs?: (attempt: number) => number;
  /** The first wait before a transient failure is retried, doubled per retry. Default 200 ms. */
  retryInitialMs?: number;
  /** The ceiling of that wait. Default 10 s. */
  retryMaxMs?: number;
};

export type ConsumerBatchPolicy<T> = {
  /**
   * Processes `items` (the items of consecutive records, each partition's in order): resolves
   * once each record was processed, or set aside and committed past. A permanent failure halves
   * the work by record until the record that causes it is alone; that record is attempted
   * again, then split and its items processed alone, so that only the items that keep failing
   * are set aside and every other item is processed once, in order. Transient failures are retried in place; a failure
   * to redeliver is thrown, with every record before it processed and nothing after it.
   */
  handle(items: readonly T[]): Promise<void>;
  /**
   * Runs `work` (a commit of offsets alone, say), retrying transient failures; throws any
   * other failure, a permanent one included (nothing is lost: the batch is redelivered).
   */
  retrying(work: () => Promise<void>): Promise<void>;
};

const defaultRetryInitialMs = 200;
const defaultRetryMaxMs = 10_000;

/**
 * The consumer-batch policy of the writer and the evaluator: one poison record never holds back
 * the partition behind it, and no record is skipped unless it was set aside (dead-lettered,
 * counted and logged by `setAside`).
 */
export function createConsumerBatchPolicy<T>(
  ports: ConsumerBatchPorts<T>,
  options: ConsumerBatchPolicyOptions,
): ConsumerBatchPolicy<T> {
  const sleep = ports.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const retryInitialMs = options.retryInitialMs ?? defaultRetryInitialMs;
  const retryMaxMs = options.retryMaxMs ?? defaultRetryMaxMs;

  /**
   * Runs `work` until it succeeds (undefined) or fails for good (that error), retrying
   * transient failures; throws a failure to redeliver.
   */
  async function settle(work: () => Promise<void>): Promise<Error | undefined> {
    let retryInMs = retryInitialMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await work();
        return undefined;
      } catch (err) {
        const handling = ports.handlingOf(err);
        if (handling === 'redeliver') throw err;
        if (handling === 'isolate') return err instanceof Error ? err : new Error(String(err));
        ports.onRetry?.(err, retryInMs, attempt);
        await sleep(retryInMs);
        retryInMs = Math.min(retryInMs * 2, retryMaxMs);
      }
    }
  }

  /**
   * Attempts `work` up to `attemptsBeforeSetAside` times (a `failed` attempt already made
   * counting as the first); resolves with the last permanent error, or undefined once it worked.
   */
  async function attempting(work: () => Promise<void>, failed?: Error): Promise<Error | undefined> {
    let err = failed;
    const first = failed === undefined ? 1 : 2;
    for (let attempt = first; attempt <= options.attemptsBeforeSetAside; attempt++) {
      if (attempt > 1) await sleep(options.reattemptDelayMs?.(attempt) ?? 0);
      err = await settle(work);
      if (err === undefined) return undefined;
    }
    return err;
  }

  async function handle(items: readonly T[]): Promise<void> {
    const err = await settle(() => ports.process(items));
    if (err === undefined) return;
    const records = byRecord(items, ports.recordOf);
    if (records.length > 1) {
      const middle = Math.ceil(records.length / 2);
      await handle(records.slice(0, middle).flat());
      await handle(records.slice(middle).flat());
      return;
    }
    const [record] = records;
    if (record !== undefined) await retryOrSetAside(record, err);
  }

  /** One record that failed for good: again, then item by item; set aside what keeps failing. */
  async function retryOrSetAside(items: readonly T[], failed: Error): Promise<void> {
    const err = await attempting(() => ports.process(items), failed);
    if (err === undefined) return;
    const first = items[0] as T;
    const alone = ports.splitRecord(items);
    if (alone.length <= 1) {
      await ports.setAside(alone[0] ?? first, err);
    } else {
      for (const item of alone) {
        const itemErr = await attempting(() => ports.processAlone(item));
        if (itemErr !== undefined) await ports.setAside(item, itemErr);
      }
    }
    // Without it a replay would find the record again and set aside the same items again.
    await retrying(() => ports.commitPast(ports.recordOf(first)));
  }

  async function retrying(work: () => Promise<void>): Promise<void> {
    const err = await settle(work);
    // Work such as an offset commit alone fails for good only when storage itself is broken:
    // nothing is lost by having the batch redelivered.
    if (err !== undefined) throw err;
  }

  return { handle, retrying };
}

/** `items` grouped by record, in order (a record's items are consecutive). */
function byRecord<T>(items: readonly T[], recordOf: (item: T) => ConsumedRecord): T[][] {
  const groups: T[][] = [];
  let last: ConsumedRecord | undefined;
  for (const item of items) {
    const record = recordOf(item);
    if (record !== last || groups.length === 0) {
      groups.push([]);
      last = record;
    }
    groups[groups.length - 1]?.push(item);
  }
  return groups;
}
