import fc from 'fast-check';
import { labelsFrom } from '@monitor/promql';
import { describe, expect, it } from 'vitest';
import type { StoredPoints } from './merge-series-points.js';
import { mergeSeriesPoints } from './merge-series-points.js';

const labels = labelsFrom({ __name__: 'cpu', host: 'a' });

const points = (timesMs: number[], values: number[], stale?: true): StoredPoints => ({
  timestampsMs: Float64Array.from(timesMs),
  values: Float64Array.from(values),
  ...(stale === undefined ? {} : { stale }),
});

const markers = (timesMs: number[]): StoredPoints =>
  points(
    timesMs,
    timesMs.map(() => NaN),
    true,
  );

const plain = (series: { timestampsMs: ArrayLike<number>; values: ArrayLike<number> }) => ({
  times: Array.from(series.timestampsMs),
  values: Array.from(series.values),
});

describe('mergeSeriesPoints', () => {
  it('returns an empty series when nothing was read for its stored series', () => {
    const series = mergeSeriesPoints(labels, ['1'], [new Map([['2', points([1], [1])]])]);
    expect(series.labels).toBe(labels);
    expect(plain(series)).toEqual({ times: [], values: [] });
    expect(series.stale).toBeUndefined();
  });

  it('hands one list over as it was read, counting no markers when it holds no NaN', () => {
    const read = points([1, 2, 3], [10, 20, 30]);
    const series = mergeSeriesPoints(labels, ['1'], [new Map([['1', read]])]);
    expect(series.timestampsMs).toBe(read.timestampsMs);
    expect(series.values).toBe(read.values);
    expect(series.markers).toBe(0);
    expect(series.stale).toBeUndefined();
  });

  it('trusts a list decoded as free of NaN without looking at its values', () => {
    const read: StoredPoints = { ...points([1], [NaN]), nanFree: true };
    const series = mergeSeriesPoints(labels, ['1'], [new Map([['1', read]])]);
    expect(series.markers).toBe(0);
  });

  it('flags no point of one list of samples holding a NaN: that NaN is a value', () => {
    const series = mergeSeriesPoints(labels, ['1'], [new Map([['1', points([1, 2], [NaN, 2])]])]);
    expect(Array.from(series.stale!)).toEqual([0, 0]);
  });

  it('flags every point of a list of staleness markers', () => {
    const series = mergeSeriesPoints(labels, ['1'], [new Map(), new Map([['1', markers([5, 6])]])]);
    expect(plain(series).times).toEqual([5, 6]);
    expect(Array.from(series.stale!)).toEqual([1, 1]);
  });

  it('merges samples, unaggregated samples and markers in time order, markers flagged', () => {
    const series = mergeSeriesPoints(
      labels,
      ['1'],
      [
        new Map([['1', points([1, 4], [10, 40])]]),
        new Map([['1', points([2], [Infinity])]]),
        new Map([['1', markers([3])]]),
      ],
    );
    expect(plain(series)).toEqual({ times: [1, 2, 3, 4], values: [10, Infinity, NaN, 40] });
    expect(Array.from(series.stale!)).toEqual([0, 0, 1, 0]);
  });

  it('keeps the sample over a marker at the same millisecond', () => {
    const series = mergeSeriesPoints(
      labels,
      ['1'],
      [new Map([['1', points([1, 2], [10, 20])]]), new Map([['1', markers([2])]])],
    );
    expect(plain(series)).toEqual({ times: [1, 2], values: [10, 20] });
    expect(Array.from(series.stale!)).toEqual([0, 0]);
  });

  it("keeps the older stored series' sample at a millisecond two series hold", () => {
    const samples = new Map([
      ['7', points([1, 2], [10, 20])],
      ['9', points([2, 3], [200, 300])],
    ]);
    const series = mergeSeriesPoints(labels, ['7', '9'], [samples]);
    expect(plain(series)).toEqual({ times: [1, 2, 3], values: [10, 20, 300] });
  });

  it('matches a model: one point per millisecond, the earliest list winning', () => {
    const list = fc
      .tuple(
        fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 20 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 2 }),
        fc.constantFrom('1', '2'),
      )
      .map(([times, stale, read, id]) => ({
        id,
        read,
        points: stale
          ? markers(times.sort((a, b) => a - b))
          : points(
              times.sort((a, b) => a - b),
              times.map((t) => t + read / 10),
            ),
      }));
    fc.assert(
      fc.property(fc.array(list, { maxLength: 6 }), (lists) => {
        // At most one list per (read, stored series), as the reads hand them over.
        const reads = [0, 1, 2].map(() => new Map<string, StoredPoints>());
        for (const { id, read, points: p } of lists) reads[read]!.set(id, p);
        const ids = ['1', '2'];
        const expected = new Map<number, { value: number; stale: number }>();
        for (const read of reads) {
          for (const id of ids) {
            const p = read.get(id);
            if (p === undefined) continue;
            p.timestampsMs.forEach((t, i) => {
              if (!expected.has(t)) {
                expected.set(t, { value: p.values[i]!, stale: p.stale === true ? 1 : 0 });
              }
            });
          }
        }
        const times = [...expected.keys()].sort((a, b) => a - b);
        const series = mergeSeriesPoints(labels, ids, reads);
        expect(Array.from(series.timestampsMs)).toEqual(times);
        expect(Array.from(series.values)).toEqual(times.map((t) => expected.get(t)!.value));
        const stale =
          series.stale === undefined
            ? Array.from(series.values, (v) => (Number.isNaN(v) ? 1 : 0))
            : Array.from(series.stale);
        expect(stale).toEqual(times.map((t) => expected.get(t)!.stale));
      }),
    );
  });
});
