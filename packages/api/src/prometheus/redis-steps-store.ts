import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Matrix } from '@monitor/promql';
import type { CachedSteps, CachedStepsStore } from './range-query-cache.js';

/**
 * Stores an entry, then drops the least recently used ones while the total is over the budget
 * (ARGV[3]); an entry over the budget by itself is not stored. Returns the total.
 */
const setScript = `
local size = string.len(ARGV[1])
local old = redis.call('HGET', KEYS[3], KEYS[1])
if old then redis.call('DECRBY', KEYS[4], old) end
if size > tonumber(ARGV[3]) then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], KEYS[1])
  redis.call('HDEL', KEYS[3], KEYS[1])
  return tonumber(redis.call('GET', KEYS[4]) or '0')
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], KEYS[1])
redis.call('HSET', KEYS[3], KEYS[1], size)
local total = redis.call('INCRBY', KEYS[4], size)
while total > tonumber(ARGV[3]) do
  local oldest = redis.call('ZPOPMIN', KEYS[2])
  if #oldest == 0 then break end
  local evicted = redis.call('HGET', KEYS[3], oldest[1])
  redis.call('HDEL', KEYS[3], oldest[1])
  redis.call('DEL', oldest[1])
  if evicted then total = redis.call('DECRBY', KEYS[4], evicted) end
end
return total`;

const deleteScript = `
local size = redis.call('HGET', KEYS[3], KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], KEYS[1])
redis.call('HDEL', KEYS[3], KEYS[1])
if size then redis.call('DECRBY', KEYS[4], size) end
return 0`;

/** A value as JSON keeps it: a number, or the text of one JSON has not (NaN, ±Inf, −0). */
function valueOut(v: number): number | string {
  if (Number.isFinite(v) && !Object.is(v, -0)) return v;
  return Object.is(v, -0) ? '-0' : String(v);
}

function valueIn(v: number | string): number {
  return typeof v === 'number' ? v : Number(v);
}

type StoredSeries = [
  names: string[],
  values: string[],
  times: number[],
  points: (number | string)[],
];
type StoredSteps = {
  first: number;
  last: number;
  snapshot: string;
  storedAt: number;
  series: StoredSeries[];
};

function encode(entry: CachedSteps): string {
  const stored: StoredSteps = {
    first: entry.firstStepMs,
    last: entry.lastStepMs,
    snapshot: entry.snapshot,
    storedAt: entry.storedAtMs,
    series: entry.series.map(({ metric, points }) => [
      metric.map((l) => l.name),
      metric.map((l) => l.value),
      points.map((p) => p.t),
      points.map((p) => valueOut(p.v)),
    ]),
  };
  return JSON.stringify(stored);
}

function decode(text: string): CachedSteps {
  const stored = JSON.parse(text) as StoredSteps;
  const series: Matrix = stored.series.map(([names, values, times, points]) => ({
    metric: names.map((name, i) => ({ name, value: values[i]! })),
    points: times.map((t, i) => ({ t, v: valueIn(points[i]!) })),
  }));
  return {
    firstStepMs: stored.first,
    lastStepMs: stored.last,
    snapshot: stored.snapshot,
    storedAtMs: stored.storedAt,
    series,
    // What Redis counts: UTF-8 bytes.
    bytes: Buffer.byteLength(text),
  };
}

/**
 * The range query cache in Redis, shared by every api replica that names the same Redis: one
 * budget of `maxBytes` over all of them, the least recently used entries dropped first. Keys
 * are hashed (a query may be long); the organization is in what is hashed.
 */
export function createRedisStepsStore(
  redis: Redis,
  maxBytes: number,
  options: { nowMs?: () => number; prefix?: string } = {},
): CachedStepsStore & { bytes(): Promise<number> } {
  const nowMs = options.nowMs ?? Date.now;
  // The keys of one cache: its entries, their last use (a sorted set), sizes and total.
  const prefix = options.prefix ?? 'monitor:promql-cache';
  const lruKey = `${prefix}:lru`;
  const sizesKey = `${prefix}:sizes`;
  const totalKey = `${prefix}:bytes`;
  const entryKey = (key: string): string =>
    `${prefix}:entry:${createHash('sha256').update(key).digest('base64url')}`;
  const keys = (key: string) => [entryKey(key), lruKey, sizesKey, totalKey];
  return {
    async get(key) {
      const name = entryKey(key);
      const text = await redis.get(name);
      if (text === null) return undefined;
      await redis.zadd(lruKey, 'XX', nowMs(), name);
      return decode(text);
    },
    async set(key, entry) {
      await redis.eval(setScript, 4, ...keys(key), encode(entry), nowMs(), maxBytes);
    },
    async delete(key) {
      await redis.eval(deleteScript, 4, ...keys(key));
    },
    async bytes() {
      return Number((await redis.get(totalKey)) ?? 0);
    },
  };
}
