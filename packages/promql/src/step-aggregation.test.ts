import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FoldingOp } from './aggregation.js';
import { aggregate, groupingKey } from './aggregation.js';
import type { Labels } from './labels.js';
import { labelsFrom, labelsKey } from './labels.js';
import { aggregateSteps } from './step-aggregation.js';
import { matrixSteps, stepsMatrix, stepTimes } from './step-matrix.js';
import type { Matrix, Series, Vector } from './values.js';

const foldingOps: FoldingOp[] = ['sum', 'avg', 'count', 'group', 'min', 'max', 'stddev', 'stdvar'];

/** Values where the order of operations shows: the awkward doubles and plain ones. */
const valueArbitrary = fc.oneof(
  fc.constantFrom(NaN, Infinity, -Infinity, -0, 0, 1e308, -1e308, 5e-324),
  fc.double(),
  fc.integer({ min: -5, max: 5 }),
);

/** Series over `steps` steps: labels from small pools, a value or none at each step. */
const matrixArbitrary = (times: readonly number[]): fc.Arbitrary<Matrix> =>
  fc
    .array(
      fc.record({
        name: fc.constantFrom('m', 'n'),
        region: fc.constantFrom('eu', 'us', ''),
        zone: fc.constantFrom('a', 'b'),
        points: fc.array(fc.option(valueArbitrary, { nil: undefined }), {
          minLength: times.length,
          maxLength: times.length,
        }),
      }),
      { maxLength: 8 },
    )
    .map((rows) =>
      rows.map(({ name, region, zone, points }, i): Series => ({
        metric: labelsFrom({ __name__: name, region, zone, i: String(i % 3) }),
        points: points.flatMap((v, k) => (v === undefined ? [] : [{ t: times[k]!, v }])),
      })),
    );

/** The evaluator's step walk with `aggregate` at each step: the reference. */
function aggregatedStepByStep(
  op: FoldingOp,
  grouping: string[],
  without: boolean,
  matrix: Matrix,
  times: readonly number[],
): Matrix {
  const out = new Map<string, Series>();
  for (const t of times) {
    const vector: Vector = [];
    const keys: string[] = [];
    for (const series of matrix) {
      const point = series.points.find((p) => p.t === t);
      if (point === undefined) continue;
      vector.push({ metric: series.metric, t, v: point.v });
      keys.push(groupingKey(series.metric, grouping, without));
    }
    for (const sample of aggregate(op, grouping, without, undefined, vector, keys)) {
      const key = labelsKey(sample.metric);
      const series = out.get(key) ?? { metric: sample.metric, points: [] };
      out.set(key, series);
      series.points.push({ t, v: sample.v });
    }
  }
  return [...out.values()];
}

/** A matrix as plain data, values by their bits (Object.is tells -0 and NaN apart). */
const plain = (matrix: Matrix): [Labels, [number, string][]][] =>
  matrix.map((s) => [
    [...s.metric],
    s.points.map((p) => [p.t, Object.is(p.v, -0) ? '-0' : String(p.v)]),
  ]);

describe('aggregateSteps', () => {
  it('answers what aggregating each step on its own answers, to the bit', () => {
    const times = stepTimes(1_000, 61_000, 15_000);
    fc.assert(
      fc.property(
        matrixArbitrary(times),
        fc.constantFrom(...foldingOps),
        fc.subarray(['__name__', 'region', 'zone']),
        fc.boolean(),
        (matrix, op, grouping, without) => {
          const samples: number[] = [];
          const got = aggregateSteps(op, grouping, without, matrixSteps(matrix, times), (n) =>
            samples.push(n),
          );
          const want = aggregatedStepByStep(op, grouping, without, matrix, times);
          expect(plain(got)).toEqual(plain(want));
          expect(samples).toHaveLength(times.length);
          expect(samples.reduce((a, b) => a + b, 0)).toBe(
            want.reduce((n, s) => n + s.points.length, 0),
          );
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('matrixSteps and stepsMatrix', () => {
  it('hand back the matrix they were given', () => {
    const times = stepTimes(0, 50, 10);
    fc.assert(
      fc.property(matrixArbitrary(times), (matrix) => {
        expect(plain(stepsMatrix(matrixSteps(matrix, times)))).toEqual(plain(matrix));
      }),
    );
  });
});
