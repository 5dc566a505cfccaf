/**
 * Gathers items from concurrent callers (one per Kafka partition batch) into one flush of up to
 * `maxItems`, or whatever arrived within `maxWaitMs` of the first item (0: within the same turn
 * of the event loop). Each caller's promise
 * settles with the flush that carried its items, so offsets are resolved only after the write.
 */
export type BatchAccumulator<T> = {
  add(items: readonly T[]): Promise<void>;
  /** Flushes what is pending now. */
  drain(): Promise<void>;
};

type Waiter = { resolve: () => void; reject: (err: unknown) => void };

export function createBatchAccumulator<T>(options: {
  maxItems: number;
  maxWaitMs: number;
  flush: (items: T[]) => Promise<void>;
}): BatchAccumulator<T> {
  let pending: T[] = [];
  let waiters: Waiter[] = [];
  /** Cancels the pending flush's timer; set while one is scheduled. */
  let cancelTimer: (() => void) | undefined;
  // Flushes run one at a time, in order, so a later batch never overtakes an earlier one.
  let chain: Promise<void> = Promise.resolve();

  function flushNow(): Promise<void> {
    cancelTimer?.();
    cancelTimer = undefined;
    if (pending.length === 0) return chain;
    const items = pending;
    const batchWaiters = waiters;
    pending = [];
    waiters = [];
    chain = chain.then(async () => {
      try {
        await options.flush(items);
        for (const waiter of batchWaiters) waiter.resolve();
      } catch (err) {
        for (const waiter of batchWaiters) waiter.reject(err);
      }
    });
    return chain;
  }

  return {
    add(items) {
      if (items.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        pending.push(...items);
        waiters.push({ resolve, reject });
        if (pending.length >= options.maxItems) void flushNow();
        else if (cancelTimer === undefined) {
          // 0: no wait beyond this turn of the event loop (a timer waits at least 1 ms).
          if (options.maxWaitMs === 0) {
            const immediate = setImmediate(() => void flushNow());
            cancelTimer = () => clearImmediate(immediate);
          } else {
            const timeout = setTimeout(() => void flushNow(), options.maxWaitMs);
            cancelTimer = () => clearTimeout(timeout);
          }
        }
      });
    },
    drain: flushNow,
  };
}
