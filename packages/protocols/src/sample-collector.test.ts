import { describe, expect, it } from 'vitest';
import { describeCounts, totalCount } from './decoded-host-samples.js';
import type { TagPairs } from './sample-collector.js';
import { createSampleCollector, flattenTags } from './sample-collector.js';

const nowMs = 1_750_000_000_000;

function addAll(
  points: { host?: string; timeMs?: number; tags?: TagPairs; metric: string; value: number }[],
  options: { rawRetentionMs?: number } = {},
) {
  const collector = createSampleCollector({ nowMs, ...options });
  for (const point of points) {
    const tags = flattenTags((point.tags ?? []).map(([key, value]) => [key, value]));
    collector.add(
      'host' in point ? point.host : 'h',
      point.timeMs ?? nowMs,
      tags,
      point.metric,
      point.value,
    );
  }
  return collector.result();
}

describe('createSampleCollector', () => {
  it('groups points by host, time and tag set, in first-seen order', () => {
    const result = addAll([
      { metric: 'a', value: 1, tags: [['env', 'prod']] },
      { metric: 'b', value: 2, host: 'other' },
      { metric: 'b', value: 3, tags: [['env', 'prod']] },
      { metric: 'c', value: 4, timeMs: nowMs + 1, tags: [['env', 'prod']] },
    ]);
    expect(result.samples).toEqual([
      { host: 'h', timeMs: nowMs, metrics: { a: 1, b: 3 }, tags: { env: 'prod' } },
      { host: 'other', timeMs: nowMs, metrics: { b: 2 }, tags: {} },
      { host: 'h', timeMs: nowMs + 1, metrics: { c: 4 }, tags: { env: 'prod' } },
    ]);
    expect(result.accepted).toBe(4);
  });

  it('keeps one point per series (host, metric, tag set) and time, counting later ones', () => {
    const result = addAll([
      { metric: 'cpu', value: 1, tags: [['cpu', '0']] },
      { metric: 'cpu', value: 2, tags: [['cpu', '1']] },
      { metric: 'cpu', value: 3, tags: [['cpu', '0']] },
      { metric: 'mem', value: 4, tags: [['cpu', '1']] },
      { metric: 'cpu', value: 5, tags: [['cpu', '1']] },
      { metric: 'mem', value: 6, tags: [['cpu', '1']] },
    ]);
    expect(result.samples).toEqual([
      { host: 'h', timeMs: nowMs, metrics: { cpu: 1 }, tags: { cpu: '0' } },
      { host: 'h', timeMs: nowMs, metrics: { cpu: 2, mem: 4 }, tags: { cpu: '1' } },
    ]);
    expect(result.rejected).toEqual({ duplicate_series_time: 3 });
    expect(result.accepted).toBe(3);
  });

  it('takes staleness markers into the sample of their series, after the same checks', () => {
    const collector = createSampleCollector({ nowMs });
    const tags = flattenTags([['le', '0.5']]);
    collector.add('h', nowMs, tags, 'x_bucket', 3);
    collector.addStale('h', nowMs, flattenTags([['le', '1']]), 'x_bucket');
    collector.addStale('h', nowMs, tags, 'x_count');
    collector.addStale('h', nowMs, tags, 'x_bucket');
    collector.addStale(undefined, nowMs, tags, 'x_sum');
    collector.addStale('h', 1.5, tags, 'x_sum');
    collector.addStale('h', nowMs + 1, [], 'a/b');
    const result = collector.result();
    expect(result.samples).toEqual([
      {
        host: 'h',
        timeMs: nowMs,
        metrics: { x_bucket: 3 },
        tags: { le: '0.5' },
        staleMetrics: ['x_count'],
      },
      { host: 'h', timeMs: nowMs, metrics: {}, tags: { le: '1' }, staleMetrics: ['x_bucket'] },
      { host: 'h', timeMs: nowMs + 1, metrics: {}, tags: {}, staleMetrics: ['a_b'] },
    ]);
    expect(result.accepted).toBe(4);
    expect(result.rejected).toEqual({
      duplicate_series_time: 1,
      no_host: 1,
      invalid_timestamp: 1,
    });
  });

  it('splits a sample at the /ingest limit of 500 metrics', () => {
    const points = Array.from({ length: 1201 }, (_, i) => ({ metric: `m${i}`, value: i }));
    const result = addAll(points);
    expect(result.samples.map((sample) => Object.keys(sample.metrics).length)).toEqual([
      500, 500, 201,
    ]);
    expect(result.accepted).toBe(1201);
    expect(new Set(result.samples.map((sample) => sample.timeMs))).toEqual(new Set([nowMs]));
  });

  it('takes every value, NaN, ±Inf, −0 and those beyond /ingest’s ±1e100 included', () => {
    const result = addAll([
      { metric: 'a', value: Number.NaN },
      { metric: 'b', value: Number.NEGATIVE_INFINITY },
      { metric: 'c', value: -1.0000001e100 },
      { metric: 'd', value: Number.MAX_VALUE },
      { metric: 'e', value: -0 },
      { metric: 'f', value: Number.POSITIVE_INFINITY },
    ]);
    expect(result.rejected).toEqual({});
    expect(result.samples[0]?.metrics).toEqual({
      a: Number.NaN,
      b: Number.NEGATIVE_INFINITY,
      c: -1.0000001e100,
      d: Number.MAX_VALUE,
      e: -0,
      f: Number.POSITIVE_INFINITY,
    });
    expect(Object.is(result.samples[0]?.metrics['e'], -0)).toBe(true);
  });

  it('counts times that are not whole milliseconds within the range of a date', () => {
    const result = addAll([
      { metric: 'a', value: 1, timeMs: 1.5 },
      { metric: 'b', value: 1, timeMs: 8.64e15 + 1 },
      { metric: 'c', value: 1, timeMs: Number.NaN },
      { metric: 'd', value: 1, timeMs: -8.64e15 },
    ]);
    expect(result.rejected).toEqual({ invalid_timestamp: 3 });
    expect(result.accepted).toBe(1);
  });

  it('applies the /ingest sample-time window only when a retention is given', () => {
    const points = [
      { metric: 'future', value: 1, timeMs: nowMs + 10 * 60_000 + 1 },
      { metric: 'edge', value: 1, timeMs: nowMs + 10 * 60_000 },
      { metric: 'old', value: 1, timeMs: nowMs - 86_400_001 },
    ];
    expect(addAll(points).accepted).toBe(3);
    const windowed = addAll(points, { rawRetentionMs: 86_400_000 });
    expect(windowed.rejected).toEqual({ timestamp_in_future: 1, timestamp_too_old: 1 });
    expect(windowed.accepted).toBe(1);
  });

  it('counts a missing, too long or unstorable host', () => {
    const result = addAll([
      { metric: 'a', value: 1, host: undefined },
      { metric: 'a', value: 1, host: '' },
      { metric: 'a', value: 1, host: 'x'.repeat(256) },
      { metric: 'a', value: 1, host: 'lone\ud800' },
      { metric: 'a', value: 1, host: 'x'.repeat(255) },
    ]);
    expect(result.rejected).toEqual({ no_host: 2, host_too_long: 1, unstorable_text: 1 });
    expect(result.accepted).toBe(1);
  });

  it('counts tag sets /ingest would refuse, every point of them', () => {
    const many = Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'] as const);
    const result = addAll([
      { metric: 'a', value: 1, tags: [['', 'v']] },
      { metric: 'a', value: 1, tags: [['__proto__', 'v']] },
      { metric: 'a', value: 1, tags: [['k'.repeat(65), 'v']] },
      { metric: 'a', value: 1, tags: [['k', 'v'.repeat(257)]] },
      { metric: 'a', value: 1, tags: [['k', 'nul\u0000']] },
      { metric: 'a', value: 1, tags: many },
      { metric: 'b', value: 1, tags: many },
    ]);
    expect(result.rejected).toEqual({
      invalid_tag_key: 2,
      tag_key_too_long: 1,
      tag_value_too_long: 1,
      unstorable_text: 1,
      too_many_tags: 2,
    });
    expect(result.samples).toEqual([]);
  });

  it('takes tag sets at the /ingest limits', () => {
    const tags = Array.from(
      { length: 64 },
      (_, i) => [`k${i}`.padEnd(64, 'k'), 'v'.repeat(256)] as const,
    );
    expect(addAll([{ metric: 'a', value: 1, tags }]).accepted).toBe(1);
  });

  it('rewrites metric names and counts what cannot be rewritten', () => {
    const result = addAll([
      { metric: 'disk used/%', value: 1 },
      { metric: '__proto__', value: 2 },
      { metric: 'x'.repeat(129), value: 3 },
      { metric: '', value: 4 },
    ]);
    expect(result.samples[0]?.metrics).toEqual({ disk_used__: 1 });
    expect(result.rejected).toEqual({
      invalid_metric_name: 1,
      metric_name_too_long: 1,
      no_metric_name: 1,
    });
  });

  it('counts two raw names that rewrite to the same name as a collision', () => {
    const result = addAll([
      { metric: 'a/b', value: 1 },
      { metric: 'a b', value: 2 },
    ]);
    expect(result.samples[0]?.metrics).toEqual({ a_b: 1 });
    expect(result.rejected).toEqual({ duplicate_series_time: 1 });
  });

  it('takes metric names that are Object.prototype members as plain keys', () => {
    const result = addAll([
      { metric: 'constructor', value: 1 },
      { metric: 'toString', value: 2 },
    ]);
    expect(Object.entries(result.samples[0]!.metrics)).toEqual([
      ['constructor', 1],
      ['toString', 2],
    ]);
  });
});

