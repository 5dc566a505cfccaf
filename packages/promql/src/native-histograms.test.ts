import { describe, expect, it } from 'vitest';
import type { FloatHistogram } from './float-histogram.js';
import type { MemorySeries } from './memory-series-source.js';
import { engineOver, vectorOf } from './testing/engine-fixture.js';
import type { QueryValue } from './values.js';

// The cases and their expected values are Prometheus 2.42's own (promql/engine_test.go at tag
// v2.42.0: TestNativeHistogramRate, TestNativeHistogram_HistogramQuantile,
// TestNativeHistogram_Sum_Count_AddOperator; Copyright The Prometheus Authors, Apache License
// 2.0); the histograms are written with their integer buckets as deltas, as there.

type Spans = [offset: number, length: number][];

/** A histogram from Prometheus' test notation: spans as pairs, integer buckets as deltas. */
function histogram(h: {
  schema: number;
  count: number;
  sum: number;
  zeroThreshold: number;
  zeroCount: number;
  positiveSpans?: Spans;
  positiveDeltas?: number[];
  negativeSpans?: Spans;
  negativeDeltas?: number[];
}): FloatHistogram {
  const absolute = (deltas: number[] = []): number[] => {
    let count = 0;
    return deltas.map((d) => (count += d));
  };
  const spans = (pairs: Spans = []) => pairs.map(([offset, length]) => ({ offset, length }));
  return {
    schema: h.schema,
    count: h.count,
    sum: h.sum,
    zeroThreshold: h.zeroThreshold,
    zeroCount: h.zeroCount,
    positiveSpans: spans(h.positiveSpans),
    positiveBuckets: absolute(h.positiveDeltas),
    negativeSpans: spans(h.negativeSpans),
    negativeBuckets: absolute(h.negativeDeltas),
  };
}

function histogramsOf(value: QueryValue): (FloatHistogram | undefined)[] {
  if (value.resultType !== 'vector') throw new Error(`not a vector: ${value.resultType}`);
  return value.result.map((s) => s.h);
}

/** tsdb.GenerateTestHistograms(n) of Prometheus v0.42.0. */
function generatedHistograms(n: number): FloatHistogram[] {
  return Array.from({ length: n }, (_, i) =>
    histogram({
      count: 10 + i * 8,
      zeroCount: 2 + i,
      zeroThreshold: 0.001,
      sum: 18.4 * (i + 1),
      schema: 1,
      positiveSpans: [
        [0, 2],
        [1, 2],
      ],
      positiveDeltas: [i + 1, 1, -1, 0],
      negativeSpans: [
        [0, 2],
        [1, 2],
      ],
      negativeDeltas: [i + 1, 1, -1, 0],
    }),
  );
}

