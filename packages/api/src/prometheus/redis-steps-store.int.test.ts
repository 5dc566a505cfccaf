// @services redis
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { labelsFrom } from '@monitor/promql';
import { serviceUrl } from '@monitor/testkit/vitest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CachedSteps } from './range-query-cache.js';
import { createRedisStepsStore } from './redis-steps-store.js';

describe('the range query cache in Redis', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(serviceUrl('redis'));
  });

  // Keys of their own: other suites share the Redis.
  let prefix = '';
  beforeEach(() => {
    prefix = `test-cache-${randomBytes(6).toString('hex')}`;
  });

  afterAll(async () => {
    await redis.quit();
  });

  const entry = (values: number[]): CachedSteps => ({
    firstStepMs: 60_000,
    lastStepMs: 60_000 * values.length,
    snapshot: '812:815:813',
    series: [
      {
        metric: labelsFrom({ __name__: 'up', instance: 'a:9100', note: 'ünïcode "quoted"' }),
        points: values.map((v, i) => ({ t: 60_000 * (i + 1), v })),
      },
    ],
    bytes: 0,
    storedAtMs: 1_700_000_000_123,
  });

  it('gives back what it stored, every value bit for bit', async () => {
    const store = createRedisStepsStore(redis, 1_000_000, { prefix });
    const stored = entry([1.5, -0, 0, Number.NaN, Infinity, -Infinity, 5e-324, 0.1 + 0.2]);
    await store.set('org-1 query', stored);
    const read = await store.get('org-1 query');
    expect(read).toEqual({ ...stored, bytes: read!.bytes });
    expect(Object.is(read!.series[0]!.points[1]!.v, -0)).toBe(true);
    expect(read!.bytes).toBe(await store.bytes());
    expect(await store.get('org-2 query')).toBeUndefined();
  });

  it('is shared by every store on the same Redis', async () => {
    const one = createRedisStepsStore(redis, 1_000_000, { prefix });
    const replica = new Redis(serviceUrl('redis'));
    const other = createRedisStepsStore(replica, 1_000_000, { prefix });
    await one.set('k', entry([1, 2, 3]));
    expect((await other.get('k'))?.series[0]!.points.map((p) => p.v)).toEqual([1, 2, 3]);
    await other.delete('k');
    expect(await one.get('k')).toBeUndefined();
    expect(await one.bytes()).toBe(0);
    await replica.quit();
  });

  it('drops the least recently used entries past its budget, and keeps the total', async () => {
    let now = 1;
    const measure = createRedisStepsStore(redis, 1_000_000, { prefix });
    await measure.set('measured', entry([1, 2, 3]));
    const size = await measure.bytes();
    await measure.delete('measured');
    const store = createRedisStepsStore(redis, size * 2 + 10, { prefix, nowMs: () => now++ });
    await store.set('a', entry([1, 2, 3]));
    await store.set('b', entry([4, 5, 6]));
    await store.get('a');
    await store.set('c', entry([7, 8, 9]));
    expect(await store.get('b')).toBeUndefined();
    expect(await store.get('a')).toBeDefined();
    expect(await store.get('c')).toBeDefined();
    const total = await store.bytes();
    expect(total).toBeLessThanOrEqual(size * 2 + 10);
    // Stored again, an entry replaces its size; too big for the budget, it is not kept.
    await store.set('a', entry([1, 2, 3]));
    expect(await store.bytes()).toBe(total);
    await store.set('d', entry(Array.from({ length: 100 }, (_, i) => i)));
    expect(await store.get('d')).toBeUndefined();
    expect(await store.bytes()).toBe(total);
  });
});
