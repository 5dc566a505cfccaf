import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { timeOrdered } from './time-ordered.js';

/** Each point's value is derived from its time, so that the pairs can be checked after. */
const valueAt = (timeMs: number): number => timeMs * 3 + 0.5;

/** Distinct times cut into runs, each ascending or descending: how scans hand rows over. */
const runsOfDistinctTimes = fc
  .uniqueArray(fc.integer({ min: 0, max: 1_000_000 }), { maxLength: 300 })
  .chain((times) =>
    fc
      .array(fc.tuple(fc.integer({ min: 1, max: 40 }), fc.boolean()), { minLength: 1 })
      .map((cuts) => {
        const out: number[] = [];
        let at = 0;
        for (let k = 0; at < times.length; k++) {
          const [length, descending] = cuts[k % cuts.length]!;
          const run = times.slice(at, at + length).sort((a, b) => a - b);
          out.push(...(descending ? run.reverse() : run));
          at += length;
        }
        return out;
      }),
  );

function check(times: number[]): void {
  const { timesMs, values } = timeOrdered(
    Float64Array.from(times),
    Float64Array.from(times, valueAt),
  );
  const want = [...times].sort((a, b) => a - b);
  expect(Array.from(timesMs)).toEqual(want);
  expect(Array.from(values)).toEqual(want.map(valueAt));
}

describe('timeOrdered', () => {
  it('orders points cut into ascending and descending runs, values with their times', () => {
    fc.assert(fc.property(runsOfDistinctTimes, check), { numRuns: 500 });
  });

  it('orders points in any order', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: -1e6, max: 1e6 }), { maxLength: 200 }), check),
      { numRuns: 500 },
    );
  });

  it('joins ascending runs that do not overlap, in whichever order they come', () => {
    const disjointRuns = fc
      .uniqueArray(fc.integer({ min: 0, max: 1_000_000 }), { maxLength: 300 })
      .chain((times) =>
        fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1 }).chain((lengths) => {
          const sorted = [...times].sort((a, b) => a - b);
          const runs: number[][] = [];
          for (let at = 0, k = 0; at < sorted.length; k++) {
            const length = lengths[k % lengths.length]!;
            runs.push(sorted.slice(at, at + length));
            at += length;
          }
          return fc.shuffledSubarray(runs, { minLength: runs.length }).map((r) => r.flat());
        }),
      );
    fc.assert(fc.property(disjointRuns, check), { numRuns: 500 });
  });

  it('sorts the head chunk’s rows where they lie beside a compressed chunk’s run', () => {
    // A series as a read over a compressed chunk and the head chunk hands it over: one long
    // descending run of the older points, and the newest in the order they were written (a few
    // to more than insertion sorts), before or after it.
    const headBesideChunk = fc
      .uniqueArray(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 2, maxLength: 400 })
      .chain((times) =>
        fc
          .tuple(fc.integer({ min: 1, max: times.length - 1 }), fc.boolean())
          .chain(([cut, headFirst]) => {
            const sorted = [...times].sort((a, b) => a - b);
            const chunk = sorted.slice(0, cut).reverse();
            return fc
              .shuffledSubarray(sorted.slice(cut), { minLength: sorted.length - cut })
              .map((head) => (headFirst ? [...head, ...chunk] : [...chunk, ...head]));
          }),
      );
    fc.assert(fc.property(headBesideChunk, check), { numRuns: 500 });
  });

  it('merges a long run with short ones that overlap it, the earlier of two at one time first', () => {
    // A compressed chunk's run with a few of its points elsewhere (a batch of one, a late
    // write), times held twice among them: the order of a stable sort by time, where each point's
    // value says where it came in.
    const longBesideShort = fc
      .tuple(
        fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 65, maxLength: 400 }),
        fc.array(fc.integer({ min: 0, max: 5_000 }), { maxLength: 120 }),
        fc.nat(),
      )
      .map(([long, short, at]) => {
        const run = [...new Set(long)].sort((a, b) => b - a);
        const cut = at % (short.length + 1);
        return [...short.slice(0, cut), ...run, ...short.slice(cut)];
      });
    fc.assert(
      fc.property(longBesideShort, (times) => {
        const ordered = timeOrdered(
          Float64Array.from(times),
          Float64Array.from(times, (_, i) => i),
        );
        const want = times
          .map((t, i) => [t, i] as const)
          .sort((x, y) => x[0] - y[0] || x[1] - y[1]);
        expect(Array.from(ordered.timesMs)).toEqual(want.map(([t]) => t));
        expect(Array.from(ordered.values)).toEqual(want.map(([, i]) => i));
      }),
      { numRuns: 500 },
    );
  });

  it('sorts overlapping neighbours in place, and the earlier of two at one time first', () => {
    // Runs [5, 4, 3] and [4, 10, 11, 12] overlap: sorted together where they lie.
    const timesMs = Float64Array.from([5, 4, 3, 4, 10, 11, 12]);
    const values = Float64Array.from([5, 4, 3, -4, 10, 11, 12]);
    const ordered = timeOrdered(timesMs, values);
    expect(ordered.timesMs).toBe(timesMs);
    expect(Array.from(timesMs)).toEqual([3, 4, 4, 5, 10, 11, 12]);
    expect(Array.from(values)).toEqual([3, 4, -4, 5, 10, 11, 12]);
  });

  it('hands back points already in order as they are', () => {
    const timesMs = Float64Array.from([1, 2, 5]);
    const values = Float64Array.from([-0, Number.NaN, Number.POSITIVE_INFINITY]);
    const ordered = timeOrdered(timesMs, values);
    expect(ordered.timesMs).toBe(timesMs);
    expect(ordered.values).toBe(values);
  });

  it('puts descending batches in order where they lie, one after the other', () => {
    const timesMs = Float64Array.from([3, 2, 1, 6, 5, 4, 7]);
    const values = Float64Array.from(timesMs, valueAt);
    const ordered = timeOrdered(timesMs, values);
    expect(ordered.timesMs).toBe(timesMs);
    expect(ordered.values).toBe(values);
    expect(Array.from(timesMs)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(Array.from(values)).toEqual([1, 2, 3, 4, 5, 6, 7].map(valueAt));
  });

  it('keeps values bit for bit and, at a time held twice, the earlier run first', () => {
    const { timesMs, values } = timeOrdered(
      Float64Array.from([30, 20, 10, 20, 40]),
      Float64Array.from([-0, 1, Number.NaN, 2, Number.NEGATIVE_INFINITY]),
    );
    expect(Array.from(timesMs)).toEqual([10, 20, 20, 30, 40]);
    expect(Array.from(values)).toEqual([Number.NaN, 1, 2, -0, Number.NEGATIVE_INFINITY]);
    expect(Object.is(values[3], -0)).toBe(true);
  });
});
