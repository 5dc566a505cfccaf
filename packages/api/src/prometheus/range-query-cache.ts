import type {
  Labels,
  Matrix,
  PromqlEngine,
  QueryOptions,
  QueryValue,
  RangeReads,
  Series,
} from '@monitor/promql';
import { compareLabels, labelsKey, splittableRangeReads } from '@monitor/promql';

/**
 * The settled steps of one range query shape (organization, query, step and the step's phase):
 * a contiguous run of steps, every step at least the settled horizon old when computed, and the
 * database snapshot its late-write check was read in.
 */
export type CachedSteps = {
  firstStepMs: number;
  lastStepMs: number;
  /** `pg_current_snapshot()` as text; '' for a query that reads no samples. */
  snapshot: string;
  /** By label set, as the engine orders a matrix; every series has a point in the run. */
  series: Matrix;
  /** About what the entry holds in memory. */
  bytes: number;
  storedAtMs: number;
};

/**
 * The longest an entry answers after it was stored: a bound on what the database's record of
 * late writes must keep (a day: run-maintenance.ts), and on an answer that outlived its data
 * (samples past retention, a deleted service).
 */
const maxEntryAgeMs = 3_600_000;

/** Where entries live: in this process, or shared by the api replicas. */
export type CachedStepsStore = {
  get(key: string): Promise<CachedSteps | undefined>;
  set(key: string, entry: CachedSteps): Promise<void>;
  delete(key: string): Promise<void>;
};

/**
 * Samples written late: the database's snapshot now, and the transaction ids of every write of
 * samples that were already old when written, of `orgId`, within [fromMs, toMs] (by the hour).
 */
export type LateSampleWrites = {
  read(orgId: string, fromMs: number, toMs: number): Promise<{ snapshot: string; xids: string[] }>;
};

export type RangeQueryCacheOptions = {
  store: CachedStepsStore;
  lateWrites: LateSampleWrites;
  /** Steps newer than this are always computed (PROMQL_CACHE_SETTLED_MS). */
  settledMs: number;
  lookbackDeltaMs: number;
  /** The engine's most points per series: the most steps one entry keeps (the oldest go first). */
  maxSteps: number;
  nowMs: () => number;
  /** Each cacheable range query: answered partly from the cache, or not at all. */
  onLookup?: (result: 'hit' | 'miss') => void;
};

export type RangeQueryCache = {
  rangeQuery(
    orgId: string,
    engine: PromqlEngine,
    query: string,
    startMs: number,
    endMs: number,
    stepMs: number,
    queryOptions?: QueryOptions,
  ): Promise<QueryValue>;
};

/**
 * Range queries answered from the steps a query of the same shape computed before, computing
 * only the steps around them: a dashboard that asks again every 15 s computes its newest steps.
 * A step is kept once it is PROMQL_CACHE_SETTLED_MS old; a late sample (recorded by the writer)
 * in what an entry read drops the entry before it answers. Queries whose steps depend on the
 * range (`@`, negative offsets) are not cached.
 */
