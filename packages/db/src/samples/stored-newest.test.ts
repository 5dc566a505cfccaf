import { describe, expect, it } from 'vitest';
import { createStoredNewest } from './stored-newest.js';

const newest = (pairs: [number, number][]) => ({
  seriesIds: pairs.map(([id]) => id),
  timesMs: pairs.map(([, timeMs]) => timeMs),
});

describe('createStoredNewest', () => {
  it('keeps the largest bound of each series a committed batch gave', () => {
    const stored = createStoredNewest();
    stored.committed(
      newest([
        [1, 10],
        [1, 30],
        [2, 5],
      ]),
      new Map([[0, 3]]),
    );
    stored.committed(newest([[1, 20]]), new Map([[0, 4]]));
    expect(stored.boundOf(1)).toBe(30);
    expect(stored.boundOf(2)).toBe(5);
    expect(stored.boundOf(3)).toBeUndefined();
  });

  it('keeps its bounds while every partition stands where this store left it', () => {
    const stored = createStoredNewest();
    stored.committed(
      newest([[1, 10]]),
      new Map([
        [0, 3],
        [1, 7],
      ]),
    );
    stored.continueFrom(
      new Map([
        [0, 3],
        [2, 100],
      ]),
    );
    expect(stored.boundOf(1)).toBe(10);
  });

  it('forgets every bound once another writer moved a partition it wrote', () => {
    const stored = createStoredNewest();
    stored.committed(newest([[1, 10]]), new Map([[0, 3]]));
    stored.continueFrom(new Map([[0, 5]]));
    expect(stored.boundOf(1)).toBeUndefined();
    // And starts over from what it commits next.
    stored.committed(newest([[1, 12]]), new Map([[0, 6]]));
    stored.continueFrom(new Map([[0, 6]]));
    expect(stored.boundOf(1)).toBe(12);
  });

  it('forgets every bound rather than grow past its limit', () => {
    // One page of series ids allowed: 4,096.
    const stored = createStoredNewest(4096);
    stored.committed(
      newest([
        [1, 10],
        [2, 10],
      ]),
      new Map(),
    );
    stored.committed(newest([[5000, 10]]), new Map());
    expect(stored.boundOf(1)).toBeUndefined();
    expect(stored.boundOf(5000)).toBe(10);
  });
});
