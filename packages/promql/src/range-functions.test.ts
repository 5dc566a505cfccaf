import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { counterResets, extrapolatedRateOf } from './functions.js';
import type { MemorySeries } from './memory-series-source.js';
import {
  engineOver,
  everyInterval,
  expectPromqlScript,
  vectorOf,
} from './testing/engine-fixture.js';

// The scripts are Prometheus 2.42's own tests (Copyright The Prometheus Authors, Apache License
// 2.0, as this project), copied verbatim with their expected values from
// promql/testdata/<file>.test at tag v2.42.0 (the lines named in each case): each evaluation runs as
// an instant query and as the middle step of a range query, as Prometheus' test runner does.
describe('range functions, as Prometheus 2.42 tests them', { timeout: 60_000 }, () => {
  it('counts resets and changes, a NaN after a value being a change', async () => {
    // promql/testdata/functions.test 1-68
    await expectPromqlScript(String.raw`
# Testdata for resets() and changes().
load 5m
	http_requests{path="/foo"}	1 2 3 0 1 0 0 1 2 0
	http_requests{path="/bar"}	1 2 3 4 5 1 2 3 4 5
	http_requests{path="/biz"}	0 0 0 0 0 1 1 1 1 1

# Tests for resets().
eval instant at 50m resets(http_requests[5m])
	{path="/foo"} 0
	{path="/bar"} 0
	{path="/biz"} 0

eval instant at 50m resets(http_requests[20m])
	{path="/foo"} 1
	{path="/bar"} 0
	{path="/biz"} 0

eval instant at 50m resets(http_requests[30m])
	{path="/foo"} 2
	{path="/bar"} 1
	{path="/biz"} 0

eval instant at 50m resets(http_requests[50m])
	{path="/foo"} 3
	{path="/bar"} 1
	{path="/biz"} 0

eval instant at 50m resets(nonexistent_metric[50m])

# Tests for changes().
eval instant at 50m changes(http_requests[5m])
	{path="/foo"} 0
	{path="/bar"} 0
	{path="/biz"} 0

eval instant at 50m changes(http_requests[20m])
	{path="/foo"} 3
	{path="/bar"} 3
	{path="/biz"} 0

eval instant at 50m changes(http_requests[30m])
	{path="/foo"} 4
	{path="/bar"} 5
	{path="/biz"} 1

eval instant at 50m changes(http_requests[50m])
	{path="/foo"} 8
	{path="/bar"} 9
	{path="/biz"} 1

eval instant at 50m changes((http_requests[50m]))
	{path="/foo"} 8
	{path="/bar"} 9
	{path="/biz"} 1

eval instant at 50m changes(nonexistent_metric[50m])

clear

load 5m
  x{a="b"} NaN NaN NaN
  x{a="c"} 0 NaN 0

eval instant at 15m changes(x[15m])
  {a="b"} 0
  {a="c"} 2

clear
`);
  });
  it('extrapolates increase and rate, adding the value before each counter reset', async () => {
    // promql/testdata/functions.test 70-154
    await expectPromqlScript(String.raw`
# Tests for increase().
load 5m
	http_requests{path="/foo"}	0+10x10
	http_requests{path="/bar"}	0+10x5 0+10x5

# Tests for increase().
eval instant at 50m increase(http_requests[50m])
	{path="/foo"} 100
	{path="/bar"}  90

eval instant at 50m increase(http_requests[100m])
	{path="/foo"} 100
	{path="/bar"}  90

clear

# Test for increase() with counter reset.
# When the counter is reset, it always starts at 0.
# So the sequence 3 2 (decreasing counter = reset) is interpreted the same as 3 0 1 2.
# Prometheus assumes it missed the intermediate values 0 and 1.
load 5m
	http_requests{path="/foo"}	0 1 2 3 2 3 4

eval instant at 30m increase(http_requests[30m])
    {path="/foo"} 7

clear

# Tests for rate().
load 5m
	testcounter_reset_middle	0+10x4 0+10x5
	testcounter_reset_end    	0+10x9 0 10

# Counter resets at in the middle of range are handled correctly by rate().
eval instant at 50m rate(testcounter_reset_middle[50m])
	{} 0.03

# Counter resets at end of range are ignored by rate().
eval instant at 50m rate(testcounter_reset_end[5m])
	{} 0

clear

load 5m
	calculate_rate_offset{x="a"}	0+10x10
	calculate_rate_offset{x="b"}	0+20x10
	calculate_rate_window		0+80x10

# Rates should calculate per-second rates.
eval instant at 50m rate(calculate_rate_window[50m])
	{} 0.26666666666666666

eval instant at 50m rate(calculate_rate_offset[10m] offset 5m)
	{x="a"} 0.03333333333333333
	{x="b"} 0.06666666666666667

clear

load 4m
	testcounter_zero_cutoff{start="0m"}	0+240x10
	testcounter_zero_cutoff{start="1m"}	60+240x10
	testcounter_zero_cutoff{start="2m"}	120+240x10
	testcounter_zero_cutoff{start="3m"}	180+240x10
	testcounter_zero_cutoff{start="4m"}	240+240x10
	testcounter_zero_cutoff{start="5m"}	300+240x10

# Zero cutoff for left-side extrapolation.
eval instant at 10m rate(testcounter_zero_cutoff[20m])
	{start="0m"} 0.5
	{start="1m"} 0.55
	{start="2m"} 0.6
	{start="3m"} 0.65
	{start="4m"} 0.7
	{start="5m"} 0.6

# Normal half-interval cutoff for left-side extrapolation.
eval instant at 50m rate(testcounter_zero_cutoff[20m])
	{start="0m"} 0.6
	{start="1m"} 0.6
	{start="2m"} 0.6
	{start="3m"} 0.6
	{start="4m"} 0.6
	{start="5m"} 0.6

clear
`);
  });
  it('takes irate, delta and idelta from the last samples', async () => {
    // promql/testdata/functions.test 156-192
    await expectPromqlScript(String.raw`
# Tests for irate().
load 5m
	http_requests{path="/foo"}	0+10x10
	http_requests{path="/bar"}	0+10x5 0+10x5

eval instant at 50m irate(http_requests[50m])
	{path="/foo"} .03333333333333333333
	{path="/bar"} .03333333333333333333

# Counter reset.
eval instant at 30m irate(http_requests[50m])
	{path="/foo"} .03333333333333333333
	{path="/bar"} 0

clear

# Tests for delta().
load 5m
	http_requests{path="/foo"}	0 50 100 150 200
	http_requests{path="/bar"}	200 150 100 50 0

eval instant at 20m delta(http_requests[20m])
	{path="/foo"} 200
	{path="/bar"} -200

clear

# Tests for idelta().
load 5m
	http_requests{path="/foo"}	0 50 100 150
	http_requests{path="/bar"}	0 50 100 50

eval instant at 20m idelta(http_requests[20m])
	{path="/foo"} 50
	{path="/bar"} -50

clear
`);
  });
  it('fits deriv and predict_linear by least squares', async () => {
    // promql/testdata/functions.test 194-245
    await expectPromqlScript(String.raw`
# Tests for deriv() and predict_linear().
load 5m
	testcounter_reset_middle	0+10x4 0+10x5
	http_requests{job="app-server", instance="1", group="canary"}		0+80x10

# deriv should return the same as rate in simple cases.
eval instant at 50m rate(http_requests{group="canary", instance="1", job="app-server"}[50m])
	{group="canary", instance="1", job="app-server"} 0.26666666666666666

eval instant at 50m deriv(http_requests{group="canary", instance="1", job="app-server"}[50m])
	{group="canary", instance="1", job="app-server"} 0.26666666666666666

# deriv should return correct result.
eval instant at 50m deriv(testcounter_reset_middle[100m])
	{} 0.010606060606060607

# predict_linear should return correct result.
# X/s = [  0, 300, 600, 900,1200,1500,1800,2100,2400,2700,3000]
# Y   = [  0,  10,  20,  30,  40,   0,  10,  20,  30,  40,  50]
# sumX  = 16500
# sumY  = 250
# sumXY = 480000
# sumX2 = 34650000
# n     = 11
# covXY = 105000
# varX  = 9900000
# slope = 0.010606060606060607
# intercept at t=0: 6.818181818181818
# intercept at t=3000: 38.63636363636364
# intercept at t=3000+3600: 76.81818181818181
eval instant at 50m predict_linear(testcounter_reset_middle[100m], 3600)
	{} 76.81818181818181

# intercept at t = 3000+3600 = 6600
eval instant at 50m predict_linear(testcounter_reset_middle[100m] @ 3000, 3600)
	{} 76.81818181818181

# intercept at t = 600+3600 = 4200
eval instant at 10m predict_linear(testcounter_reset_middle[100m] @ 3000, 3600)
	{} 51.36363636363637

# intercept at t = 4200+3600 = 7800
eval instant at 70m predict_linear(testcounter_reset_middle[100m] @ 3000, 3600)
	{} 89.54545454545455

# With http_requests, there is a sample value exactly at the end of
# the range, and it has exactly the predicted value, so predict_linear
# can be emulated with deriv.
eval instant at 50m predict_linear(http_requests[50m], 3600) - (http_requests + deriv(http_requests[50m]) * 3600)
	{group="canary", instance="1", job="app-server"} 0

clear
`);
  });
  it('smooths with holt_winters', async () => {
    // promql/testdata/functions.test 472-501
    await expectPromqlScript(String.raw`
# Tests for holt_winters
clear

# positive trends
load 10s
	http_requests{job="api-server", instance="0", group="production"}	0+10x1000 100+30x1000
	http_requests{job="api-server", instance="1", group="production"}	0+20x1000 200+30x1000
	http_requests{job="api-server", instance="0", group="canary"}		0+30x1000 300+80x1000
	http_requests{job="api-server", instance="1", group="canary"}		0+40x2000

eval instant at 8000s holt_winters(http_requests[1m], 0.01, 0.1)
	{job="api-server", instance="0", group="production"} 8000
	{job="api-server", instance="1", group="production"} 16000
	{job="api-server", instance="0", group="canary"} 24000
	{job="api-server", instance="1", group="canary"} 32000

# negative trends
clear
load 10s
	http_requests{job="api-server", instance="0", group="production"}	8000-10x1000
	http_requests{job="api-server", instance="1", group="production"}	0-20x1000
	http_requests{job="api-server", instance="0", group="canary"}		0+30x1000 300-80x1000
	http_requests{job="api-server", instance="1", group="canary"}		0-40x1000 0+40x1000

eval instant at 8000s holt_winters(http_requests[1m], 0.01, 0.1)
	{job="api-server", instance="0", group="production"} 0
	{job="api-server", instance="1", group="production"} -16000
	{job="api-server", instance="0", group="canary"} 24000
	{job="api-server", instance="1", group="canary"} -32000
`);
  });
  it('averages and sums over time without overflowing, keeping NaN and Inf', async () => {
    // promql/testdata/functions.test 502-606
    await expectPromqlScript(String.raw`
# Tests for avg_over_time
clear
load 10s
  metric 1 2 3 4 5
  metric2 1 2 3 4 Inf
  metric3 1 2 3 4 -Inf
  metric4 1 2 3 Inf -Inf
  metric5 Inf 0 Inf
  metric5b Inf 0 Inf
  metric5c Inf Inf Inf -Inf
  metric6 1 2 3 -Inf -Inf
  metric6b -Inf 0 -Inf
  metric6c -Inf -Inf -Inf Inf
  metric7 1 2 -Inf -Inf Inf
  metric8 9.988465674311579e+307 9.988465674311579e+307
  metric9 -9.988465674311579e+307 -9.988465674311579e+307 -9.988465674311579e+307
  metric10 -9.988465674311579e+307 9.988465674311579e+307

eval instant at 1m avg_over_time(metric[1m])
  {} 3

eval instant at 1m sum_over_time(metric[1m])/count_over_time(metric[1m])
  {} 3

eval instant at 1m avg_over_time(metric2[1m])
  {} Inf

eval instant at 1m sum_over_time(metric2[1m])/count_over_time(metric2[1m])
  {} Inf

eval instant at 1m avg_over_time(metric3[1m])
  {} -Inf

eval instant at 1m sum_over_time(metric3[1m])/count_over_time(metric3[1m])
  {} -Inf

eval instant at 1m avg_over_time(metric4[1m])
  {} NaN

eval instant at 1m sum_over_time(metric4[1m])/count_over_time(metric4[1m])
  {} NaN

eval instant at 1m avg_over_time(metric5[1m])
  {} Inf

eval instant at 1m sum_over_time(metric5[1m])/count_over_time(metric5[1m])
  {} Inf

eval instant at 1m avg_over_time(metric5b[1m])
  {} Inf

eval instant at 1m sum_over_time(metric5b[1m])/count_over_time(metric5b[1m])
  {} Inf

eval instant at 1m avg_over_time(metric5c[1m])
  {} NaN

eval instant at 1m sum_over_time(metric5c[1m])/count_over_time(metric5c[1m])
  {} NaN

eval instant at 1m avg_over_time(metric6[1m])
  {} -Inf

eval instant at 1m sum_over_time(metric6[1m])/count_over_time(metric6[1m])
  {} -Inf

eval instant at 1m avg_over_time(metric6b[1m])
  {} -Inf

eval instant at 1m sum_over_time(metric6b[1m])/count_over_time(metric6b[1m])
  {} -Inf

eval instant at 1m avg_over_time(metric6c[1m])
  {} NaN

eval instant at 1m sum_over_time(metric6c[1m])/count_over_time(metric6c[1m])
  {} NaN


eval instant at 1m avg_over_time(metric7[1m])
  {} NaN

eval instant at 1m sum_over_time(metric7[1m])/count_over_time(metric7[1m])
  {} NaN

eval instant at 1m avg_over_time(metric8[1m])
  {} 9.988465674311579e+307

# This overflows float64.
eval instant at 1m sum_over_time(metric8[1m])/count_over_time(metric8[1m])
  {} Inf

eval instant at 1m avg_over_time(metric9[1m])
  {} -9.988465674311579e+307

# This overflows float64.
eval instant at 1m sum_over_time(metric9[1m])/count_over_time(metric9[1m])
  {} -Inf

eval instant at 1m avg_over_time(metric10[1m])
  {} 0

eval instant at 1m sum_over_time(metric10[1m])/count_over_time(metric10[1m])
  {} 0
`);
  });
  it('takes stddev_over_time and stdvar_over_time', async () => {
    // promql/testdata/functions.test 607-631
    await expectPromqlScript(String.raw`
# Tests for stddev_over_time and stdvar_over_time.
clear
load 10s
  metric 0 8 8 2 3

eval instant at 1m stdvar_over_time(metric[1m])
  {} 10.56

eval instant at 1m stddev_over_time(metric[1m])
  {} 3.249615

eval instant at 1m stddev_over_time((metric[1m]))
  {} 3.249615

# Tests for stddev_over_time and stdvar_over_time #4927.
clear
load 10s
  metric 1.5990505637277868 1.5990505637277868 1.5990505637277868

eval instant at 1m stdvar_over_time(metric[1m])
  {} 0

eval instant at 1m stddev_over_time(metric[1m])
  {} 0
`);
  });
  it('takes quantile_over_time, NaN out of [0, 1] as \u00b1Inf', async () => {
    // promql/testdata/functions.test 632-679
    await expectPromqlScript(String.raw`
# Tests for quantile_over_time
clear

load 10s
	data{test="two samples"} 0 1
	data{test="three samples"} 0 1 2
	data{test="uneven samples"} 0 1 4

eval instant at 1m quantile_over_time(0, data[1m])
	{test="two samples"} 0
	{test="three samples"} 0
	{test="uneven samples"} 0

eval instant at 1m quantile_over_time(0.5, data[1m])
	{test="two samples"} 0.5
	{test="three samples"} 1
	{test="uneven samples"} 1

eval instant at 1m quantile_over_time(0.75, data[1m])
	{test="two samples"} 0.75
	{test="three samples"} 1.5
	{test="uneven samples"} 2.5

eval instant at 1m quantile_over_time(0.8, data[1m])
	{test="two samples"} 0.8
	{test="three samples"} 1.6
	{test="uneven samples"} 2.8

eval instant at 1m quantile_over_time(1, data[1m])
	{test="two samples"} 1
	{test="three samples"} 2
	{test="uneven samples"} 4

eval instant at 1m quantile_over_time(-1, data[1m])
	{test="two samples"} -Inf
	{test="three samples"} -Inf
	{test="uneven samples"} -Inf

eval instant at 1m quantile_over_time(2, data[1m])
	{test="two samples"} +Inf
	{test="three samples"} +Inf
	{test="uneven samples"} +Inf

eval instant at 1m (quantile_over_time(2, (data[1m])))
	{test="two samples"} +Inf
	{test="three samples"} +Inf
	{test="uneven samples"} +Inf
`);
  });
  it('refuses duplicate output label sets and answers the *_over_time family', async () => {
    // promql/testdata/functions.test 764-803
    await expectPromqlScript(String.raw`
clear

# Test duplicate labelset in promql output.
load 5m
  testmetric1{src="a",dst="b"} 0
  testmetric2{src="a",dst="b"} 1

eval_fail instant at 0m changes({__name__=~'testmetric1|testmetric2'}[5m])

# Tests for *_over_time
clear

load 10s
	data{type="numbers"} 2 0 3
	data{type="some_nan"} 2 0 NaN
	data{type="some_nan2"} 2 NaN 1
	data{type="some_nan3"} NaN 0 1
	data{type="only_nan"} NaN NaN NaN

eval instant at 1m min_over_time(data[1m])
	{type="numbers"} 0
	{type="some_nan"} 0
	{type="some_nan2"} 1
	{type="some_nan3"} 0
	{type="only_nan"} NaN

eval instant at 1m max_over_time(data[1m])
	{type="numbers"} 3
	{type="some_nan"} 2
	{type="some_nan2"} 2
	{type="some_nan3"} 1
	{type="only_nan"} NaN

eval instant at 1m last_over_time(data[1m])
	data{type="numbers"} 3
	data{type="some_nan"} NaN
	data{type="some_nan2"} 1
	data{type="some_nan3"} 1
	data{type="only_nan"} NaN
`);
  });
  it('answers present_over_time', async () => {
    // promql/testdata/functions.test 918-977
    await expectPromqlScript(String.raw`
# Testdata for present_over_time()
eval instant at 1m present_over_time(http_requests[5m])

eval instant at 1m present_over_time(http_requests{handler="/foo"}[5m])

eval instant at 1m present_over_time(http_requests{handler!="/foo"}[5m])

eval instant at 1m present_over_time(http_requests{handler="/foo", handler="/bar", handler="/foobar"}[5m])

eval instant at 1m present_over_time(rate(nonexistant[5m])[5m:])

eval instant at 1m present_over_time(http_requests{handler="/foo", handler="/bar", instance="127.0.0.1"}[5m])

load 1m
	http_requests{path="/foo",instance="127.0.0.1",job="httpd"}	1+1x10
	http_requests{path="/bar",instance="127.0.0.1",job="httpd"}	1+1x10
	httpd_handshake_failures_total{instance="127.0.0.1",job="node"}	1+1x15
	httpd_log_lines_total{instance="127.0.0.1",job="node"}	1
	ssl_certificate_expiry_seconds{job="ingress"} NaN NaN NaN NaN NaN

eval instant at 5m present_over_time(http_requests[5m])
    {instance="127.0.0.1", job="httpd", path="/bar"} 1
    {instance="127.0.0.1", job="httpd", path="/foo"} 1

eval instant at 5m present_over_time(rate(http_requests[5m])[5m:1m])
    {instance="127.0.0.1", job="httpd", path="/bar"} 1
    {instance="127.0.0.1", job="httpd", path="/foo"} 1

eval instant at 0m present_over_time(httpd_log_lines_total[30s])
    {instance="127.0.0.1",job="node"} 1

eval instant at 1m present_over_time(httpd_log_lines_total[30s])

eval instant at 15m present_over_time(http_requests[5m])
    {instance="127.0.0.1", job="httpd", path="/bar"} 1
    {instance="127.0.0.1", job="httpd", path="/foo"} 1

eval instant at 16m present_over_time(http_requests[5m])

eval instant at 16m present_over_time(http_requests[6m])
    {instance="127.0.0.1", job="httpd", path="/bar"} 1
    {instance="127.0.0.1", job="httpd", path="/foo"} 1

eval instant at 16m present_over_time(httpd_handshake_failures_total[1m])
    {instance="127.0.0.1", job="node"} 1

eval instant at 16m present_over_time({instance="127.0.0.1"}[5m])
    {instance="127.0.0.1",job="node"} 1

eval instant at 21m present_over_time({job="grok"}[20m])

eval instant at 30m present_over_time({instance="127.0.0.1"}[5m:5s])

eval instant at 5m present_over_time({job="ingress"}[4m])
    {job="ingress"} 1

eval instant at 10m present_over_time({job="ingress"}[4m])

clear
`);
  });
  it('ends a series at a staleness marker, for selectors and range functions', async () => {
    // promql/testdata/staleness.test 1-51
    await expectPromqlScript(String.raw`
load 10s
  metric 0 1 stale 2

# Instant vector doesn't return series when stale.
eval instant at 10s metric
  {__name__="metric"} 1

eval instant at 20s metric

eval instant at 30s metric
  {__name__="metric"} 2

eval instant at 40s metric
  {__name__="metric"} 2

# It goes stale 5 minutes after the last sample.
eval instant at 330s metric
  {__name__="metric"} 2

eval instant at 331s metric


# Range vector ignores stale sample.
eval instant at 30s count_over_time(metric[1m])
  {} 3

eval instant at 10s count_over_time(metric[1s])
  {} 1

eval instant at 20s count_over_time(metric[1s])

eval instant at 20s count_over_time(metric[10s])
  {} 1


clear

load 10s
  metric 0

# Series with single point goes stale after 5 minutes.
eval instant at 0s metric
  {__name__="metric"} 0

eval instant at 150s metric
  {__name__="metric"} 0

eval instant at 300s metric
  {__name__="metric"} 0

eval instant at 301s metric
`);
  });
});