export function createRangeQueryCache(options: RangeQueryCacheOptions): RangeQueryCache {
  const { lateWrites, settledMs, lookbackDeltaMs, maxSteps, nowMs } = options;
  // A store that fails (Redis away) costs the answer nothing: a miss, and nothing kept.
  const store: CachedStepsStore = {
    get: (key) => options.store.get(key).catch(() => undefined),
    set: (key, entry) => options.store.set(key, entry).catch(() => undefined),
    delete: (key) => options.store.delete(key).catch(() => undefined),
  };
  const readsOf = new Map<string, RangeReads | null>();
  const rangeReads = (query: string): RangeReads | null => {
    let reads = readsOf.get(query);
    if (reads === undefined) {
      reads = splittableRangeReads(query, lookbackDeltaMs) ?? null;
      // Bounded: dashboards ask a few hundred queries; a flood of distinct ones starts over.
      if (readsOf.size >= 10_000) readsOf.clear();
      readsOf.set(query, reads);
    }
    return reads;
  };

  return {
    async rangeQuery(orgId, engine, query, startMs, endMs, stepMs, queryOptions = {}) {
      const computeWhole = () =>
        engine.rangeQuery(query, startMs, endMs, stepMs, undefined, queryOptions);
      // What the engine refuses it refuses whole, before any piece of it is looked up.
      const answerable = stepMs > 0 && endMs >= startMs && (endMs - startMs) / stepMs <= maxSteps;
      const reads = answerable ? rangeReads(query) : null;
      if (reads === null) return computeWhole();
      // Only answers from raw samples are kept: one that reaches past them, where a tier holds
      // something, reads the tier (the engine's choice, see QueryOptions.tiers).
      const { tiers } = queryOptions;
      if (tiers !== undefined) {
        const read = reads(startMs, endMs) ?? { startMs: -Infinity, endMs: Infinity };
        const readsTier =
          read.startMs < tiers.rawFromMs && tiers.tiers.some((tier) => tier.fromMs < read.endMs);
        if (readsTier) return computeWhole();
      }
      const lastStepMs = startMs + Math.floor((endMs - startMs) / stepMs) * stepMs;
      const horizonMs = nowMs() - settledMs;
      const settledLastMs =
        horizonMs < startMs
          ? undefined
          : Math.min(lastStepMs, startMs + Math.floor((horizonMs - startMs) / stepMs) * stepMs);
      const phaseMs = ((startMs % stepMs) + stepMs) % stepMs;
      const key = JSON.stringify([orgId, stepMs, phaseMs, query]);

      let cached = await store.get(key);
      if (cached !== undefined && nowMs() - cached.storedAtMs > maxEntryAgeMs) {
        cached = undefined;
        await store.delete(key);
      }
      const fromMs = Math.min(cached?.firstStepMs ?? startMs, startMs);
      const toMs = Math.max(cached?.lastStepMs ?? startMs, settledLastMs ?? startMs);
      const window = reads(fromMs, toMs);
      // Read before anything is computed: what this answer computes sees at least this snapshot.
      let late: { snapshot: string; xids: string[] } = { snapshot: '', xids: [] };
      if (window !== null) {
        try {
          late = await lateWrites.read(orgId, window.startMs, window.endMs);
        } catch {
          // Not migrated yet, or the database is away: computed whole, and the engine says
          // what is wrong, if anything.
          options.onLookup?.('miss');
          return computeWhole();
        }
      }
      if (cached !== undefined && !isCurrent(cached, late.xids)) {
        cached = undefined;
        await store.delete(key);
      }
      const used =
        cached !== undefined && cached.lastStepMs >= startMs && cached.firstStepMs <= lastStepMs
          ? {
              firstMs: Math.max(cached.firstStepMs, startMs),
              lastMs: Math.min(cached.lastStepMs, lastStepMs),
            }
          : undefined;
      options.onLookup?.(used === undefined ? 'miss' : 'hit');

      const parts: Matrix[] = [];
      const compute = async (fromStepMs: number, toStepMs: number): Promise<void> => {
        if (fromStepMs > toStepMs) return;
        const value = await engine.rangeQuery(query, fromStepMs, toStepMs, stepMs);
        if (value.resultType !== 'matrix') throw new TypeError('a range query answers a matrix');
        parts.push(value.result);
      };
      if (used === undefined || cached === undefined) {
        await compute(startMs, lastStepMs);
      } else {
        await compute(startMs, used.firstMs - stepMs);
        parts.push(stepsWithin(cached.series, used.firstMs, used.lastMs));
        await compute(used.lastMs + stepMs, lastStepMs);
      }
      const answer = joinSteps(parts);

      // Native histograms are not kept (the store keeps floats): such answers are computed.
      if (settledLastMs !== undefined && !holdsHistograms(answer)) {
        const settled = stepsWithin(answer, startMs, settledLastMs);
        // Kept beside what was cached when the two touch; otherwise the newer run replaces it.
        const joins =
          cached !== undefined &&
          cached.firstStepMs <= settledLastMs + stepMs &&
          cached.lastStepMs >= startMs - stepMs;
        let firstStepMs = startMs;
        let lastStepMs = settledLastMs;
        let series = settled;
        if (joins && cached !== undefined) {
          series = joinSteps([
            stepsWithin(cached.series, cached.firstStepMs, startMs - stepMs),
            settled,
            stepsWithin(cached.series, settledLastMs + stepMs, cached.lastStepMs),
          ]);
          firstStepMs = Math.min(cached.firstStepMs, startMs);
          lastStepMs = Math.max(cached.lastStepMs, settledLastMs);
        }
        const oldestKeptMs = lastStepMs - (maxSteps - 1) * stepMs;
        if (firstStepMs < oldestKeptMs) {
          series = stepsWithin(series, oldestKeptMs, lastStepMs);
          firstStepMs = oldestKeptMs;
        }
        await store.set(key, {
          firstStepMs,
          lastStepMs,
          snapshot: late.snapshot,
          series,
          bytes: bytesOf(series),
          storedAtMs: nowMs(),
        });
      }
      return { resultType: 'matrix', result: answer };
    },
  };
}

function holdsHistograms(matrix: Matrix): boolean {
  return matrix.some((series) => series.points.some((p) => p.h !== undefined));
}

/** Whether every late write in what the entry read was already visible when it was computed. */
function isCurrent(entry: CachedSteps, xids: readonly string[]): boolean {
  if (xids.length === 0) return true;
  const visible = snapshotVisibility(entry.snapshot);
  return xids.every(visible);
}

