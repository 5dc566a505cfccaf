import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { labelsToRecord } from './labels.js';
import type { MemorySeries } from './memory-series-source.js';
import type { Row } from './testing/engine-fixture.js';
import { almostEqual, byLabels, engineOver, load, rowsOf } from './testing/engine-fixture.js';

type Case = [query: string, atSeconds: number, expected: Row[]];

/** Checks each case as Prometheus' test scripts do: same series, values within 1e-6 relative. */
async function expectCases(series: MemorySeries[], cases: Case[]): Promise<void> {
  const engine = engineOver(series);
  for (const [query, atSeconds, expected] of cases) {
    const got = rowsOf(await engine.instantQuery(query, atSeconds * 1000));
    const want = [...expected].sort(byLabels);
    expect(
      got.map(([labels]) => labels),
      query,
    ).toEqual(want.map(([labels]) => labels));
    got.forEach(([, v], i) => {
      const w = want[i]![1];
      expect(almostEqual(v, w), `${query}: ${v} vs ${w}`).toBe(true);
    });
  }
}

// The cases below are Prometheus 2.42's own (promql/testdata/subquery.test, at_modifier.test
// and operators.test), with their expected values.
describe('subqueries', { timeout: 60_000 }, () => {
  it('evaluates at multiples of the step within the window, as Prometheus does', async () => {
    await expectCases(load(10_000, { metric: '1 2' }), [
      ['sum_over_time(metric[50s:10s])', 10, [[{}, 3]]],
      ['sum_over_time(metric[50s:5s])', 10, [[{}, 4]]],
      ['sum_over_time(metric[50s:10s])', 300, [[{}, 12]]],
      // The series goes stale 5 min after its last sample: one inner step at 5m10s sees it.
      ['sum_over_time(metric[50s:10s])', 360, [[{}, 2]]],
      ['rate(metric[20s:10s])', 10, [[{}, 0.1]]],
      ['rate(metric[20s:5s])', 20, [[{}, 0.05]]],
    ]);
  });

  it('feeds range functions from inner range functions, keeping the labels', async () => {
    const series = load(10_000, {
      'http_requests{job="api-server", instance="1", group="production"}': '0+20x1000 200+30x1000',
      'http_requests{job="api-server", instance="0", group="production"}': '0+10x1000 100+30x1000',
      'http_requests{job="api-server", instance="0", group="canary"}': '0+30x1000 300+80x1000',
      'http_requests{job="api-server", instance="1", group="canary"}': '0+40x2000',
    });
    await expectCases(series, [
      [
        'rate(http_requests{group=~"pro.*"}[1m:10s])',
        8000,
        [
          [{ job: 'api-server', instance: '0', group: 'production' }, 1],
          [{ job: 'api-server', instance: '1', group: 'production' }, 2],
        ],
      ],
      [
        'avg_over_time(rate(http_requests[1m])[1m:1s])',
        20000,
        [
          [{ job: 'api-server', instance: '0', group: 'canary' }, 8],
          [{ job: 'api-server', instance: '1', group: 'canary' }, 4],
          [{ job: 'api-server', instance: '1', group: 'production' }, 3],
          [{ job: 'api-server', instance: '0', group: 'production' }, 3],
        ],
      ],
    ]);
  });

  it('aligns offsets to the step and nests', async () => {
    const series = load(10_000, {
      metric1: '0+1x1000',
      metric2: '0+2x1000',
      metric3: '0+3x1000',
    });
    await expectCases(series, [
      ['sum_over_time(metric1[30s:10s])', 1000, [[{}, 394]]],
      ['sum_over_time(metric1[30s:5s])', 1000, [[{}, 688]]],
      ['sum_over_time(metric1[30s:10s] offset 10s)', 1010, [[{}, 394]]],
      ['sum_over_time(metric1[30s:10s] offset 9s)', 1010, [[{}, 297]]],
      ['sum_over_time(metric1[30s:10s] offset 7s)', 1010, [[{}, 297]]],
      ['sum_over_time(metric1[30s:10s] offset 5s)', 1010, [[{}, 297]]],
      ['sum_over_time(metric1[30s:10s] offset 3s)', 1010, [[{}, 297]]],
      ['sum_over_time((metric1)[30s:10s] offset 3s)', 1010, [[{}, 297]]],
      ['rate(sum_over_time(metric1[30s:10s])[50s:10s])', 1000, [[{}, 0.4]]],
      ['rate(sum_over_time(metric2[30s:10s])[50s:10s])', 1000, [[{}, 0.8]]],
      ['rate(sum_over_time(metric3[30s:10s])[50s:10s])', 1000, [[{}, 1.2]]],
      ['rate(sum_over_time((metric1+metric2+metric3)[30s:10s])[30s:10s])', 1000, [[{}, 2.4]]],
    ]);
  });

  it('reads windows of a range selector and of a subquery differently, as Prometheus does', async () => {
    // The Fibonacci numbers every 7 s, so that the rate is not constant (exact as BigInt, then
    // rounded once, as Prometheus parses the decimal literals of its test).
    const fibonacci: bigint[] = [1n, 1n];
    while (fibonacci.length < 200) fibonacci.push(fibonacci.at(-1)! + fibonacci.at(-2)!);
    const series: MemorySeries[] = [
      { labels: { __name__: 'metric' }, samples: fibonacci.map((f, i) => [i * 7000, Number(f)]) },
    ];
    await expectCases(series, [
      ['rate(metric[1m])', 80, [[{}, 2.517857143]]],
      ['rate(metric[1m:10s])', 80, [[{}, 2.366666667]]],
      ['min_over_time(metric[10s])', 20, [[{}, 2]]],
      ['min_over_time(metric[10s:10s])', 20, [[{}, 1]]],
      ['min_over_time(rate(metric[5m])[20m:1m])', 1200, [[{}, 0.12119047619047618]]],
    ]);
  });

  it('pins subqueries and selectors with @ as Prometheus does', async () => {
    const series = load(10_000, { 'metric{job="1"}': '0+1x1000', 'metric{job="2"}': '0+2x1000' });
    await expectCases(series, [
      ['sum_over_time(metric{job="1"}[100s:1s] @ 100)', 25, [[{ job: '1' }, 460]]],
      ['sum_over_time(metric{job="1"}[100s:1s] @ 100 offset 20s)', 25, [[{ job: '1' }, 288]]],
      ['sum_over_time(metric{job="1"}[100s:1s] offset 20s @ 100)', 25, [[{ job: '1' }, 288]]],
      [
        'sum_over_time(sum_over_time(metric{job="1"}[100s] @ 100)[100s:25s] @ 50)',
        100,
        [[{ job: '1' }, 275]],
      ],
      [
        'sum_over_time(sum_over_time(sum_over_time(metric{job="1"}[100s] @ 100)[100s:25s] @ 50)[3s:1s] @ 3000)',
        0,
        [[{ job: '1' }, 1100]],
      ],
      [
        'sum_over_time(sum_over_time(sum_over_time(metric{job="1"}[10s])[100s:25s] @ 50)[3s:1s] @ 200)',
        0,
        [[{ job: '1' }, 44]],
      ],
      [
        'sum_over_time(sum_over_time(sum_over_time(metric{job="1"}[10s])[100s:25s] @ 200)[3s:1s] @ 50)',
        0,
        [[{ job: '1' }, 464]],
      ],
      [
        'sum_over_time(sum_over_time(sum_over_time(metric{job="1"}[20s])[20s:10s] offset 10s)[100s:25s] @ 1000)',
        0,
        [[{ job: '1' }, 3588]],
      ],
      [
        'sum_over_time(minute(metric @ 1500)[100s:10s])',
        0,
        [
          [{ job: '1' }, 22],
          [{ job: '2' }, 55],
        ],
      ],
      ['sum_over_time(minute()[50m:1m] @ 6000)', 0, [[{}, 1365]]],
      ['sum_over_time(minute()[50m:1m] @ 6000 offset 5m)', 0, [[{}, 1410]]],
      ['sum_over_time(vector(time())[100s:1s] @ 3000)', 0, [[{}, 297950]]],
      ['sum_over_time(vector(time())[100s:1s] @ 3000 offset 600s)', 0, [[{}, 237350]]],
      ['sum_over_time(timestamp(metric{job="1"} @ 10)[100s:10s] @ 3000)', 0, [[{ job: '1' }, 110]]],
      [
        'sum_over_time(timestamp(timestamp(metric{job="1"} @ 999))[10s:1s] @ 10)',
        0,
        [[{ job: '1' }, 55]],
      ],
    ]);
  });

  it('answers a subquery on its own with the inner points at their own times', async () => {
    const engine = engineOver(load(10_000, { metric: '0+1x100' }));
    const got = await engine.instantQuery('metric[1m:20s] offset 5s', 100_000);
    expect(got.resultType).toBe('matrix');
    if (got.resultType !== 'matrix') return;
    // Window [35 s, 95 s] (offset 5 s): steps 40, 60, 80 s; each reads the sample at or before.
    expect(got.result.map((s) => s.points)).toEqual([
      [
        { t: 40_000, v: 4 },
        { t: 60_000, v: 6 },
        { t: 80_000, v: 8 },
      ],
    ]);
  });

  it('counts the inner steps that see a sample, as a model of the definition says', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 0, max: 600 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: -100, max: 100 }),
        fc.integer({ min: 0, max: 900 }),
        async (seconds, stepSeconds, rangeSeconds, offsetSeconds, atSeconds) => {
          const times = [...seconds].sort((a, b) => a - b).map((s) => s * 1000);
          const lookbackMs = 300_000;
          const engine = engineOver([
            { labels: { __name__: 'x' }, samples: times.map((t, i) => [t, i]) },
          ]);
          // Prometheus refuses `offset 0s` (a duration must be greater than 0).
          const offset = offsetSeconds === 0 ? '' : ` offset ${offsetSeconds}s`;
          const query = `count_over_time(x[${rangeSeconds}s:${stepSeconds}s]${offset})`;
          const got = rowsOf(await engine.instantQuery(query, atSeconds * 1000));
          // The model: inner steps are the multiples of the step in [t - offset - range,
          // t - offset]; one counts when a sample lies within the lookback before it.
          const endMs = (atSeconds - offsetSeconds) * 1000;
          const stepMs = stepSeconds * 1000;
          let count = 0;
          for (
            let k = Math.ceil((endMs - rangeSeconds * 1000) / stepMs);
            k * stepMs <= endMs;
            k++
          ) {
            const ts = k * stepMs;
            if (times.some((t) => t <= ts && t >= ts - lookbackMs)) count++;
          }
          expect(got).toEqual(count === 0 ? [] : [[{}, count]]);
        },
      ),
      { numRuns: 200 },
    );
  });
  it('answers each step of a range query as an instant query at that time', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.double({ min: -1000, max: 1000, noNaN: true }), {
          minLength: 1,
          maxLength: 60,
        }),
        fc.constantFrom('max_over_time', 'sum_over_time', 'rate', 'last_over_time'),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 1, max: 45 }),
        async (values, func, stepSeconds, rangeSeconds, startSeconds, outerStepSeconds) => {
          const engine = engineOver([
            { labels: { __name__: 'x', a: 'b' }, samples: values.map((v, i) => [i * 7000, v]) },
          ]);
          const query = `${func}((x * 2)[${rangeSeconds}s:${stepSeconds}s])`;
          const startMs = startSeconds * 1000;
          const endMs = startMs + 10 * outerStepSeconds * 1000;
          const range = await engine.rangeQuery(query, startMs, endMs, outerStepSeconds * 1000);
          if (range.resultType !== 'matrix') throw new Error('not a matrix');
          const byStep = new Map<number, Row[]>();
          for (const series of range.result) {
            for (const p of series.points) {
              byStep.set(p.t, [...(byStep.get(p.t) ?? []), [labelsToRecord(series.metric), p.v]]);
            }
          }
          for (let t = startMs; t <= endMs; t += outerStepSeconds * 1000) {
            expect(byStep.get(t) ?? []).toEqual(rowsOf(await engine.instantQuery(query, t)));
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('unary minus', { timeout: 60_000 }, () => {
  it('binds looser than ^, also on literals, as Prometheus does', async () => {
    const series = load(300_000, {
      'http_requests{job="api-server", instance="0"}': '0+10x10',
      'http_requests{job="app-server", instance="0"}': '0+26x10',
    });
    await expectCases(series, [
      ['-1 ^ 2', 0, [[{}, -1]]],
      ['- 1 ^ 2', 0, [[{}, -1]]],
      ['(-1) ^ 2', 0, [[{}, 1]]],
      ['2 ^ -1', 0, [[{}, 0.5]]],
      ['-1 ^ 2 ^ 3', 0, [[{}, -1]]],
      ['- - - 1', 3000, [[{}, -1]]],
      ['-2^---1*3', 3000, [[{}, -1.5]]],
      ['2/-2^---1*3+2', 3000, [[{}, -10]]],
      [
        '-10^3 * - SUM(http_requests) BY (job) ^ -1',
        3000,
        [
          [{ job: 'api-server' }, 10],
          [{ job: 'app-server' }, 1000 / 260],
        ],
      ],
    ]);
  });
});
