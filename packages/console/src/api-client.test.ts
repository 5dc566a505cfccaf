import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApiClient } from './api-client.js';
import { fetchAllPages } from './api-client.js';

/** An API of `total` numbered items whose pages answer after the delays `delays` picks. */
function fakeApi(
  total: number,
  delays: (offset: number) => number,
): ApiClient & { asked: number[] } {
  const asked: number[] = [];
  return {
    asked,
    async get<T>(path: string, query: Record<string, string | number | undefined> = {}) {
      expect(path).toBe('/services');
      const offset = Number(query['offset']);
      const limit = Number(query['limit']);
      asked.push(offset);
      await new Promise((resolve) => setTimeout(resolve, delays(offset)));
      const items = Array.from(
        { length: Math.max(0, Math.min(limit, total - offset)) },
        (_, i) => offset + i,
      );
      return {
        services: items,
        pagination: { total, limit, offset, has_more: offset + limit < total },
      } as T;
    },
    send: () => Promise.reject(new Error('not used')),
    prometheus: () => Promise.reject(new Error('not used')),
  };
}

describe('fetchAllPages', () => {
  it('returns every item in the API order, and shows only ordered prefixes on the way, whatever order pages land in', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 950 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 10, maxLength: 10 }),
        async (total, delays) => {
          const api = fakeApi(total, (offset) => delays[(offset / 100) % 10] ?? 0);
          const seen: number[][] = [];
          const all = await fetchAllPages<number>(
            api,
            '/services',
            'services',
            {},
            (items, count) => {
              expect(count).toBe(total);
              seen.push(items);
            },
          );
          expect(all).toEqual(Array.from({ length: total }, (_, i) => i));
          for (const prefix of seen) expect(prefix).toEqual(all.slice(0, prefix.length));
          expect(new Set(api.asked).size).toBe(api.asked.length);
          expect(api.asked.length).toBe(Math.max(1, Math.ceil(total / 100)));
        },
      ),
      { numRuns: 30 },
    );
  });
});