/**
 * The late writes of several databases (the sample shards) as one: their snapshots side by
 * side (space-separated, in `parts` order) and each transaction id prefixed by its database's
 * index (`1/734`), so `snapshotVisibility` judges each in its own database's snapshot.
 */
export function combineLateWrites(parts: readonly LateSampleWrites[]): LateSampleWrites {
  if (parts.length === 1) return parts[0] as LateSampleWrites;
  return {
    async read(orgId, fromMs, toMs) {
      const read = await Promise.all(parts.map((part) => part.read(orgId, fromMs, toMs)));
      return {
        snapshot: read.map((each) => each.snapshot).join(' '),
        xids: read.flatMap((each, index) => each.xids.map((xid) => `${index}/${xid}`)),
      };
    },
  };
}

/**
 * PostgreSQL's `pg_visible_in_snapshot` for a snapshot as text (`xmin:xmax:xip,…`): a
 * transaction is visible when it committed before the snapshot was taken. Also for snapshots
 * of several databases (`combineLateWrites`); an id of the other form is never visible, so an
 * entry computed under another set of shards is computed again.
 */
export function snapshotVisibility(snapshot: string): (xid: string) => boolean {
  if (!snapshot.includes(' ')) return singleSnapshotVisibility(snapshot);
  const parts = snapshot.split(' ').map(singleSnapshotVisibility);
  return (text) => {
    const slash = text.indexOf('/');
    const part = slash > 0 ? parts[Number(text.slice(0, slash))] : undefined;
    return part !== undefined && part(text.slice(slash + 1));
  };
}

function singleSnapshotVisibility(snapshot: string): (xid: string) => boolean {
  const [xminText, xmaxText, running = ''] = snapshot.split(':');
  if (xminText === undefined || xmaxText === undefined || xminText === '') return () => false;
  const xmin = BigInt(xminText);
  const xmax = BigInt(xmaxText);
  const inProgress = new Set(running === '' ? [] : running.split(',').map(BigInt));
  return (text) => {
    if (!/^\d+$/.test(text)) return false;
    const xid = BigInt(text);
    return xid < xmin || (xid < xmax && !inProgress.has(xid));
  };
}

/** The points of each series within [fromMs, toMs], series left without one dropped. */
function stepsWithin(matrix: Matrix, fromMs: number, toMs: number): Matrix {
  const out: Series[] = [];
  if (fromMs > toMs) return out;
  for (const { metric, points } of matrix) {
    let first = 0;
    while (first < points.length && points[first]!.t < fromMs) first++;
    let end = first;
    while (end < points.length && points[end]!.t <= toMs) end++;
    if (end > first) out.push({ metric, points: points.slice(first, end) });
  }
  return out;
}

/** Matrices of successive step runs as one, in the engine's order of series. */
function joinSteps(parts: readonly Matrix[]): Matrix {
  const nonEmpty = parts.filter((part) => part.length > 0);
  if (nonEmpty.length === 1) return nonEmpty[0]!;
  const byLabels = new Map<string, { metric: Labels; points: Series['points'] }>();
  for (const part of nonEmpty) {
    for (const { metric, points } of part) {
      const key = labelsKey(metric);
      const joined = byLabels.get(key);
      if (joined === undefined) byLabels.set(key, { metric, points: [...points] });
      else for (const point of points) joined.points.push(point);
    }
  }
  return [...byLabels.values()].sort((a, b) => compareLabels(a.metric, b.metric));
}

/** About the heap an entry takes: a point object is some 40 bytes, a label's text 2 per char. */
function bytesOf(matrix: Matrix): number {
  let bytes = 200;
  for (const { metric, points } of matrix) {
    bytes += 100 + points.length * 40;
    for (const { name, value } of metric) bytes += 50 + 2 * (name.length + value.length);
  }
  return bytes;
}

/**
 * Entries in this process, the least recently used dropped first past `maxBytes`. `bytes()`
 * says what it holds.
 */
export function createInProcessStepsStore(maxBytes: number): CachedStepsStore & {
  bytes(): number;
} {
  const entries = new Map<string, CachedSteps>();
  let held = 0;
  const remove = (key: string): void => {
    const entry = entries.get(key);
    if (entry === undefined) return;
    entries.delete(key);
    held -= entry.bytes;
  };
  return {
    get(key) {
      const entry = entries.get(key);
      if (entry !== undefined) {
        // Most recently used last: Map keeps insertion order.
        entries.delete(key);
        entries.set(key, entry);
      }
      return Promise.resolve(entry);
    },
    set(key, entry) {
      remove(key);
      if (entry.bytes <= maxBytes) {
        entries.set(key, entry);
        held += entry.bytes;
        for (const oldest of entries.keys()) {
          if (held <= maxBytes) break;
          remove(oldest);
        }
      }
      return Promise.resolve();
    },
    delete(key) {
      remove(key);
      return Promise.resolve();
    },
    bytes: () => held,
  };
}
