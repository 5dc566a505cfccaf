import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MemorySeries } from './memory-series-source.js';
import { engineOver, expectPromqlScript, rowsOf, vectorOf } from './testing/engine-fixture.js';

// The scripts are Prometheus 2.42's own tests (Copyright The Prometheus Authors, Apache License
// 2.0, as this project), copied verbatim with their expected values from
// promql/testdata/<file>.test at tag v2.42.0 (the lines named in each case): each evaluation runs as
// an instant query and as the middle step of a range query, as Prometheus' test runner does.
describe('aggregation, as Prometheus 2.42 tests it', { timeout: 60_000 }, () => {
  it('sums, averages and counts by and without, dropping the labels not kept', async () => {
    // promql/testdata/aggregators.test 1-117
    await expectPromqlScript(String.raw`
load 5m
  http_requests{job="api-server", instance="0", group="production"} 0+10x10
  http_requests{job="api-server", instance="1", group="production"} 0+20x10
  http_requests{job="api-server", instance="0", group="canary"}   0+30x10
  http_requests{job="api-server", instance="1", group="canary"}   0+40x10
  http_requests{job="app-server", instance="0", group="production"} 0+50x10
  http_requests{job="app-server", instance="1", group="production"} 0+60x10
  http_requests{job="app-server", instance="0", group="canary"}   0+70x10
  http_requests{job="app-server", instance="1", group="canary"}   0+80x10

load 5m
  foo{job="api-server", instance="0", region="europe"} 0+90x10
  foo{job="api-server"} 0+100x10

# Simple sum.
eval instant at 50m SUM BY (group) (http_requests{job="api-server"})
  {group="canary"} 700
  {group="production"} 300

eval instant at 50m SUM BY (group) (((http_requests{job="api-server"})))
  {group="canary"} 700
  {group="production"} 300

# Test alternative "by"-clause order.
eval instant at 50m sum by (group) (http_requests{job="api-server"})
  {group="canary"} 700
  {group="production"} 300

# Simple average.
eval instant at 50m avg by (group) (http_requests{job="api-server"})
  {group="canary"} 350
  {group="production"} 150

# Simple count.
eval instant at 50m count by (group) (http_requests{job="api-server"})
  {group="canary"} 2
  {group="production"} 2

# Simple without.
eval instant at 50m sum without (instance) (http_requests{job="api-server"})
  {group="canary",job="api-server"} 700
  {group="production",job="api-server"} 300

# Empty by.
eval instant at 50m sum by () (http_requests{job="api-server"})
  {} 1000

# No by/without.
eval instant at 50m sum(http_requests{job="api-server"})
  {} 1000

# Empty without.
eval instant at 50m sum without () (http_requests{job="api-server",group="production"})
  {group="production",job="api-server",instance="0"} 100
  {group="production",job="api-server",instance="1"} 200

# Without with mismatched and missing labels. Do not do this.
eval instant at 50m sum without (instance) (http_requests{job="api-server"} or foo)
  {group="canary",job="api-server"} 700
  {group="production",job="api-server"} 300
  {region="europe",job="api-server"} 900
  {job="api-server"} 1000

# Lower-cased aggregation operators should work too.
eval instant at 50m sum(http_requests) by (job) + min(http_requests) by (job) + max(http_requests) by (job) + avg(http_requests) by (job)
  {job="app-server"} 4550
  {job="api-server"} 1750

# Test alternative "by"-clause order.
eval instant at 50m sum by (group) (http_requests{job="api-server"})
  {group="canary"} 700
  {group="production"} 300

# Test both alternative "by"-clause orders in one expression.
# Public health warning: stick to one form within an expression (or even
# in an organization), or risk serious user confusion.
eval instant at 50m sum(sum by (group) (http_requests{job="api-server"})) by (job)
  {} 1000

eval instant at 50m SUM(http_requests)
	{} 3600

eval instant at 50m SUM(http_requests{instance="0"}) BY(job)
	{job="api-server"} 400
	{job="app-server"} 1200

eval instant at 50m SUM(http_requests) BY (job)
	{job="api-server"} 1000
	{job="app-server"} 2600

# Non-existent labels mentioned in BY-clauses shouldn't propagate to output.
eval instant at 50m SUM(http_requests) BY (job, nonexistent)
	{job="api-server"} 1000
	{job="app-server"} 2600

eval instant at 50m COUNT(http_requests) BY (job)
	{job="api-server"} 4
	{job="app-server"} 4

eval instant at 50m SUM(http_requests) BY (job, group)
	{group="canary", job="api-server"} 700
	{group="canary", job="app-server"} 1500
	{group="production", job="api-server"} 300
	{group="production", job="app-server"} 1100

eval instant at 50m AVG(http_requests) BY (job)
	{job="api-server"} 250
	{job="app-server"} 650

eval instant at 50m MIN(http_requests) BY (job)
	{job="api-server"} 100
	{job="app-server"} 500

eval instant at 50m MAX(http_requests) BY (job)
	{job="api-server"} 400
	{job="app-server"} 800
`);
  });
  it('takes stddev and stdvar, population-wide', async () => {
    // promql/testdata/aggregators.test 1-14, 183-198
    await expectPromqlScript(String.raw`
load 5m
  http_requests{job="api-server", instance="0", group="production"} 0+10x10
  http_requests{job="api-server", instance="1", group="production"} 0+20x10
  http_requests{job="api-server", instance="0", group="canary"}   0+30x10
  http_requests{job="api-server", instance="1", group="canary"}   0+40x10
  http_requests{job="app-server", instance="0", group="production"} 0+50x10
  http_requests{job="app-server", instance="1", group="production"} 0+60x10
  http_requests{job="app-server", instance="0", group="canary"}   0+70x10
  http_requests{job="app-server", instance="1", group="canary"}   0+80x10

load 5m
  foo{job="api-server", instance="0", region="europe"} 0+90x10
  foo{job="api-server"} 0+100x10

# Standard deviation and variance.
eval instant at 50m stddev(http_requests)
  {} 229.12878474779

eval instant at 50m stddev by (instance)(http_requests)
  {instance="0"} 223.60679774998
  {instance="1"} 223.60679774998

eval instant at 50m stdvar(http_requests)
  {} 52500

eval instant at 50m stdvar by (instance)(http_requests)
  {instance="0"} 50000
  {instance="1"} 50000

# Float precision test for standard deviation and variance
`);
  });
  it('keeps float precision in stddev, and groups by label sets without collisions', async () => {
    // promql/testdata/aggregators.test 199-223
    await expectPromqlScript(String.raw`
clear
load 5m
  http_requests{job="api-server", instance="0", group="production"} 0+1.33x10
  http_requests{job="api-server", instance="1", group="production"} 0+1.33x10
  http_requests{job="api-server", instance="0", group="canary"} 0+1.33x10

eval instant at 50m stddev(http_requests)
  {} 0.0

eval instant at 50m stdvar(http_requests)
  {} 0.0


# Regression test for missing separator byte in labelsToGroupingKey.
clear
load 5m
  label_grouping_test{a="aa", b="bb"} 0+10x10
  label_grouping_test{a="a", b="abb"} 0+20x10

eval instant at 50m sum(label_grouping_test) by (a, b)
  {a="a", b="abb"} 200
  {a="aa", b="bb"} 100
`);
  });
  it('takes min and max, skipping NaN unless all are NaN', async () => {
    // promql/testdata/aggregators.test 224-248
    await expectPromqlScript(String.raw`
# Tests for min/max.
clear
load 5m
  http_requests{job="api-server", instance="0", group="production"}	1
  http_requests{job="api-server", instance="1", group="production"}	2
  http_requests{job="api-server", instance="0", group="canary"}		NaN
  http_requests{job="api-server", instance="1", group="canary"}		3
  http_requests{job="api-server", instance="2", group="canary"}		4

eval instant at 0m max(http_requests)
  {} 4

eval instant at 0m min(http_requests)
  {} 1

eval instant at 0m max by (group) (http_requests)
  {group="production"} 2
  {group="canary"} 4

eval instant at 0m min by (group) (http_requests)
  {group="production"} 1
  {group="canary"} 3

clear
`);
  });
  it('keeps the k largest and smallest with topk and bottomk, NaN last', async () => {
    // promql/testdata/aggregators.test 249-327
    await expectPromqlScript(String.raw`
# Tests for topk/bottomk.
load 5m
	http_requests{job="api-server", instance="0", group="production"}	0+10x10
	http_requests{job="api-server", instance="1", group="production"}	0+20x10
	http_requests{job="api-server", instance="2", group="production"}	NaN NaN NaN NaN NaN NaN NaN NaN NaN NaN
	http_requests{job="api-server", instance="0", group="canary"}		0+30x10
	http_requests{job="api-server", instance="1", group="canary"}		0+40x10
	http_requests{job="app-server", instance="0", group="production"}	0+50x10
	http_requests{job="app-server", instance="1", group="production"}	0+60x10
	http_requests{job="app-server", instance="0", group="canary"}		0+70x10
	http_requests{job="app-server", instance="1", group="canary"}		0+80x10
	foo 3+0x10

eval_ordered instant at 50m topk(3, http_requests)
	http_requests{group="canary", instance="1", job="app-server"} 800
	http_requests{group="canary", instance="0", job="app-server"} 700
	http_requests{group="production", instance="1", job="app-server"} 600

eval_ordered instant at 50m topk((3), (http_requests))
	http_requests{group="canary", instance="1", job="app-server"} 800
	http_requests{group="canary", instance="0", job="app-server"} 700
	http_requests{group="production", instance="1", job="app-server"} 600

eval_ordered instant at 50m topk(5, http_requests{group="canary",job="app-server"})
	http_requests{group="canary", instance="1", job="app-server"} 800
	http_requests{group="canary", instance="0", job="app-server"} 700

eval_ordered instant at 50m bottomk(3, http_requests)
	http_requests{group="production", instance="0", job="api-server"} 100
	http_requests{group="production", instance="1", job="api-server"} 200
	http_requests{group="canary", instance="0", job="api-server"} 300

eval_ordered instant at 50m bottomk(5, http_requests{group="canary",job="app-server"})
	http_requests{group="canary", instance="0", job="app-server"} 700
	http_requests{group="canary", instance="1", job="app-server"} 800

eval instant at 50m topk by (group) (1, http_requests)
  http_requests{group="production", instance="1", job="app-server"} 600
  http_requests{group="canary", instance="1", job="app-server"} 800

eval instant at 50m bottomk by (group) (2, http_requests)
  http_requests{group="canary", instance="0", job="api-server"} 300
  http_requests{group="canary", instance="1", job="api-server"} 400
  http_requests{group="production", instance="0", job="api-server"} 100
  http_requests{group="production", instance="1", job="api-server"} 200

eval_ordered instant at 50m bottomk by (group) (2, http_requests{group="production"})
  http_requests{group="production", instance="0", job="api-server"} 100
  http_requests{group="production", instance="1", job="api-server"} 200

# Test NaN is sorted away from the top/bottom.
eval_ordered instant at 50m topk(3, http_requests{job="api-server",group="production"})
	http_requests{job="api-server", instance="1", group="production"}	200
	http_requests{job="api-server", instance="0", group="production"}	100
	http_requests{job="api-server", instance="2", group="production"}	NaN

eval_ordered instant at 50m bottomk(3, http_requests{job="api-server",group="production"})
	http_requests{job="api-server", instance="0", group="production"}	100
	http_requests{job="api-server", instance="1", group="production"}	200
	http_requests{job="api-server", instance="2", group="production"}	NaN

# Test topk and bottomk allocate min(k, input_vector) for results vector
eval_ordered instant at 50m bottomk(9999999999, http_requests{job="app-server",group="canary"})
	http_requests{group="canary", instance="0", job="app-server"} 700
	http_requests{group="canary", instance="1", job="app-server"} 800

eval_ordered instant at 50m topk(9999999999, http_requests{job="api-server",group="production"})
	http_requests{job="api-server", instance="1", group="production"}	200
	http_requests{job="api-server", instance="0", group="production"}	100
	http_requests{job="api-server", instance="2", group="production"}	NaN

# Bug #5276.
eval_ordered instant at 50m topk(scalar(foo), http_requests)
	http_requests{group="canary", instance="1", job="app-server"} 800
	http_requests{group="canary", instance="0", job="app-server"} 700
	http_requests{group="production", instance="1", job="app-server"} 600

clear
`);
  });
  it('counts values with count_values, the label overwriting its namesake', async () => {
    // promql/testdata/aggregators.test 328-370
    await expectPromqlScript(String.raw`
# Tests for count_values.
load 5m
	version{job="api-server", instance="0", group="production"}	6
	version{job="api-server", instance="1", group="production"}	6
	version{job="api-server", instance="2", group="production"}	6
	version{job="api-server", instance="0", group="canary"}		8
	version{job="api-server", instance="1", group="canary"}		8
	version{job="app-server", instance="0", group="production"}	6
	version{job="app-server", instance="1", group="production"}	6
	version{job="app-server", instance="0", group="canary"}		7
	version{job="app-server", instance="1", group="canary"}		7

eval instant at 5m count_values("version", version)
	{version="6"} 5
	{version="7"} 2
	{version="8"} 2


eval instant at 5m count_values(((("version"))), version)
       {version="6"} 5
       {version="7"} 2
       {version="8"} 2


eval instant at 5m count_values without (instance)("version", version)
	{job="api-server", group="production", version="6"} 3
	{job="api-server", group="canary", version="8"} 2
	{job="app-server", group="production", version="6"} 2
	{job="app-server", group="canary", version="7"} 2

# Overwrite label with output. Don't do this.
eval instant at 5m count_values without (instance)("job", version)
	{job="6", group="production"} 5
	{job="8", group="canary"} 2
	{job="7", group="canary"} 2

# Overwrite label with output. Don't do this.
eval instant at 5m count_values by (job, group)("job", version)
	{job="6", group="production"} 5
	{job="8", group="canary"} 2
	{job="7", group="canary"} 2
`);
  });
  it('interpolates quantile, \u00b1Inf for \u03c6 out of [0, 1]', async () => {
    // promql/testdata/aggregators.test 371-406
    await expectPromqlScript(String.raw`
# Tests for quantile.
clear

load 10s
	data{test="two samples",point="a"} 0
	data{test="two samples",point="b"} 1
	data{test="three samples",point="a"} 0
	data{test="three samples",point="b"} 1
	data{test="three samples",point="c"} 2
	data{test="uneven samples",point="a"} 0
	data{test="uneven samples",point="b"} 1
	data{test="uneven samples",point="c"} 4
	foo .8

eval instant at 1m quantile without(point)(0.8, data)
	{test="two samples"} 0.8
	{test="three samples"} 1.6
	{test="uneven samples"} 2.8

# Bug #5276.
eval instant at 1m quantile without(point)(scalar(foo), data)
	{test="two samples"} 0.8
	{test="three samples"} 1.6
	{test="uneven samples"} 2.8


eval instant at 1m quantile without(point)((scalar(foo)), data)
	{test="two samples"} 0.8
	{test="three samples"} 1.6
	{test="uneven samples"} 2.8

eval instant at 1m quantile without(point)(NaN, data)
    {test="two samples"} NaN
    {test="three samples"} NaN
    {test="uneven samples"} NaN
`);
  });
  it('answers 1 per group with group', async () => {
    // promql/testdata/aggregators.test 407-428
    await expectPromqlScript(String.raw`
# Tests for group.
clear

load 10s
	data{test="two samples",point="a"} 0
	data{test="two samples",point="b"} 1
	data{test="three samples",point="a"} 0
	data{test="three samples",point="b"} 1
	data{test="three samples",point="c"} 2
	data{test="uneven samples",point="a"} 0
	data{test="uneven samples",point="b"} 1
	data{test="uneven samples",point="c"} 4
	foo .8

eval instant at 1m group without(point)(data)
	{test="two samples"} 1
	{test="three samples"} 1
	{test="uneven samples"} 1

eval instant at 1m group(foo)
	{} 1
`);
  });
  it("averages without overflowing, Inf and NaN as Go's float64", async () => {
    // promql/testdata/aggregators.test 429-505
    await expectPromqlScript(String.raw`
# Tests for avg.
clear

load 10s
	data{test="ten",point="a"} 8
	data{test="ten",point="b"} 10
	data{test="ten",point="c"} 12
	data{test="inf",point="a"} 0
	data{test="inf",point="b"} Inf
	data{test="inf",point="d"} Inf
	data{test="inf",point="c"} 0
	data{test="-inf",point="a"} -Inf
	data{test="-inf",point="b"} -Inf
	data{test="-inf",point="c"} 0
	data{test="inf2",point="a"} Inf
	data{test="inf2",point="b"} 0
	data{test="inf2",point="c"} Inf
	data{test="-inf2",point="a"} -Inf
	data{test="-inf2",point="b"} 0
	data{test="-inf2",point="c"} -Inf
	data{test="inf3",point="b"} Inf
	data{test="inf3",point="d"} Inf
	data{test="inf3",point="c"} Inf
	data{test="inf3",point="d"} -Inf
	data{test="-inf3",point="b"} -Inf
	data{test="-inf3",point="d"} -Inf
	data{test="-inf3",point="c"} -Inf
	data{test="-inf3",point="c"} Inf
	data{test="nan",point="a"} -Inf
	data{test="nan",point="b"} 0
	data{test="nan",point="c"} Inf
	data{test="big",point="a"} 9.988465674311579e+307
	data{test="big",point="b"} 9.988465674311579e+307
	data{test="big",point="c"} 9.988465674311579e+307
	data{test="big",point="d"} 9.988465674311579e+307
	data{test="-big",point="a"} -9.988465674311579e+307
	data{test="-big",point="b"} -9.988465674311579e+307
	data{test="-big",point="c"} -9.988465674311579e+307
	data{test="-big",point="d"} -9.988465674311579e+307
	data{test="bigzero",point="a"} -9.988465674311579e+307
	data{test="bigzero",point="b"} -9.988465674311579e+307
	data{test="bigzero",point="c"} 9.988465674311579e+307
	data{test="bigzero",point="d"} 9.988465674311579e+307

eval instant at 1m avg(data{test="ten"})
	{} 10

eval instant at 1m avg(data{test="inf"})
	{} Inf

eval instant at 1m avg(data{test="inf2"})
	{} Inf

eval instant at 1m avg(data{test="inf3"})
	{} NaN

eval instant at 1m avg(data{test="-inf"})
	{} -Inf

eval instant at 1m avg(data{test="-inf2"})
	{} -Inf

eval instant at 1m avg(data{test="-inf3"})
	{} NaN

eval instant at 1m avg(data{test="nan"})
	{} NaN

eval instant at 1m avg(data{test="big"})
	{} 9.988465674311579e+307

eval instant at 1m avg(data{test="-big"})
	{} -9.988465674311579e+307

eval instant at 1m avg(data{test="bigzero"})
	{} 0
`);
  });
});

