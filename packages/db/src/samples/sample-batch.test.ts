import { buildHostSample } from '@monitor/testkit/builders';
import { describe, expect, it } from 'vitest';
import type { HostSample } from './sample-batch.js';
import {
  InvalidSampleError,
  nextOffsets,
  ServiceMap,
  skipWritten,
  summarizeServices,
} from './sample-batch.js';

function sample(overrides: Partial<HostSample> & Pick<HostSample, 'host' | 'timeMs'>): HostSample {
  return buildHostSample({ orgId: 'org_a', metrics: { m: 1 }, ...overrides });
}

describe('nextOffsets', () => {
  it('is one past the highest offset per partition, or a higher explicit one', () => {
    const next = nextOffsets({
      samples: [
        sample({ host: 'a', timeMs: 1, position: { partition: 0, offset: 5 } }),
        sample({ host: 'a', timeMs: 2, position: { partition: 0, offset: 7 } }),
        sample({ host: 'b', timeMs: 1, position: { partition: 2, offset: 0 } }),
        sample({ host: 'c', timeMs: 1 }),
      ],
      offsets: [
        { partition: 2, nextOffset: 10 },
        { partition: 0, nextOffset: 3 },
      ],
    });
    expect([...next].sort()).toEqual([
      [0, 8],
      [2, 10],
    ]);
  });

  it('rejects a negative or fractional position', () => {
    expect(() =>
      nextOffsets({
        samples: [sample({ host: 'a', timeMs: 1, position: { partition: -1, offset: 0 } })],
      }),
    ).toThrow(RangeError);
    expect(() =>
      nextOffsets({
        samples: [sample({ host: 'a', timeMs: 1, position: { partition: 0, offset: 1.5 } })],
      }),
    ).toThrow(RangeError);
  });
});

describe('skipWritten', () => {
  it('skips samples below their partition’s stored next offset', () => {
    const samples = [
      sample({ host: 'a', timeMs: 1, position: { partition: 0, offset: 4 } }),
      sample({ host: 'a', timeMs: 2, position: { partition: 0, offset: 5 } }),
      sample({ host: 'b', timeMs: 1, position: { partition: 1, offset: 0 } }),
      sample({ host: 'c', timeMs: 1 }),
    ];
    const { fresh, skipped } = skipWritten(samples, new Map([[0, 5]]));
    expect(fresh.map((s) => s.timeMs + s.host)).toEqual(['2a', '1b', '1c']);
    expect(skipped).toBe(1);
  });
});

describe('summarizeServices', () => {
  it('keeps the newest sample’s tags and each metric’s newest value', () => {
    const [summary, ...rest] = summarizeServices([
      sample({ host: 'a', timeMs: 20, metrics: { cpu: 2 }, tags: { v: '20' } }),
      sample({ host: 'a', timeMs: 10, metrics: { cpu: 1, mem: 1 }, tags: { v: '10' } }),
      sample({ host: 'a', timeMs: 20, metrics: { mem: 3 }, tags: { v: '20b' } }),
    ]);
    expect(rest).toEqual([]);
    expect(summary).toMatchObject({
      orgId: 'org_a',
      name: 'a',
      lastSeenMs: 20,
      tags: { v: '20b' },
    });
    expect(Object.fromEntries(summary!.metrics)).toEqual({
      cpu: { value: 2, timeMs: 20 },
      mem: { value: 3, timeMs: 20 },
    });
  });

  it('keeps services of different organizations apart and orders them by org and name', () => {
    const summaries = summarizeServices([
      sample({ orgId: 'org_b', host: 'x', timeMs: 1 }),
      sample({ orgId: 'org_a', host: 'y', timeMs: 1 }),
      sample({ orgId: 'org_a', host: 'x', timeMs: 1 }),
    ]);
    expect(summaries.map((s) => `${s.orgId}/${s.name}`)).toEqual(['org_a/x', 'org_a/y', 'org_b/x']);
  });

  it('leaves out a sample of staleness markers only: no sign of life, no tags', () => {
    const summaries = summarizeServices([
      sample({ host: 'a', timeMs: 1, tags: { v: '1' } }),
      sample({ host: 'a', timeMs: 2, metrics: {}, tags: { v: '2' }, staleMetrics: ['m'] }),
      sample({ host: 'b', timeMs: 2, metrics: {}, staleMetrics: ['m'] }),
    ]);
    expect(summaries).toMatchObject([{ name: 'a', lastSeenMs: 1, tags: { v: '1' } }]);
    expect(summaries).toHaveLength(1);
  });

  it('handles a metric named __proto__ as a plain name', () => {
    const metrics = JSON.parse('{"__proto__": 1}') as Record<string, number>;
    const [summary] = summarizeServices([sample({ host: 'a', timeMs: 1, metrics })]);
    expect([...summary!.metrics.keys()]).toEqual(['__proto__']);
  });

  it('keeps the latest finite value of a metric, never NaN or ±Inf, which JSON cannot hold', () => {
    const [summary] = summarizeServices([
      sample({ host: 'a', timeMs: 1, metrics: { cpu: 5, mem: Number.NaN } }),
      sample({ host: 'a', timeMs: 2, metrics: { cpu: Number.POSITIVE_INFINITY } }),
    ]);
    expect(summary!.lastSeenMs).toBe(2);
    expect(summary!.metrics).toEqual(new Map([['cpu', { value: 5, timeMs: 1 }]]));
  });

  it('refuses an invalid time', () => {
    expect(() => summarizeServices([sample({ host: 'a', timeMs: 1.5 })])).toThrow(
      InvalidSampleError,
    );
    expect(() => summarizeServices([sample({ host: 'a', timeMs: 9e15 })])).toThrow(
      InvalidSampleError,
    );
  });

  it('takes every time a Date holds, and no other', () => {
    for (const timeMs of [8.64e15, -8.64e15]) {
      expect(summarizeServices([sample({ host: 'a', timeMs })])).toHaveLength(1);
      expect(() => summarizeServices([sample({ host: 'a', timeMs: timeMs * 1.0000001 })])).toThrow(
        InvalidSampleError,
      );
    }
  });
});

describe('ServiceMap', () => {
  it('keeps an org’s host apart from the same name in another org, and from joined keys', () => {
    const map = new ServiceMap<number>();
    map.set('org_a', 'web', 1);
    map.set('org_b', 'web', 2);
    map.set('org_a\u0000web', '', 3);
    map.set('org_a', 'web', 4);
    expect(map.get('org_a', 'web')).toBe(4);
    expect(map.get('org_b', 'web')).toBe(2);
    expect(map.has('org_c', 'web')).toBe(false);
    expect(map.has('org_a', 'db')).toBe(false);
    expect([...map.values()].sort()).toEqual([2, 3, 4]);
  });
});
