// @services redis
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getFreePort } from './free-port.js';
import { serviceUrl } from './vitest-context.js';

describe('redis service', () => {
  let redis: Redis;
  // Unique per run, so reruns against a shared server (REDIS_URL) do not collide.
  const prefix = `testkit:smoke:${Date.now()}:${Math.floor(Math.random() * 1e6)}`;

  beforeAll(() => {
    redis = new Redis(serviceUrl('redis'));
  });

  afterAll(async () => {
    await redis.quit();
  });

  it('counts with INCR inside a window set by EXPIRE', async () => {
    const key = `${prefix}:incr`;
    const [[, first], [, ttlSet]] = (await redis.multi().incr(key).expire(key, 60).exec()) as [
      [null, number],
      [null, number],
    ];
    expect(first).toBe(1);
    expect(ttlSet).toBe(1);
    expect(await redis.incr(key)).toBe(2);

    const ttlSeconds = await redis.ttl(key);
    expect(ttlSeconds).toBeGreaterThan(55);
    expect(ttlSeconds).toBeLessThanOrEqual(60);
  });

  it('expires a key after its PEXPIRE', async () => {
    const key = `${prefix}:pexpire`;
    await redis.incr(key);
    expect(await redis.pexpire(key, 200)).toBe(1);
    const pttlMs = await redis.pttl(key);
    expect(pttlMs).toBeGreaterThan(0);
    expect(pttlMs).toBeLessThanOrEqual(200);

    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await redis.exists(key)).toBe(0);
    expect(await redis.ttl(key)).toBe(-2);
  });

  it('reports a key without expiry with TTL -1', async () => {
    const key = `${prefix}:forever`;
    await redis.set(key, 'x');
    expect(await redis.ttl(key)).toBe(-1);
    await redis.del(key);
  });

  // Without these options ioredis reconnects forever and queues commands meanwhile, so a
  // caller waits indefinitely for a Redis that is down.
  const failFast = {
    host: '127.0.0.1',
    connectTimeout: 500,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  };

  it('rejects connect() quickly when nothing listens, instead of retrying forever', async () => {
    const dead = new Redis({ ...failFast, port: await getFreePort(), lazyConnect: true });
    const errors: Error[] = [];
    dead.on('error', (err: Error) => errors.push(err));
    const startedAt = Date.now();
    try {
      // ioredis rejects with a generic message and reports the cause as an 'error' event.
      await expect(dead.connect()).rejects.toThrow('Connection is closed.');
    } finally {
      dead.disconnect();
    }
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    expect(errors.map((err) => err.message)).toContainEqual(expect.stringMatching(/ECONNREFUSED/));
  });

  it('rejects a command at once when nothing listens and the offline queue is off', async () => {
    const dead = new Redis({ ...failFast, port: await getFreePort(), enableOfflineQueue: false });
    dead.on('error', () => undefined);
    const startedAt = Date.now();
    try {
      await expect(dead.incr(`${prefix}:never`)).rejects.toThrow(/Stream isn't writeable/);
    } finally {
      dead.disconnect();
    }
    expect(Date.now() - startedAt).toBeLessThan(2_000);
  });
});
