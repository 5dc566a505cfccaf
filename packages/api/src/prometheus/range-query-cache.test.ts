import type { MemorySeries, QueryValue, SourceTiers } from '@monitor/promql';
import { createMemorySeriesSource, createPromqlEngine } from '@monitor/promql';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LateSampleWrites } from './range-query-cache.js';
import {
  createInProcessStepsStore,
  createRangeQueryCache,
  combineLateWrites,
  snapshotVisibility,
} from './range-query-cache.js';

const hourMs = 3_600_000;
const settledMs = 600_000;

/** Two regions' counters and gauges, every 15 s with jitter, over 4 hours; one counter resets. */
function fleet(): MemorySeries[] {
  const series: MemorySeries[] = [];
  for (const region of ['eu', 'us']) {
    for (const host of ['a', 'b']) {
      const counter: [number, number][] = [];
      const gauge: [number, number][] = [];
      let total = 0;
      for (let t = 0; t < 4 * hourMs; t += 15_000) {
        const jitter = ((t / 15_000) * 7919) % 900;
        total = t === 2 * hourMs && host === 'a' ? 0 : total + ((t / 1000) % 37);
        counter.push([t + jitter, total]);
        gauge.push([t + jitter, Math.sin(t / 600_000) * 100 + host.length]);
      }
      const labels = { region, instance: `${region}-${host}:9100`, job: 'node' };
      series.push({ labels: { __name__: 'requests_total', ...labels }, samples: counter });
      series.push({ labels: { __name__: 'load', ...labels }, samples: gauge });
    }
  }
  return series;
}

/**
 * The database's record of late writes, kept beside the samples: each write is a transaction id,
 * visible to the snapshots taken after it.
 */
function lateWritesOf(series: MemorySeries[]) {
  let nextXid = 100;
  const writes: { hourMs: number; xid: number }[] = [];
  const lateWrites: LateSampleWrites = {
    read: (_orgId, fromMs, toMs) =>
      Promise.resolve({
        snapshot: `${nextXid}:${nextXid}:`,
        xids: writes
          .filter((w) => w.hourMs + hourMs > fromMs && w.hourMs <= toMs)
          .map((w) => String(w.xid)),
      }),
  };
  const writeLate = (index: number, timeMs: number, value: number): void => {
    const samples = series[index % series.length]!.samples;
    if (samples.some(([t]) => t === timeMs)) return;
    samples.push([timeMs, value]);
    samples.sort((a, b) => a[0] - b[0]);
    writes.push({ hourMs: Math.floor(timeMs / hourMs) * hourMs, xid: nextXid++ });
  };
  return { lateWrites, writeLate };
}

function setup(maxBytes = 64 * 1024 * 1024) {
  const series = fleet();
  const { lateWrites, writeLate } = lateWritesOf(series);
  let now = 4 * hourMs;
  const lookups: string[] = [];
  const engine = createPromqlEngine({
    source: createMemorySeriesSource(series),
    lookbackDeltaMs: 300_000,
    maxSamples: 50_000_000,
    timeoutMs: 30_000,
    maxSeries: 100_000,
    maxPointsPerSeries: 11_000,
  });
  const store = createInProcessStepsStore(maxBytes);
  const cache = createRangeQueryCache({
    store,
    lateWrites,
    settledMs,
    lookbackDeltaMs: 300_000,
    maxSteps: 11_000,
    nowMs: () => now,
    onLookup: (result) => lookups.push(result),
  });
  return {
    engine,
    store,
    lookups,
    writeLate,
    setNow: (ms: number) => (now = ms),
    cached: (query: string, startMs: number, endMs: number, stepMs: number) =>
      cache.rangeQuery('org-1', engine, query, startMs, endMs, stepMs),
    withTiers: (query: string, startMs: number, endMs: number, tiers: SourceTiers) =>
      cache.rangeQuery('org-1', engine, query, startMs, endMs, 60_000, { tiers }),
  };
}

const queries = [
  'sum by (region) (rate(requests_total[1m]))',
  'load',
  'max_over_time(load[5m] offset 5m)',
  'sum(increase(requests_total[10m])) / count(load)',
  'max_over_time(deriv(load[5m])[20m:1m])',
  'time() - timestamp(load)',
  'vector(1)',
];

