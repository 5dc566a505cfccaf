/**
 * The store's memory of each series' newest stored time: a bound at or after it, so that a
 * point later than it goes in without a look at what is stored (sample-dedup.ts).
 *
 * It holds only while this store is the only one writing the series: every series belongs to
 * one partition, so the store remembers the next offset it committed for each partition, and
 * forgets everything once a partition's stored offset is not that one (another writer wrote it
 * between two of this store's batches: a rebalance, or a batch whose commit this store never
 * heard back from). Batches without offsets are taken to come from this store alone.
 */
export type StoredNewest = {
  /**
   * After the batch's offsets were locked: forgets every bound when a partition's stored next
   * offset is not the one this store committed last.
   */
  continueFrom(storedNextOffsets: ReadonlyMap<number, number>): void;
  /** The series' bound, undefined when this store has none. */
  boundOf(seriesId: number): number | undefined;
  /** Once a batch committed: its series' new bounds and its partitions' next offsets. */
  committed(
    newest: { readonly seriesIds: readonly number[]; readonly timesMs: readonly number[] },
    nextOffsets: ReadonlyMap<number, number>,
  ): void;
};

/** Series ids a page holds: consecutive ids, as a batch sorted by series visits them. */
const pageIds = 4096;

/**
 * Bounds of at most about `maxEntries` series (default 1,000,000: 8 MB while ids are dense),
 * all forgotten at once past that: a forgotten series is bounded by the newest time of its
 * partition instead. Kept in pages of consecutive series ids (NaN: none), since a Map's lookup
 * and update for every row cost a fifth of the writer's time per row, and a batch visits its
 * series in id order, so consecutive rows mostly share a page.
 */
export function createStoredNewest(maxEntries = 1_000_000): StoredNewest {
  const maxPages = Math.max(1, Math.ceil(maxEntries / pageIds));
  let pages = new Map<number, Float64Array>();
  let lastPageNumber = Number.NaN;
  let lastPage: Float64Array | undefined;
  const committedOffsets = new Map<number, number>();
  const pageOf = (seriesId: number): Float64Array | undefined => {
    const number = Math.floor(seriesId / pageIds);
    if (number !== lastPageNumber) {
      lastPageNumber = number;
      lastPage = pages.get(number);
    }
    return lastPage;
  };
  const forget = (): void => {
    pages = new Map();
    lastPageNumber = Number.NaN;
    lastPage = undefined;
  };
  return {
    continueFrom(storedNextOffsets) {
      for (const [partition, stored] of storedNextOffsets) {
        const own = committedOffsets.get(partition);
        if (own !== undefined && own !== stored) {
          forget();
          committedOffsets.clear();
          return;
        }
      }
    },
    boundOf(seriesId) {
      const bound = pageOf(seriesId)?.[seriesId % pageIds];
      return bound === undefined || Number.isNaN(bound) ? undefined : bound;
    },
    committed(newest, nextOffsets) {
      const { seriesIds, timesMs } = newest;
      for (let i = 0; i < seriesIds.length; i++) {
        const seriesId = seriesIds[i] as number;
        const timeMs = timesMs[i] as number;
        let page = pageOf(seriesId);
        if (page === undefined) {
          if (pages.size >= maxPages) forget();
          page = new Float64Array(pageIds).fill(Number.NaN);
          pages.set(Math.floor(seriesId / pageIds), page);
          lastPageNumber = Math.floor(seriesId / pageIds);
          lastPage = page;
        }
        const slot = seriesId % pageIds;
        // NaN (none yet) fails the comparison too.
        if (!(timeMs <= (page[slot] as number))) page[slot] = timeMs;
      }
      for (const [partition, next] of nextOffsets) committedOffsets.set(partition, next);
    },
  };
}
