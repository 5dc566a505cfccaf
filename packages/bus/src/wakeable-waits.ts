import type { PartitionLog } from './in-process-log.js';

/** Waits that end early on `wakeAll` (a subscription stopping): sleeps and waits for an append. */
export function createWakeableWaits() {
  /** Woken (and removed) by `wakeAll`. */
  const wakers = new Set<() => void>();
  return {
    sleep(ms: number): Promise<void> {
      return new Promise((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          wakers.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        wakers.add(done);
      });
    },
    /** Resolves on the partition's next append. */
    waitForAppend(partitionLog: PartitionLog): Promise<void> {
      return new Promise((resolve) => {
        const done = (): void => {
          partitionLog.appendWaiters.delete(done);
          wakers.delete(done);
          resolve();
        };
        partitionLog.appendWaiters.add(done);
        wakers.add(done);
      });
    },
    wakeAll(): void {
      for (const wake of [...wakers]) wake();
    },
  };
}