describe('createRangeQueryCache', () => {
  it('computes whole, never kept, what reaches back to where a tier is read', async () => {
    const { withTiers, lookups } = setup();
    // Raw samples kept from the second hour on.
    const holding: SourceTiers = { rawFromMs: hourMs, tiers: [{ widthMs: 300_000, fromMs: 0 }] };
    const empty: SourceTiers = { rawFromMs: hourMs, tiers: [] };
    for (let i = 0; i < 2; i++) {
      const value = await withTiers('load', 30 * 60_000, 3 * hourMs, holding);
      expect(value.warnings).toContainEqual(expect.stringMatching(/^read from 5m rollups/));
    }
    expect(lookups).toEqual([]);
    // No tier holds anything there: raw samples, cached as ever.
    for (let i = 0; i < 2; i++) await withTiers('load', 30 * 60_000, 3 * hourMs, empty);
    expect(lookups).toEqual(['miss', 'hit']);
    // Within the raw samples: cached.
    await withTiers('load', 2 * hourMs, 3 * hourMs, holding);
    expect(lookups.at(-1)).toBe('hit');
  });

  it('answers every range query as the engine does alone, late samples included', async () => {
    // Dashboard-like: windows on a 10-minute grid, so that requests overlap; the clock moves on;
    // late samples on the 15-s grid, where the steps read them.
    const request = fc.record({
      startMs: fc.integer({ min: 0, max: 24 }).map((n) => n * 600_000),
      lengthMs: fc.constantFrom(0, 1_800_000, hourMs, 2 * hourMs),
      elapsedMs: fc.integer({ min: 0, max: 1_200_000 }),
      late: fc.option(
        fc.record({
          series: fc.nat(),
          timeMs: fc.integer({ min: 0, max: 960 }).map((n) => n * 15_000),
          value: fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        }),
      ),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...queries),
        fc.constantFrom(15_000, 60_000, 45_000),
        fc.array(request, { minLength: 1, maxLength: 16 }),
        async (query, stepMs, requests) => {
          const { engine, cached, writeLate, setNow } = setup();
          let nowMs = 2 * hourMs;
          for (const { startMs, lengthMs, elapsedMs, late } of requests) {
            if (late !== null) writeLate(late.series, late.timeMs, late.value);
            nowMs += elapsedMs;
            setNow(nowMs);
            const endMs = startMs + lengthMs;
            const expected: QueryValue = await engine.rangeQuery(query, startMs, endMs, stepMs);
            expect(await cached(query, startMs, endMs, stepMs)).toEqual(expected);
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('computes only what is newer than its settled steps on a refresh', async () => {
    const { cached, lookups, engine, setNow } = setup();
    const query = 'sum by (region) (rate(requests_total[1m]))';
    setNow(3 * hourMs);
    await cached(query, 2 * hourMs, 3 * hourMs, 15_000);
    setNow(3 * hourMs + 15_000);
    const refreshed = await cached(query, 2 * hourMs + 15_000, 3 * hourMs + 15_000, 15_000);
    expect(lookups).toEqual(['miss', 'hit']);
    expect(refreshed).toEqual(
      await engine.rangeQuery(query, 2 * hourMs + 15_000, 3 * hourMs + 15_000, 15_000),
    );
  });

  it('drops an entry when a sample arrives late within what it read', async () => {
    const { cached, lookups, writeLate, setNow } = setup();
    setNow(4 * hourMs);
    const before = await cached('load', hourMs, 2 * hourMs, 60_000);
    writeLate(1, hourMs + 30 * 60_000, 12_345);
    const after = await cached('load', hourMs, 2 * hourMs, 60_000);
    expect(lookups).toEqual(['miss', 'miss']);
    expect(after).not.toEqual(before);
    expect(JSON.stringify(after)).toContain('12345');
  });

  it('computes whole, and never caches, queries whose steps depend on the range', async () => {
    const { cached, lookups, setNow } = setup();
    setNow(4 * hourMs);
    for (const query of ['load @ end()', 'load offset -5m', 'rate(requests_total[5m] @ 3600)']) {
      await cached(query, hourMs, 2 * hourMs, 60_000);
      await cached(query, hourMs, 2 * hourMs, 60_000);
    }
    expect(lookups).toEqual([]);
  });
});

describe('createInProcessStepsStore', () => {
  it('drops the least recently used entries past its bytes', async () => {
    const store = createInProcessStepsStore(250);
    const entry = (bytes: number) => ({
      firstStepMs: 0,
      lastStepMs: 0,
      snapshot: '',
      series: [],
      bytes,
      storedAtMs: 0,
    });
    await store.set('a', entry(100));
    await store.set('b', entry(100));
    await store.get('a');
    await store.set('c', entry(100));
    expect(await store.get('b')).toBeUndefined();
    expect(await store.get('a')).toBeDefined();
    expect(store.bytes()).toBe(200);
    await store.set('d', entry(300));
    expect(await store.get('d')).toBeUndefined();
  });
});

describe('snapshotVisibility', () => {
  it('sees what committed before the snapshot, not what ran or came after', () => {
    const visible = snapshotVisibility('10:20:12,15');
    expect(['9', '10', '11', '12', '13', '15', '19', '20', '21'].map(visible)).toEqual([
      true,
      true,
      true,
      false,
      true,
      false,
      true,
      false,
      false,
    ]);
  });
});

describe('combineLateWrites', () => {
  it("judges each database's writes in its own snapshot", async () => {
    const combined = combineLateWrites([
      { read: () => Promise.resolve({ snapshot: '10:20:12', xids: ['9', '12'] }) },
      { read: () => Promise.resolve({ snapshot: '100:200:', xids: ['150', '250'] }) },
    ]);
    const late = await combined.read('org', 0, 1);
    expect(late.xids).toEqual(['0/9', '0/12', '1/150', '1/250']);
    const visible = snapshotVisibility(late.snapshot);
    // 12 ran in the first database, 250 came after the second one's snapshot; id 150 means
    // something else in the first database (not visible there: after its xmax).
    expect(late.xids.map(visible)).toEqual([true, false, true, false]);
    expect(['0/150', '2/1', '150', '/1'].map(visible)).toEqual([false, false, false, false]);
    // An entry of one database never counts another set's ids as seen.
    expect(snapshotVisibility('10:20:')('0/9')).toBe(false);
  });
});