describe('native histograms in PromQL, as Prometheus 2.42 tests them', () => {
  it('rates a histogram counter bucket by bucket', async () => {
    const series: MemorySeries = {
      labels: { __name__: 'sparse_histogram_series' },
      samples: [],
      histograms: generatedHistograms(100).map((h, i) => [i * 15_000, h]),
    };
    const engine = engineOver([series]);
    const answer = await engine.instantQuery('rate(sparse_histogram_series[1m])', 300_000);
    expect(histogramsOf(answer)).toEqual([
      {
        schema: 1,
        zeroThreshold: 0.001,
        zeroCount: 1 / 15,
        count: 8 / 15,
        sum: 1.226666666666667,
        positiveSpans: [
          { offset: 0, length: 2 },
          { offset: 1, length: 2 },
        ],
        positiveBuckets: [1 / 15, 1 / 15, 1 / 15, 1 / 15],
        negativeSpans: [
          { offset: 0, length: 2 },
          { offset: 1, length: 2 },
        ],
        negativeBuckets: [1 / 15, 1 / 15, 1 / 15, 1 / 15],
      },
    ]);
  });

  it('takes quantiles, counts and sums of a histogram', async () => {
    const h = histogram({
      count: 12,
      zeroCount: 2,
      zeroThreshold: 0.001,
      sum: 100,
      schema: 0,
      positiveSpans: [
        [0, 2],
        [1, 2],
      ],
      positiveDeltas: [2, 1, -2, 3],
    });
    const engine = engineOver([{ labels: { __name__: 'h' }, samples: [], histograms: [[0, h]] }]);
    const expected: [string, number][] = [
      ['1.0001', Infinity],
      ['1', 16],
      ['0.99', 15.759999999999998],
      ['0.9', 13.600000000000001],
      ['0.6', 4.799999999999997],
      ['0.5', 1.6666666666666665],
      ['0.1', 0.0006000000000000001],
      ['0', 0],
      ['-1', -Infinity],
    ];
    for (const [q, value] of expected) {
      expect(vectorOf(await engine.instantQuery(`histogram_quantile(${q}, h)`, 0))).toEqual([
        [{}, value],
      ]);
    }
    expect(vectorOf(await engine.instantQuery('histogram_count(h)', 0))).toEqual([[{}, 12]]);
    expect(vectorOf(await engine.instantQuery('histogram_sum(h)', 0))).toEqual([[{}, 100]]);
  });

  it('sums histograms with sum() and +, keeping their spans as Prometheus lays them out', async () => {
    const inputs = [
      histogram({
        schema: 0,
        count: 21,
        sum: 1234.5,
        zeroThreshold: 0.001,
        zeroCount: 4,
        positiveSpans: [
          [0, 2],
          [1, 2],
        ],
        positiveDeltas: [1, 1, -1, 0],
        negativeSpans: [
          [0, 2],
          [2, 2],
        ],
        negativeDeltas: [2, 2, -3, 8],
      }),
      histogram({
        schema: 0,
        count: 36,
        sum: 2345.6,
        zeroThreshold: 0.001,
        zeroCount: 5,
        positiveSpans: [
          [0, 4],
          [0, 0],
          [0, 3],
        ],
        positiveDeltas: [1, 2, -2, 1, -1, 0, 0],
        negativeSpans: [
          [1, 4],
          [2, 0],
          [2, 3],
        ],
        negativeDeltas: [1, 3, -2, 5, -2, 0, -3],
      }),
      histogram({
        schema: 0,
        count: 36,
        sum: 1111.1,
        zeroThreshold: 0.001,
        zeroCount: 5,
        positiveSpans: [
          [0, 4],
          [0, 0],
          [0, 3],
        ],
        positiveDeltas: [1, 2, -2, 1, -1, 0, 0],
        negativeSpans: [
          [1, 4],
          [2, 0],
          [2, 3],
        ],
        negativeDeltas: [1, 3, -2, 5, -2, 0, -3],
      }),
    ];
    const expected: FloatHistogram = {
      schema: 0,
      zeroThreshold: 0.001,
      zeroCount: 14,
      count: 93,
      sum: 4691.2,
      positiveSpans: [
        { offset: 0, length: 3 },
        { offset: 0, length: 4 },
      ],
      positiveBuckets: [3, 8, 2, 5, 3, 2, 2],
      negativeSpans: [
        { offset: 0, length: 4 },
        { offset: 0, length: 2 },
        { offset: 3, length: 3 },
      ],
      negativeBuckets: [2, 6, 8, 4, 15, 9, 10, 10, 4],
    };
    const engine = engineOver(
      inputs.map((h, idx) => ({
        labels: { __name__: 'sparse_histogram_series', idx: String(idx) },
        samples: [],
        histograms: [[0, h]],
      })),
    );
    expect(histogramsOf(await engine.instantQuery('sum(sparse_histogram_series)', 0))).toEqual([
      expected,
    ]);
    const added =
      'sparse_histogram_series{idx="0"} + ignoring(idx) sparse_histogram_series{idx="1"}' +
      ' + ignoring(idx) sparse_histogram_series{idx="2"}';
    expect(histogramsOf(await engine.instantQuery(added, 0))).toEqual([expected]);
    expect(vectorOf(await engine.instantQuery('count(sparse_histogram_series)', 0))).toEqual([
      [{}, 3],
    ]);
  });
});

describe('floats beside histograms, as Prometheus 2.42 treats them', () => {
  const h = generatedHistograms(1)[0]!;
  const engine = engineOver([
    { labels: { __name__: 'x', kind: 'float' }, samples: [[0, 5]] },
    { labels: { __name__: 'x', kind: 'histogram' }, samples: [], histograms: [[0, h]] },
  ]);

  it('sums nothing where a group holds both', async () => {
    expect(vectorOf(await engine.instantQuery('sum(x)', 0))).toEqual([]);
    expect(histogramsOf(await engine.instantQuery('sum by (kind) (x)', 0))).toEqual([undefined, h]);
  });

  it('answers a histogram against a scalar with the histogram, its value taken as 0', async () => {
    expect(histogramsOf(await engine.instantQuery('x{kind="histogram"} * 2', 0))).toEqual([h]);
    expect(vectorOf(await engine.instantQuery('x{kind="histogram"} > 1', 0))).toEqual([]);
  });

  it('matches a histogram with a float in nothing', async () => {
    const query = 'x{kind="histogram"} + ignoring(kind) x{kind="float"}';
    expect(vectorOf(await engine.instantQuery(query, 0))).toEqual([]);
  });

  it('reads only the histograms in the histogram functions', async () => {
    expect(vectorOf(await engine.instantQuery('histogram_count(x)', 0))).toEqual([
      [{ kind: 'histogram' }, 10],
    ]);
  });
});
