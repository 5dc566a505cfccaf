/**
 * The writer's memory of series ids: per service, series key (`seriesKey`: the metric, and its
 * labels when it has its own) → `series.id`, at most about
 * `maxEntries` ids in all. A cardinality explosion then costs lookups in the database, never
 * memory without bound.
 *
 * Only ids of committed series belong here (a series created by a transaction that rolled back
 * does not exist). Each service's ids are cached under its `series_generation`: deleting a series
 * moves it, and ids cached under an older generation are never returned again.
 */
export type SeriesCache = {
  /**
   * The cached ids of the service's series (series key → id) under this generation, undefined
   * when none are; the service counts as just used. Read the map before the next `add`.
   */
  idsOf(serviceId: string, generation: number): ReadonlyMap<string, number> | undefined;
  /** Caches the id of a committed series. */
  add(serviceId: string, generation: number, key: string, id: number): void;
  /** Ids cached, over every service. */
  readonly size: number;
};

/**
 * Ids kept by default. Measured with 20-character metric names over 5,000 services: 49 bytes an
 * id when hosts share metric names (one string each), 94 when every name is distinct; so
 * 200,000 series, 40 metrics on each of 5,000 hosts, take 10 to 19 MB of the writer's 256 MiB.
 */
const defaultSeriesCacheEntries = 200_000;

type ServiceSeries = { generation: number; ids: Map<string, number> };

/**
 * Two generations of services: lookups and additions go to the young one; a service found only
 * in the old one moves to the young one; when the young one holds half the bound, it becomes
 * the old one and the old one is dropped. So a service in use stays, one unused for a whole
 * generation goes, and no lookup pays for recency bookkeeping beyond one Map read (a true LRU
 * reorders its list on every hit, which cost the writer more than the COPY it feeds).
 */
export function createSeriesCache(maxEntries: number = defaultSeriesCacheEntries): SeriesCache {
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 2) {
    throw new RangeError(`maxEntries must be an integer of at least 2, got ${maxEntries}`);
  }
  const generationEntries = Math.floor(maxEntries / 2);
  let young = new Map<string, ServiceSeries>();
  let old = new Map<string, ServiceSeries>();
  let youngSize = 0;
  let oldSize = 0;

  const rotateIfFull = (): void => {
    if (youngSize < generationEntries) return;
    old = young;
    oldSize = youngSize;
    young = new Map();
    youngSize = 0;
  };

  /** The service's entry in the young generation, moved there from the old one if need be. */
  const current = (serviceId: string): ServiceSeries | undefined => {
    const entry = young.get(serviceId);
    if (entry !== undefined) return entry;
    const aged = old.get(serviceId);
    if (aged === undefined) return undefined;
    old.delete(serviceId);
    oldSize -= aged.ids.size;
    young.set(serviceId, aged);
    youngSize += aged.ids.size;
    rotateIfFull();
    return aged;
  };

  return {
    idsOf(serviceId, generation) {
      const entry = current(serviceId);
      return entry?.generation === generation ? entry.ids : undefined;
    },
    add(serviceId, generation, key, id) {
      let entry = current(serviceId);
      if (entry === undefined || entry.generation !== generation) {
        if (entry !== undefined) {
          // Ids of an older generation: their series may be gone.
          if (young.get(serviceId) === entry) youngSize -= entry.ids.size;
          else oldSize -= entry.ids.size;
        }
        entry = { generation, ids: new Map() };
        young.delete(serviceId);
        old.delete(serviceId);
        young.set(serviceId, entry);
      }
      // One service with more series than a generation holds would otherwise grow past it.
      if (entry.ids.size >= generationEntries) {
        if (young.get(serviceId) === entry) youngSize -= entry.ids.size;
        else oldSize -= entry.ids.size;
        entry.ids.clear();
      }
      if (entry.ids.has(key)) {
        entry.ids.set(key, id);
        return;
      }
      entry.ids.set(key, id);
      if (young.get(serviceId) === entry) youngSize++;
      else oldSize++;
      rotateIfFull();
    },
    get size() {
      return youngSize + oldSize;
    },
  };
}