describe('tag sets', () => {
  it('are told apart even when their strings concatenate alike', () => {
    const result = addAll([
      { metric: 'a', value: 1, tags: [['a', 'bc']] },
      { metric: 'b', value: 2, tags: [['ab', 'c']] },
      {
        metric: 'c',
        value: 3,
        tags: [
          ['a', 'b'],
          ['c', ''],
        ],
      },
      { metric: 'd', value: 4, tags: [['a', 'b']] },
    ]);
    expect(result.samples.map((sample) => sample.tags)).toEqual([
      { a: 'bc' },
      { ab: 'c' },
      { a: 'b', c: '' },
      { a: 'b' },
    ]);
  });

  it('are refused or taken whatever the order of the sets sharing a prefix', () => {
    const result = addAll([
      {
        metric: 'a',
        value: 1,
        tags: [
          ['k', 'v'],
          ['z', 'nul\u0000'],
        ],
      },
      { metric: 'b', value: 2, tags: [['k', 'v']] },
    ]);
    expect(result.rejected).toEqual({ unstorable_text: 1 });
    expect(result.samples).toEqual([
      { host: 'h', timeMs: nowMs, metrics: { b: 2 }, tags: { k: 'v' } },
    ]);
  });
});

describe('totalCount and describeCounts', () => {
  it('sum and describe a count record, largest first', () => {
    const counts = { no_host: 1, invalid_timestamp: 3, histogram: 1 };
    expect(totalCount(counts)).toBe(5);
    expect(describeCounts(counts)).toBe('3 invalid_timestamp, 1 histogram, 1 no_host');
    expect(describeCounts({})).toBe('');
  });
});
