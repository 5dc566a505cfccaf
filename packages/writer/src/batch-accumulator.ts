/**
 * Gathers items from concurrent callers (one per Kafka partition batch) into one flush of up to
 * `maxItems`, or whatever arrived within `maxWaitMs` of the first item. Each caller's promise
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
  let timer: NodeJS.Timeout | undefined;
  // Flushes run one at a time, in order, so a later batch never overtakes an earlier one.
  let chain: Promise<void> = Promise.resolve();

  function flushNow(): Promise<void> {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
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
        else timer ??= setTimeout(() => void flushNow(), options.maxWaitMs);
      });
    },
    drain: flushNow,
  };
}