type Row = { region: string; zone: string; v: number };

/** One series per row at 0 s: metric `g`, labels region, zone and a unique i. */
function seriesOf(rows: Row[]): MemorySeries[] {
  return rows.map((r, i) => ({
    labels: { __name__: 'g', region: r.region, zone: r.zone, i: String(i) },
    samples: [[0, r.v]],
    stale: [0],
  }));
}

const rowsArbitrary = fc.array(
  fc.record({
    region: fc.constantFrom('eu', 'us', 'ap'),
    zone: fc.constantFrom('a', 'b'),
    v: fc.integer({ min: -100, max: 100 }),
  }),
  { minLength: 1, maxLength: 10 },
);

const valuesOf = async (series: MemorySeries[], query: string): Promise<number[]> =>
  vectorOf(await engineOver(series).instantQuery(query, 0)).map(([, v]) => v);

describe('aggregation', { timeout: 60_000 }, () => {
  it('answers sum by the same as adding each group by hand', async () => {
    await fc.assert(
      fc.asyncProperty(rowsArbitrary, async (rows) => {
        const got = vectorOf(
          await engineOver(seriesOf(rows)).instantQuery('sum by (region) (g)', 0),
        );
        const want = new Map<string, number>();
        for (const r of rows) want.set(r.region, (want.get(r.region) ?? 0) + r.v);
        expect(Object.fromEntries(got.map(([l, v]) => [JSON.stringify(l), v]))).toEqual(
          Object.fromEntries([...want].map(([region, v]) => [JSON.stringify({ region }), v])),
        );
      }),
    );
  });

  it('keeps exactly the labels of by, and all but those of without and __name__', async () => {
    await fc.assert(
      fc.asyncProperty(rowsArbitrary, async (rows) => {
        const engine = engineOver(seriesOf(rows));
        for (const query of ['count by (region, zone) (g)', 'count without (i) (g)']) {
          const got = vectorOf(await engine.instantQuery(query, 0));
          const groups = new Set(rows.map((r) => `${r.region}/${r.zone}`));
          expect(got.map(([l]) => `${l.region}/${l.zone}`).sort(), query).toEqual(
            [...groups].sort(),
          );
          for (const [labels] of got)
            expect(Object.keys(labels).sort()).toEqual(['region', 'zone']);
          expect(got.reduce((n, [, v]) => n + v, 0)).toBe(rows.length);
        }
      }),
    );
  });

  it('keeps the k largest values in topk and the k smallest in bottomk', async () => {
    await fc.assert(
      fc.asyncProperty(rowsArbitrary, fc.integer({ min: 1, max: 12 }), async (rows, k) => {
        const series = seriesOf(rows);
        const values = rows.map((r) => r.v);
        const desc = (a: number, b: number): number => b - a;
        const top = await valuesOf(series, `topk(${k}, g)`);
        expect([...top].sort(desc)).toEqual([...values].sort(desc).slice(0, k));
        const bottom = await valuesOf(series, `bottomk(${k}, g)`);
        expect([...bottom].sort(desc)).toEqual(
          [...values]
            .sort((a, b) => a - b)
            .slice(0, k)
            .sort(desc),
        );
        // Each keeps its series whole: the labels it had, the metric name included.
        const got = vectorOf(await engineOver(series).instantQuery(`topk(${k}, g)`, 0));
        for (const [labels, v] of got) expect(rows[Number(labels.i)]!.v).toBe(v);
        for (const [labels] of got) expect(labels.__name__).toBe('g');
      }),
    );
  });

  it('answers min, max and avg as their definitions, and quantile 0 and 1 as min and max', async () => {
    await fc.assert(
      fc.asyncProperty(rowsArbitrary, async (rows) => {
        const series = seriesOf(rows);
        const values = rows.map((r) => r.v);
        const one = async (query: string): Promise<number> => (await valuesOf(series, query))[0]!;
        expect(await one('min(g)')).toBe(Math.min(...values));
        expect(await one('max(g)')).toBe(Math.max(...values));
        expect(await one('quantile(0, g)')).toBe(Math.min(...values));
        expect(await one('quantile(1, g)')).toBe(Math.max(...values));
        expect(await one('avg(g)')).toBeCloseTo(
          values.reduce((a, b) => a + b, 0) / values.length,
          9,
        );
        expect(await one('group(g)')).toBe(1);
        expect(await one('count(g)')).toBe(values.length);
      }),
    );
  });

  it('takes NaN into sum and avg, counts it, and leaves it out of min and max', async () => {
    const series = seriesOf([
      { region: 'eu', zone: 'a', v: 1 },
      { region: 'eu', zone: 'b', v: NaN },
      { region: 'eu', zone: 'a', v: 3 },
    ]);
    const engine = engineOver(series);
    const one = async (query: string): Promise<number> =>
      rowsOf(await engine.instantQuery(query, 0))[0]![1];
    expect(await one('sum(g)')).toBeNaN();
    expect(await one('avg(g)')).toBeNaN();
    expect(await one('count(g)')).toBe(3);
    expect(await one('min(g)')).toBe(1);
    expect(await one('max(g)')).toBe(3);
    expect(await one('stddev(g)')).toBeNaN();
    // topk puts NaN last: it is kept only when k exceeds the other values.
    expect(
      vectorOf(await engine.instantQuery('topk(2, g)', 0))
        .map(([, v]) => v)
        .sort(),
    ).toEqual([1, 3]);
  });

  it('counts each value once per group with count_values, its label formatted as Go does', async () => {
    const series = seriesOf([
      { region: 'eu', zone: 'a', v: 1 },
      { region: 'eu', zone: 'b', v: 1 },
      { region: 'us', zone: 'a', v: 0.5 },
    ]);
    expect(
      rowsOf(await engineOver(series).instantQuery('count_values by (region) ("value", g)', 0)),
    ).toEqual([
      [{ region: 'eu', value: '1' }, 2],
      [{ region: 'us', value: '0.5' }, 1],
    ]);
  });
});
