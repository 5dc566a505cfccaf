/** At most `count` holders at a time; the others wait for a release, first come first served. */
export function createConcurrencySlots(count: number) {
  let free = count;
  const waiting: (() => void)[] = [];
  return {
    /** Resolves once the caller holds a slot. */
    async acquire(): Promise<void> {
      if (free > 0) {
        free -= 1;
        return;
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    },
    /** Hands the slot to the longest waiter, or frees it. */
    release(): void {
      const next = waiting.shift();
      if (next !== undefined) next();
      else free += 1;
    },
  };
}