const counter = (samples: [number, number][]): MemorySeries[] => [
  { labels: { __name__: 'c', host: 'a' }, samples },
];

describe('range functions', { timeout: 60_000 }, () => {
  it('extrapolates rate to the range boundaries as Prometheus does', async () => {
    // Samples 0, 15 s … 300 s, counter going up by 15 per sample (1/s).
    const engine = engineOver([
      everyInterval(15_000, { __name__: 'c', host: 'a' }, 21, (i) => 100 + i * 15),
    ]);
    // Window [0, 300 s]: 21 samples cover it exactly: no extrapolation, 300/300.
    expect(vectorOf(await engine.instantQuery('rate(c[5m])', 300_000))).toEqual([
      [{ host: 'a' }, 1],
    ]);
    // Window [10 s, 310 s]: samples 15 s … 300 s (sampled 285 s, 19 intervals of 15 s); both
    // gaps (5 s, 10 s) are under 1.1 × 15 s, so the increase 285 extrapolates to 300 s.
    const [[, rate]] = vectorOf(await engine.instantQuery('rate(c[5m])', 310_000)) as [
      [unknown, number],
    ];
    expect(rate).toBeCloseTo(1, 12);
  });

  it('extrapolates by half an interval only, past a gap longer than 1.1 intervals', async () => {
    // Samples at 100 s … 200 s every 10 s, +10 each: window [0, 300 s] at t = 300 s. Both gaps
    // (100 s) exceed 1.1 × 10 s, so each side extrapolates by 5 s: increase 100 × 110 / 100.
    const engine = engineOver(
      counter(
        Array.from({ length: 11 }, (_, i): [number, number] => [
          100_000 + i * 10_000,
          1000 + i * 10,
        ]),
      ),
    );
    const [[, gapped]] = vectorOf(await engine.instantQuery('increase(c[5m])', 300_000)) as [
      [unknown, number],
    ];
    expect(gapped).toBeCloseTo(110, 9);
    // A counter is not extrapolated below zero: from 2 at 100 s rising 10 per 10 s, zero lies
    // 2 s before the first sample, so the left side extrapolates by 2 s: 100 × 107 / 100.
    const fromTwo = engineOver(
      counter(
        Array.from({ length: 11 }, (_, i): [number, number] => [100_000 + i * 10_000, 2 + i * 10]),
      ),
    );
    const [[, increase]] = vectorOf(await fromTwo.instantQuery('increase(c[5m])', 300_000)) as [
      [unknown, number],
    ];
    expect(increase).toBeCloseTo(107, 9);
  });

  it('adds the value before a counter reset to increase', async () => {
    const values = [0, 10, 20, 5, 15];
    const engine = engineOver(counter(values.map((v, i) => [i * 60_000, v])));
    // Raw increase 15 - 0 + 20 (the reset) = 35 over 240 s sampled, in a [0, 240 s] window.
    expect(vectorOf(await engine.instantQuery('increase(c[4m])', 240_000))).toEqual([
      [{ host: 'a' }, 35],
    ]);
    expect(vectorOf(await engine.instantQuery('resets(c[4m])', 240_000))).toEqual([
      [{ host: 'a' }, 1],
    ]);
  });

  it('answers nothing with fewer than two samples in the window', async () => {
    const engine = engineOver(counter([[0, 1]]));
    for (const f of ['rate', 'irate', 'increase', 'delta', 'idelta', 'deriv']) {
      expect(vectorOf(await engine.instantQuery(`${f}(c[1m])`, 30_000)), f).toEqual([]);
    }
    expect(vectorOf(await engine.instantQuery('count_over_time(c[1m])', 30_000))).toEqual([
      [{ host: 'a' }, 1],
    ]);
  });

  it('lets NaN and ±Inf through the *_over_time functions as Go arithmetic does', async () => {
    // Flagged markers only: the NaN values here are values.
    const engine = engineOver([
      {
        labels: { __name__: 'g' },
        samples: [
          [0, NaN],
          [10_000, 1],
          [20_000, Infinity],
          [30_000, -Infinity],
          [40_000, NaN],
        ],
        stale: [0, 0, 0, 0, 0],
      },
    ]);
    const at = async (query: string): Promise<number[]> =>
      vectorOf(await engine.instantQuery(query, 40_000)).map(([, v]) => v);
    expect(await at('count_over_time(g[1m])')).toEqual([5]);
    // max/min skip NaN unless it is all there is (Prometheus: `cur > max || IsNaN(max)`).
    expect(await at('max_over_time(g[1m])')).toEqual([Infinity]);
    expect(await at('min_over_time(g[1m])')).toEqual([-Infinity]);
    expect(await at('max_over_time(g[5s] offset 40s)')).toEqual([NaN]);
    expect(await at('sum_over_time(g[1m])')).toEqual([NaN]);
    expect(await at('sum_over_time(g[15s] offset 20s)')).toEqual([Infinity]);
    expect(await at('avg_over_time(g[15s] offset 10s)')).toEqual([NaN]);
    expect(await at('last_over_time(g[1m])')).toEqual([NaN]);
    expect(await at('present_over_time(g[1m])')).toEqual([1]);
  });

  it('leaves staleness markers out of the windows of rate, increase and delta', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.integer({ min: 1, max: 40_000 }),
            fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.constant(NaN)),
          ),
          { minLength: 0, maxLength: 60 },
        ),
        async (gaps) => {
          let t = 0;
          // Without stale flags, the memory source takes every NaN for a staleness marker.
          const samples: [number, number][] = gaps.map(([gap, v]) => [(t += gap), v]);
          const engine = engineOver(counter(samples));
          // The same series without its markers: for range functions they are not samples.
          const plain = engineOver(counter(samples.filter(([, v]) => !Number.isNaN(v))));
          for (const f of ['rate', 'increase', 'delta']) {
            const query = `${f}(c[2m])`;
            const got = await engine.rangeQuery(query, 0, t + 60_000, 7_000);
            expect(got).toEqual(await plain.rangeQuery(query, 0, t + 60_000, 7_000));
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  // Samples at distinct whole seconds with small integer values, so that sums are exact.
  const samplesArbitrary = fc
    .uniqueArray(fc.tuple(fc.integer({ min: 0, max: 600 }), fc.integer({ min: -50, max: 50 })), {
      selector: ([s]) => s,
      minLength: 1,
      maxLength: 40,
    })
    .map((pairs) =>
      [...pairs].sort(([a], [b]) => a - b).map(([s, v]): [number, number] => [s * 1000, v]),
    );

  it('answers the *_over_time family as a model over the window [t - range, t] does', async () => {
    await fc.assert(
      fc.asyncProperty(
        samplesArbitrary,
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 0, max: 700 }),
        async (samples, rangeSeconds, atSeconds) => {
          const engine = engineOver(counter(samples));
          const t = atSeconds * 1000;
          const inWindow = samples
            .filter(([ts]) => ts >= t - rangeSeconds * 1000 && ts <= t)
            .map(([, v]) => v);
          const model: Record<string, (vs: number[]) => number> = {
            count_over_time: (vs) => vs.length,
            sum_over_time: (vs) => vs.reduce((a, b) => a + b, 0),
            max_over_time: (vs) => Math.max(...vs),
            min_over_time: (vs) => Math.min(...vs),
            changes: (vs) => vs.filter((v, i) => i > 0 && v !== vs[i - 1]).length,
            resets: (vs) => vs.filter((v, i) => i > 0 && v < vs[i - 1]!).length,
          };
          for (const [f, of] of Object.entries(model)) {
            const got = vectorOf(await engine.instantQuery(`${f}(c[${rangeSeconds}s])`, t));
            expect(got, f).toEqual(inWindow.length === 0 ? [] : [[{ host: 'a' }, of(inWindow)]]);
          }
          // last_over_time alone keeps the metric name (Prometheus 2.42's engine, dropName).
          expect(
            vectorOf(await engine.instantQuery(`last_over_time(c[${rangeSeconds}s])`, t)),
          ).toEqual(inWindow.length === 0 ? [] : [[{ __name__: 'c', host: 'a' }, inWindow.at(-1)]]);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('answers increase as rate × the range, and never a negative rate of a counter', async () => {
    await fc.assert(
      fc.asyncProperty(
        samplesArbitrary,
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 0, max: 700 }),
        async (samples, rangeSeconds, atSeconds) => {
          const engine = engineOver(counter(samples.map(([t, v]) => [t, Math.abs(v)])));
          const at = async (query: string): Promise<number[]> =>
            vectorOf(await engine.instantQuery(query, atSeconds * 1000)).map(([, v]) => v);
          const rate = await at(`rate(c[${rangeSeconds}s])`);
          const increase = await at(`increase(c[${rangeSeconds}s])`);
          expect(increase.length).toBe(rate.length);
          rate.forEach((r, i) => {
            expect(r).toBeGreaterThanOrEqual(0);
            expect(increase[i]).toBeCloseTo(r * rangeSeconds, 6);
          });
        },
      ),
      { numRuns: 80 },
    );
  });
});

/** Prometheus' counter correction, sample by sample: the reference for counterResets' jumps. */
function resetsAddedOneByOne(values: number[], lo: number, hi: number): number {
  let added = values[hi - 1]! - values[lo]!;
  let previous = values[lo]!;
  for (let i = lo + 1; i < hi; i++) {
    if (values[i]! < previous) added += previous;
    previous = values[i]!;
  }
  return added;
}

describe('extrapolatedRateOf with counterResets', () => {
  it('adds the same resets in the same order as comparing every sample, to the bit', () => {
    const valueArbitrary = fc.oneof(
      fc.double(),
      fc.integer({ min: 0, max: 20 }),
      fc.constantFrom(NaN, -0, Infinity),
    );
    fc.assert(
      fc.property(
        fc.array(valueArbitrary, { minLength: 2, maxLength: 60 }),
        fc.nat(),
        fc.nat(),
        (values, a, b) => {
          const lo = a % (values.length - 1);
          const hi = lo + 2 + (b % (values.length - lo - 1));
          const times = values.map((_, i) => i * 15_000);
          const window = { rangeStart: times[lo]!, rangeEnd: times[hi - 1]!, rangeMs: 60_000 };
          // With the window exactly on its first and last samples the result is the increase
          // itself: nothing is extrapolated.
          const got = extrapolatedRateOf(
            times,
            values,
            counterResets(values),
            lo,
            hi,
            window,
            false,
          );
          const want = resetsAddedOneByOne(values, lo, hi);
          expect(Object.is(got, want) || (Number.isNaN(got) && Number.isNaN(want))).toBe(true);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
