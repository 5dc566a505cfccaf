import { describe, expect, it } from 'vitest';
import { createSeriesCache } from './series-cache.js';

describe('createSeriesCache', () => {
  it('returns the ids cached for the same service under the same generation only', () => {
    const cache = createSeriesCache(10);
    cache.add('svc_a', 0, 'cpu', 1);
    cache.add('svc_a', 0, 'mem', 2);
    expect(cache.idsOf('svc_a', 0)).toEqual(
      new Map([
        ['cpu', 1],
        ['mem', 2],
      ]),
    );
    expect(cache.idsOf('svc_a', 1)).toBeUndefined();
    expect(cache.idsOf('svc_b', 0)).toBeUndefined();
  });

  it('forgets every id of a service once a newer generation is cached', () => {
    const cache = createSeriesCache(10);
    cache.add('svc_a', 0, 'cpu', 1);
    cache.add('svc_a', 0, 'mem', 2);
    cache.add('svc_a', 1, 'cpu', 3);
    expect(cache.idsOf('svc_a', 1)).toEqual(new Map([['cpu', 3]]));
    expect(cache.idsOf('svc_a', 0)).toBeUndefined();
    expect(cache.size).toBe(1);
  });

  it('keeps the services in use and drops those unused for a generation', () => {
    const cache = createSeriesCache(100);
    cache.add('svc_hot', 0, 'cpu', 1);
    for (let i = 0; i < 1_000; i++) {
      cache.add(`svc_${i}`, 0, 'cpu', 100 + i);
      if (i % 10 === 0) expect(cache.idsOf('svc_hot', 0)?.get('cpu')).toBe(1);
    }
    expect(cache.idsOf('svc_hot', 0)?.get('cpu')).toBe(1);
    expect(cache.idsOf('svc_999', 0)?.get('cpu')).toBe(1099);
    expect(cache.idsOf('svc_0', 0)).toBeUndefined();
  });

  it('stays within its bound however many series go through it', () => {
    const cache = createSeriesCache(1_000);
    let largest = 0;
    for (let i = 0; i < 100_000; i++) {
      cache.add(`svc_${i % 7_000}`, 0, `m${i}`, i);
      cache.idsOf(`svc_${(i * 31) % 7_000}`, 0);
      largest = Math.max(largest, cache.size);
    }
    expect(largest).toBeLessThanOrEqual(1_001);
  });

  it('bounds the series of one service too', () => {
    const cache = createSeriesCache(1_000);
    for (let i = 0; i < 10_000; i++) cache.add('svc_one', 0, `m${i}`, i);
    expect(cache.size).toBeLessThanOrEqual(1_000);
    expect(cache.idsOf('svc_one', 0)?.get('m9999')).toBe(9_999);
  });

  it('replaces the id of a series cached again', () => {
    const cache = createSeriesCache(10);
    cache.add('svc', 0, 'cpu', 1);
    cache.add('svc', 0, 'cpu', 2);
    expect(cache.size).toBe(1);
    expect(cache.idsOf('svc', 0)?.get('cpu')).toBe(2);
  });

  it('refuses a bound below 2', () => {
    expect(() => createSeriesCache(1)).toThrow(RangeError);
    expect(() => createSeriesCache(2.5)).toThrow(RangeError);
  });
});
