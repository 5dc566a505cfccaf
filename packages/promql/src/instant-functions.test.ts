import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MemorySeries } from './memory-series-source.js';
import { engineOver, expectPromqlScript, rowsOf, vectorOf } from './testing/engine-fixture.js';

// The scripts are Prometheus 2.42's own tests (Copyright The Prometheus Authors, Apache License
// 2.0, as this project), copied verbatim with their expected values from
// promql/testdata/<file>.test at tag v2.42.0 (the lines named in each case): each evaluation runs as
// an instant query and as the middle step of a range query, as Prometheus' test runner does.
describe('instant functions, as Prometheus 2.42 tests them', { timeout: 60_000 }, () => {
  it('takes abs, floor and ceil, and rounds half up to the nearest multiple of to_nearest', async () => {
    // promql/testdata/aggregators.test 1-14, 118-182
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

eval instant at 50m abs(-1 * http_requests{group="production",job="api-server"})
	{group="production", instance="0", job="api-server"} 100
	{group="production", instance="1", job="api-server"} 200

eval instant at 50m floor(0.004 * http_requests{group="production",job="api-server"})
	{group="production", instance="0", job="api-server"} 0
	{group="production", instance="1", job="api-server"} 0

eval instant at 50m ceil(0.004 * http_requests{group="production",job="api-server"})
	{group="production", instance="0", job="api-server"} 1
	{group="production", instance="1", job="api-server"} 1

eval instant at 50m round(0.004 * http_requests{group="production",job="api-server"})
	{group="production", instance="0", job="api-server"} 0
	{group="production", instance="1", job="api-server"} 1

# Round should correctly handle negative numbers.
eval instant at 50m round(-1 * (0.004 * http_requests{group="production",job="api-server"}))
	{group="production", instance="0", job="api-server"} 0
	{group="production", instance="1", job="api-server"} -1

# Round should round half up.
eval instant at 50m round(0.005 * http_requests{group="production",job="api-server"})
	{group="production", instance="0", job="api-server"} 1
	{group="production", instance="1", job="api-server"} 1

eval instant at 50m round(-1 * (0.005 * http_requests{group="production",job="api-server"}))
	{group="production", instance="0", job="api-server"} 0
	{group="production", instance="1", job="api-server"} -1

eval instant at 50m round(1 + 0.005 * http_requests{group="production",job="api-server"})
	{group="production", instance="0", job="api-server"} 2
	{group="production", instance="1", job="api-server"} 2

eval instant at 50m round(-1 * (1 + 0.005 * http_requests{group="production",job="api-server"}))
	{group="production", instance="0", job="api-server"} -1
	{group="production", instance="1", job="api-server"} -2

# Round should accept the number to round nearest to.
eval instant at 50m round(0.0005 * http_requests{group="production",job="api-server"}, 0.1)
	{group="production", instance="0", job="api-server"} 0.1
	{group="production", instance="1", job="api-server"} 0.1

eval instant at 50m round(2.1 + 0.0005 * http_requests{group="production",job="api-server"}, 0.1)
	{group="production", instance="0", job="api-server"} 2.2
	{group="production", instance="1", job="api-server"} 2.2

eval instant at 50m round(5.2 + 0.0005 * http_requests{group="production",job="api-server"}, 0.1)
	{group="production", instance="0", job="api-server"} 5.3
	{group="production", instance="1", job="api-server"} 5.3

# Round should work correctly with negative numbers and multiple decimal places.
eval instant at 50m round(-1 * (5.2 + 0.0005 * http_requests{group="production",job="api-server"}), 0.1)
	{group="production", instance="0", job="api-server"} -5.2
	{group="production", instance="1", job="api-server"} -5.3

# Round should work correctly with big toNearests.
eval instant at 50m round(0.025 * http_requests{group="production",job="api-server"}, 5)
	{group="production", instance="0", job="api-server"} 5
	{group="production", instance="1", job="api-server"} 5

eval instant at 50m round(0.045 * http_requests{group="production",job="api-server"}, 5)
	{group="production", instance="0", job="api-server"} 5
	{group="production", instance="1", job="api-server"} 10
`);
  });
  it('computes exp, sqrt, log2, log10 and ln, NaN outside their domains', async () => {
    // promql/testdata/functions.test 978-1039
    await expectPromqlScript(String.raw`
# Testing exp() sqrt() log2() log10() ln()
load 5m
	exp_root_log{l="x"} 10
	exp_root_log{l="y"} 20

eval instant at 5m exp(exp_root_log)
	{l="x"} 22026.465794806718
	{l="y"} 485165195.4097903

eval instant at 5m exp(exp_root_log - 10)
	{l="y"} 22026.465794806718
	{l="x"} 1

eval instant at 5m exp(exp_root_log - 20)
	{l="x"} 4.5399929762484854e-05
	{l="y"} 1

eval instant at 5m ln(exp_root_log)
	{l="x"} 2.302585092994046
	{l="y"} 2.995732273553991

eval instant at 5m ln(exp_root_log - 10)
	{l="y"} 2.302585092994046
	{l="x"} -Inf

eval instant at 5m ln(exp_root_log - 20)
	{l="y"} -Inf
	{l="x"} NaN

eval instant at 5m exp(ln(exp_root_log))
	{l="y"} 20
	{l="x"} 10

eval instant at 5m sqrt(exp_root_log)
	{l="x"} 3.1622776601683795
	{l="y"} 4.47213595499958

eval instant at 5m log2(exp_root_log)
	{l="x"} 3.3219280948873626
	{l="y"} 4.321928094887363

eval instant at 5m log2(exp_root_log - 10)
	{l="y"} 3.3219280948873626
	{l="x"} -Inf

eval instant at 5m log2(exp_root_log - 20)
	{l="x"} NaN
	{l="y"} -Inf

eval instant at 5m log10(exp_root_log)
	{l="x"} 1
	{l="y"} 1.301029995663981

eval instant at 5m log10(exp_root_log - 10)
	{l="y"} 1
	{l="x"} -Inf

eval instant at 5m log10(exp_root_log - 20)
	{l="x"} NaN
	{l="y"} -Inf

clear
`);
  });
  it('clamps with clamp, clamp_min and clamp_max, empty when min > max', async () => {
    // promql/testdata/functions.test 375-417
    await expectPromqlScript(String.raw`
# Tests for clamp_max, clamp_min(), and clamp().
load 5m
	test_clamp{src="clamp-a"}	-50
	test_clamp{src="clamp-b"}	0
	test_clamp{src="clamp-c"}	100

eval instant at 0m clamp_max(test_clamp, 75)
	{src="clamp-a"}	-50
	{src="clamp-b"}	0
	{src="clamp-c"}	75

eval instant at 0m clamp_min(test_clamp, -25)
	{src="clamp-a"}	-25
	{src="clamp-b"}	0
	{src="clamp-c"}	100

eval instant at 0m clamp(test_clamp, -25, 75)
	{src="clamp-a"}	-25
	{src="clamp-b"}	0
	{src="clamp-c"}	75

eval instant at 0m clamp_max(clamp_min(test_clamp, -20), 70)
	{src="clamp-a"}	-20
	{src="clamp-b"}	0
	{src="clamp-c"}	70

eval instant at 0m clamp_max((clamp_min(test_clamp, (-20))), (70))
	{src="clamp-a"}	-20
	{src="clamp-b"}	0
	{src="clamp-c"}	70

eval instant at 0m clamp(test_clamp, 0, NaN)
	{src="clamp-a"}	NaN
	{src="clamp-b"}	NaN
	{src="clamp-c"}	NaN

eval instant at 0m clamp(test_clamp, NaN, 0)
	{src="clamp-a"}	NaN
	{src="clamp-b"}	NaN
	{src="clamp-c"}	NaN

eval instant at 0m clamp(test_clamp, 5, -5)
`);
  });
  it('takes the sign with sgn', async () => {
    // promql/testdata/functions.test 418-436
    await expectPromqlScript(String.raw`
# Test cases for sgn.
clear
load 5m
	test_sgn{src="sgn-a"}	-Inf
	test_sgn{src="sgn-b"}	Inf
	test_sgn{src="sgn-c"}	NaN
	test_sgn{src="sgn-d"}	-50
	test_sgn{src="sgn-e"}	0
	test_sgn{src="sgn-f"}	100

eval instant at 0m sgn(test_sgn)
	{src="sgn-a"}	-1
	{src="sgn-b"}	1
	{src="sgn-c"}	NaN
	{src="sgn-d"}	-1
	{src="sgn-e"}	0
	{src="sgn-f"}	1
`);
  });
  it('computes the trigonometric functions and their inverses', async () => {
    // promql/testdata/trig_functions.test 1-101
    await expectPromqlScript(String.raw`
# Testing sin() cos() tan() asin() acos() atan() sinh() cosh() tanh() rad() deg() pi().

load 5m
	trig{l="x"} 10
	trig{l="y"} 20
	trig{l="NaN"} NaN

eval instant at 5m sin(trig)
	{l="x"} -0.5440211108893699
	{l="y"} 0.9129452507276277
	{l="NaN"} NaN

eval instant at 5m cos(trig)
	{l="x"} -0.8390715290764524
	{l="y"} 0.40808206181339196
	{l="NaN"} NaN

eval instant at 5m tan(trig)
	{l="x"} 0.6483608274590867
	{l="y"} 2.2371609442247427
	{l="NaN"} NaN

eval instant at 5m asin(trig - 10.1)
	{l="x"} -0.10016742116155944
	{l="y"} NaN
	{l="NaN"} NaN

eval instant at 5m acos(trig - 10.1)
	{l="x"} 1.670963747956456
	{l="y"} NaN
	{l="NaN"} NaN

eval instant at 5m atan(trig)
	{l="x"} 1.4711276743037345
	{l="y"} 1.5208379310729538
	{l="NaN"} NaN

eval instant at 5m sinh(trig)
	{l="x"} 11013.232920103324
	{l="y"} 2.4258259770489514e+08
	{l="NaN"} NaN

eval instant at 5m cosh(trig)
	{l="x"} 11013.232920103324
	{l="y"} 2.4258259770489514e+08
	{l="NaN"} NaN

eval instant at 5m tanh(trig)
	{l="x"} 0.9999999958776927
	{l="y"} 1
	{l="NaN"} NaN

eval instant at 5m asinh(trig)
	{l="x"} 2.99822295029797
	{l="y"} 3.6895038689889055
	{l="NaN"} NaN

eval instant at 5m acosh(trig)
	{l="x"} 2.993222846126381
	{l="y"} 3.6882538673612966
	{l="NaN"} NaN

eval instant at 5m atanh(trig - 10.1)
	{l="x"} -0.10033534773107522
	{l="y"} NaN
	{l="NaN"} NaN

eval instant at 5m rad(trig)
	{l="x"} 0.17453292519943295
	{l="y"} 0.3490658503988659
	{l="NaN"} NaN

eval instant at 5m rad(trig - 10)
	{l="x"} 0
	{l="y"} 0.17453292519943295
	{l="NaN"} NaN

eval instant at 5m rad(trig - 20)
	{l="x"} -0.17453292519943295
	{l="y"} 0
	{l="NaN"} NaN

eval instant at 5m deg(trig)
	{l="x"} 572.9577951308232
	{l="y"} 1145.9155902616465
	{l="NaN"} NaN

eval instant at 5m deg(trig - 10)
	{l="x"} 0
	{l="y"} 572.9577951308232
	{l="NaN"} NaN

eval instant at 5m deg(trig - 20)
	{l="x"} -572.9577951308232
	{l="y"} 0
	{l="NaN"} NaN

clear

eval instant at 0s pi()
	3.141592653589793
`);
  });
  it('reads the clock with time, timestamp and the calendar functions, in UTC', async () => {
    // promql/testdata/functions.test 305-323, 680-763
    await expectPromqlScript(String.raw`
# Tests for vector, time and timestamp.
load 10s
  metric 1 1

eval instant at 0s timestamp(metric)
  {} 0

eval instant at 5s timestamp(metric)
  {} 0

eval instant at 5s timestamp(((metric)))
  {} 0

eval instant at 10s timestamp(metric)
  {} 10

eval instant at 10s timestamp(((metric)))
  {} 10

clear

# Test time-related functions.
eval instant at 0m year()
  {} 1970

eval instant at 1ms time()
  0.001

eval instant at 50m time()
  3000

eval instant at 0m year(vector(1136239445))
  {} 2006

eval instant at 0m month()
  {} 1

eval instant at 0m month(vector(1136239445))
  {} 1

eval instant at 0m day_of_month()
  {} 1

eval instant at 0m day_of_month(vector(1136239445))
  {} 2

eval instant at 0m day_of_year()
  {} 1

eval instant at 0m day_of_year(vector(1136239445))
  {} 2

# Thursday.
eval instant at 0m day_of_week()
  {} 4

eval instant at 0m day_of_week(vector(1136239445))
  {} 1

eval instant at 0m hour()
  {} 0

eval instant at 0m hour(vector(1136239445))
  {} 22

eval instant at 0m minute()
  {} 0

eval instant at 0m minute(vector(1136239445))
  {} 4

# 2008-12-31 23:59:59 just before leap second.
eval instant at 0m year(vector(1230767999))
  {} 2008

# 2009-01-01 00:00:00 just after leap second.
eval instant at 0m year(vector(1230768000))
  {} 2009

# 2016-02-29 23:59:59 February 29th in leap year.
eval instant at 0m month(vector(1456790399)) + day_of_month(vector(1456790399)) / 100
  {} 2.29

# 2016-03-01 00:00:00 March 1st in leap year.
eval instant at 0m month(vector(1456790400)) + day_of_month(vector(1456790400)) / 100
  {} 3.01

# 2016-12-31 13:37:00 366th day in leap year.
eval instant at 0m day_of_year(vector(1483191420))
  {} 366

# 2022-12-31 13:37:00 365th day in non-leap year.
eval instant at 0m day_of_year(vector(1672493820))
  {} 365

# February 1st 2016 in leap year.
eval instant at 0m days_in_month(vector(1454284800))
  {} 29

# February 1st 2017 not in leap year.
eval instant at 0m days_in_month(vector(1485907200))
  {} 28
`);
  });
  it('replaces labels with label_replace, anchored, dropping empty values', async () => {
    // promql/testdata/functions.test 247-303
    await expectPromqlScript(String.raw`
# Tests for label_replace.
load 5m
  testmetric{src="source-value-10",dst="original-destination-value"} 0
  testmetric{src="source-value-20",dst="original-destination-value"} 1

# label_replace does a full-string match and replace.
eval instant at 0m label_replace(testmetric, "dst", "destination-value-$1", "src", "source-value-(.*)")
  testmetric{src="source-value-10",dst="destination-value-10"} 0
  testmetric{src="source-value-20",dst="destination-value-20"} 1

# label_replace does not do a sub-string match.
eval instant at 0m label_replace(testmetric, "dst", "destination-value-$1", "src", "value-(.*)")
  testmetric{src="source-value-10",dst="original-destination-value"} 0
  testmetric{src="source-value-20",dst="original-destination-value"} 1

# label_replace works with multiple capture groups.
eval instant at 0m label_replace(testmetric, "dst", "$1-value-$2", "src", "(.*)-value-(.*)")
  testmetric{src="source-value-10",dst="source-value-10"} 0
  testmetric{src="source-value-20",dst="source-value-20"} 1

# label_replace does not overwrite the destination label if the source label
# does not exist.
eval instant at 0m label_replace(testmetric, "dst", "value-$1", "nonexistent-src", "source-value-(.*)")
  testmetric{src="source-value-10",dst="original-destination-value"} 0
  testmetric{src="source-value-20",dst="original-destination-value"} 1

# label_replace overwrites the destination label if the source label is empty,
# but matched.
eval instant at 0m label_replace(testmetric, "dst", "value-$1", "nonexistent-src", "(.*)")
  testmetric{src="source-value-10",dst="value-"} 0
  testmetric{src="source-value-20",dst="value-"} 1

# label_replace does not overwrite the destination label if the source label
# is not matched.
eval instant at 0m label_replace(testmetric, "dst", "value-$1", "src", "non-matching-regex")
  testmetric{src="source-value-10",dst="original-destination-value"} 0
  testmetric{src="source-value-20",dst="original-destination-value"} 1

eval instant at 0m label_replace((((testmetric))), (("dst")), (("value-$1")), (("src")), (("non-matching-regex")))
  testmetric{src="source-value-10",dst="original-destination-value"} 0
  testmetric{src="source-value-20",dst="original-destination-value"} 1

# label_replace drops labels that are set to empty values.
eval instant at 0m label_replace(testmetric, "dst", "", "dst", ".*")
  testmetric{src="source-value-10"} 0
  testmetric{src="source-value-20"} 1

# label_replace fails when the regex is invalid.
eval_fail instant at 0m label_replace(testmetric, "dst", "value-$1", "src", "(.*")

# label_replace fails when the destination label name is not a valid Prometheus label name.
eval_fail instant at 0m label_replace(testmetric, "invalid-label-name", "", "src", "(.*)")

# label_replace fails when there would be duplicated identical output label sets.
eval_fail instant at 0m label_replace(testmetric, "src", "", "", "")

clear
`);
  });
  it('joins labels with label_join and builds vectors with vector', async () => {
    // promql/testdata/functions.test 324-374
    await expectPromqlScript(String.raw`
# Tests for label_join.
load 5m
  testmetric{src="a",src1="b",src2="c",dst="original-destination-value"} 0
  testmetric{src="d",src1="e",src2="f",dst="original-destination-value"} 1

# label_join joins all src values in order.
eval instant at 0m label_join(testmetric, "dst", "-", "src", "src1", "src2")
  testmetric{src="a",src1="b",src2="c",dst="a-b-c"} 0
  testmetric{src="d",src1="e",src2="f",dst="d-e-f"} 1

# label_join treats non existent src labels as empty strings.
eval instant at 0m label_join(testmetric, "dst", "-", "src", "src3", "src1")
  testmetric{src="a",src1="b",src2="c",dst="a--b"} 0
  testmetric{src="d",src1="e",src2="f",dst="d--e"} 1

# label_join overwrites the destination label even if the resulting dst label is empty string
eval instant at 0m label_join(testmetric, "dst", "", "emptysrc", "emptysrc1", "emptysrc2")
  testmetric{src="a",src1="b",src2="c"} 0
  testmetric{src="d",src1="e",src2="f"} 1

# test without src label for label_join
eval instant at 0m label_join(testmetric, "dst", ", ")
	  testmetric{src="a",src1="b",src2="c"} 0
	  testmetric{src="d",src1="e",src2="f"} 1

# test without dst label for label_join
load 5m
  testmetric1{src="foo",src1="bar",src2="foobar"} 0
  testmetric1{src="fizz",src1="buzz",src2="fizzbuzz"} 1

# label_join creates dst label if not present.
eval instant at 0m label_join(testmetric1, "dst", ", ", "src", "src1", "src2")
  testmetric1{src="foo",src1="bar",src2="foobar",dst="foo, bar, foobar"} 0
  testmetric1{src="fizz",src1="buzz",src2="fizzbuzz",dst="fizz, buzz, fizzbuzz"} 1

clear

# Tests for vector.
eval instant at 0m vector(1)
  {} 1

eval instant at 0s vector(time())
  {} 0

eval instant at 5s vector(time())
  {} 5

eval instant at 60m vector(time())
  {} 3600
`);
  });
  it('orders with sort and sort_desc, NaN last', async () => {
    // promql/testdata/functions.test 437-471
    await expectPromqlScript(String.raw`
# Tests for sort/sort_desc.
clear
load 5m
	http_requests{job="api-server", instance="0", group="production"}	0+10x10
	http_requests{job="api-server", instance="1", group="production"}	0+20x10
	http_requests{job="api-server", instance="0", group="canary"}		0+30x10
	http_requests{job="api-server", instance="1", group="canary"}		0+40x10
	http_requests{job="api-server", instance="2", group="canary"}		NaN NaN NaN NaN NaN NaN NaN NaN NaN NaN
	http_requests{job="app-server", instance="0", group="production"}	0+50x10
	http_requests{job="app-server", instance="1", group="production"}	0+60x10
	http_requests{job="app-server", instance="0", group="canary"}		0+70x10
	http_requests{job="app-server", instance="1", group="canary"}		0+80x10

eval_ordered instant at 50m sort(http_requests)
	http_requests{group="production", instance="0", job="api-server"} 100
	http_requests{group="production", instance="1", job="api-server"} 200
	http_requests{group="canary", instance="0", job="api-server"} 300
	http_requests{group="canary", instance="1", job="api-server"} 400
	http_requests{group="production", instance="0", job="app-server"} 500
	http_requests{group="production", instance="1", job="app-server"} 600
	http_requests{group="canary", instance="0", job="app-server"} 700
	http_requests{group="canary", instance="1", job="app-server"} 800
	http_requests{group="canary", instance="2", job="api-server"} NaN

eval_ordered instant at 50m sort_desc(http_requests)
	http_requests{group="canary", instance="1", job="app-server"} 800
	http_requests{group="canary", instance="0", job="app-server"} 700
	http_requests{group="production", instance="1", job="app-server"} 600
	http_requests{group="production", instance="0", job="app-server"} 500
	http_requests{group="canary", instance="1", job="api-server"} 400
	http_requests{group="canary", instance="0", job="api-server"} 300
	http_requests{group="production", instance="1", job="api-server"} 200
	http_requests{group="production", instance="0", job="api-server"} 100
	http_requests{group="canary", instance="2", job="api-server"} NaN
`);
  });
  it('answers absent with the labels of its equality matchers', async () => {
    // promql/testdata/functions.test 804-853
    await expectPromqlScript(String.raw`
clear

# Test for absent()
eval instant at 50m absent(nonexistent)
	{} 1

eval instant at 50m absent(nonexistent{job="testjob", instance="testinstance", method=~".x"})
	{instance="testinstance", job="testjob"} 1

eval instant at 50m absent(nonexistent{job="testjob",job="testjob2",foo="bar"})
	{foo="bar"} 1

eval instant at 50m absent(nonexistent{job="testjob",job="testjob2",job="three",foo="bar"})
	{foo="bar"} 1

eval instant at 50m absent(nonexistent{job="testjob",job=~"testjob2",foo="bar"})
	{foo="bar"} 1

clear

# Don't return anything when there's something there.
load 5m
	http_requests{job="api-server", instance="0", group="production"}	0+10x10

eval instant at 50m absent(http_requests)

eval instant at 50m absent(sum(http_requests))

clear

eval instant at 50m absent(sum(nonexistent{job="testjob", instance="testinstance"}))
	{} 1

eval instant at 50m absent(max(nonexistant))
	{} 1

eval instant at 50m absent(nonexistant > 1)
	{} 1

eval instant at 50m absent(a + b)
	{} 1

eval instant at 50m absent(a and b)
	{} 1

eval instant at 50m absent(rate(nonexistant[5m]))
	{} 1

clear
`);
  });
  it('answers absent_over_time', async () => {
    // promql/testdata/functions.test 854-917
    await expectPromqlScript(String.raw`
# Testdata for absent_over_time()
eval instant at 1m absent_over_time(http_requests[5m])
    {} 1

eval instant at 1m absent_over_time(http_requests{handler="/foo"}[5m])
    {handler="/foo"} 1

eval instant at 1m absent_over_time(http_requests{handler!="/foo"}[5m])
    {} 1

eval instant at 1m absent_over_time(http_requests{handler="/foo", handler="/bar", handler="/foobar"}[5m])
    {} 1

eval instant at 1m absent_over_time(rate(nonexistant[5m])[5m:])
    {} 1

eval instant at 1m absent_over_time(http_requests{handler="/foo", handler="/bar", instance="127.0.0.1"}[5m])
    {instance="127.0.0.1"} 1

load 1m
	http_requests{path="/foo",instance="127.0.0.1",job="httpd"}	1+1x10
	http_requests{path="/bar",instance="127.0.0.1",job="httpd"}	1+1x10
	httpd_handshake_failures_total{instance="127.0.0.1",job="node"}	1+1x15
	httpd_log_lines_total{instance="127.0.0.1",job="node"}	1
	ssl_certificate_expiry_seconds{job="ingress"} NaN NaN NaN NaN NaN

eval instant at 5m absent_over_time(http_requests[5m])

eval instant at 5m absent_over_time(rate(http_requests[5m])[5m:1m])

eval instant at 0m absent_over_time(httpd_log_lines_total[30s])

eval instant at 1m absent_over_time(httpd_log_lines_total[30s])
    {} 1

eval instant at 15m absent_over_time(http_requests[5m])

eval instant at 16m absent_over_time(http_requests[5m])
    {} 1

eval instant at 16m absent_over_time(http_requests[6m])

eval instant at 16m absent_over_time(httpd_handshake_failures_total[1m])

eval instant at 16m absent_over_time({instance="127.0.0.1"}[5m])

eval instant at 21m absent_over_time({instance="127.0.0.1"}[5m])
    {instance="127.0.0.1"} 1

eval instant at 21m absent_over_time({instance="127.0.0.1"}[20m])

eval instant at 21m absent_over_time({job="grok"}[20m])
    {job="grok"} 1

eval instant at 30m absent_over_time({instance="127.0.0.1"}[5m:5s])
    {} 1

eval instant at 5m absent_over_time({job="ingress"}[4m])

eval instant at 10m absent_over_time({job="ingress"}[4m])
	{job="ingress"} 1

clear
`);
  });
  it('interpolates histogram_quantile within classic buckets', async () => {
    // promql/testdata/histograms.test 1-235
    await expectPromqlScript(String.raw`
# Two histograms with 4 buckets each (x_sum and x_count not included,
# only buckets). Lowest bucket for one histogram < 0, for the other >
# 0. They have the same name, just separated by label. Not useful in
# practice, but can happen (if clients change bucketing), and the
# server has to cope with it.

# Test histogram.
load 5m
	testhistogram_bucket{le="0.1", start="positive"}	0+5x10
	testhistogram_bucket{le=".2", start="positive"}		0+7x10
	testhistogram_bucket{le="1e0", start="positive"}	0+11x10
	testhistogram_bucket{le="+Inf", start="positive"}	0+12x10
	testhistogram_bucket{le="-.2", start="negative"}	0+1x10
	testhistogram_bucket{le="-0.1", start="negative"}	0+2x10
	testhistogram_bucket{le="0.3", start="negative"}	0+2x10
	testhistogram_bucket{le="+Inf", start="negative"}	0+3x10

# Another test histogram, where q(1/6), q(1/2), and q(5/6) are each in
# the middle of a bucket and should therefore be 1, 3, and 5,
# respectively.
load 5m
	testhistogram2_bucket{le="0"}	 0+0x10
	testhistogram2_bucket{le="2"}	 0+1x10
	testhistogram2_bucket{le="4"}    0+2x10
	testhistogram2_bucket{le="6"}	 0+3x10
	testhistogram2_bucket{le="+Inf"} 0+3x10

# Now a more realistic histogram per job and instance to test aggregation.
load 5m
	request_duration_seconds_bucket{job="job1", instance="ins1", le="0.1"}	0+1x10
	request_duration_seconds_bucket{job="job1", instance="ins1", le="0.2"}	0+3x10
	request_duration_seconds_bucket{job="job1", instance="ins1", le="+Inf"}	0+4x10
	request_duration_seconds_bucket{job="job1", instance="ins2", le="0.1"}	0+2x10
	request_duration_seconds_bucket{job="job1", instance="ins2", le="0.2"}	0+5x10
	request_duration_seconds_bucket{job="job1", instance="ins2", le="+Inf"}	0+6x10
	request_duration_seconds_bucket{job="job2", instance="ins1", le="0.1"}	0+3x10
	request_duration_seconds_bucket{job="job2", instance="ins1", le="0.2"}	0+4x10
	request_duration_seconds_bucket{job="job2", instance="ins1", le="+Inf"}	0+6x10
	request_duration_seconds_bucket{job="job2", instance="ins2", le="0.1"}	0+4x10
	request_duration_seconds_bucket{job="job2", instance="ins2", le="0.2"}	0+7x10
	request_duration_seconds_bucket{job="job2", instance="ins2", le="+Inf"}	0+9x10

# Different le representations in one histogram.
load 5m
	mixed_bucket{job="job1", instance="ins1", le="0.1"}	0+1x10
	mixed_bucket{job="job1", instance="ins1", le="0.2"}	0+1x10
	mixed_bucket{job="job1", instance="ins1", le="2e-1"}	0+1x10
	mixed_bucket{job="job1", instance="ins1", le="2.0e-1"}	0+1x10
	mixed_bucket{job="job1", instance="ins1", le="+Inf"}	0+4x10
	mixed_bucket{job="job1", instance="ins2", le="+inf"}	0+0x10
	mixed_bucket{job="job1", instance="ins2", le="+Inf"}	0+0x10

# Quantile too low.
eval instant at 50m histogram_quantile(-0.1, testhistogram_bucket)
	{start="positive"} -Inf
	{start="negative"} -Inf

# Quantile too high.
eval instant at 50m histogram_quantile(1.01, testhistogram_bucket)
	{start="positive"} +Inf
	{start="negative"} +Inf

# Quantile invalid.
eval instant at 50m histogram_quantile(NaN, testhistogram_bucket)
	{start="positive"} NaN
	{start="negative"} NaN

# Quantile value in lowest bucket, which is positive.
eval instant at 50m histogram_quantile(0, testhistogram_bucket{start="positive"})
	{start="positive"} 0

# Quantile value in lowest bucket, which is negative.
eval instant at 50m histogram_quantile(0, testhistogram_bucket{start="negative"})
	{start="negative"} -0.2

# Quantile value in highest bucket.
eval instant at 50m histogram_quantile(1, testhistogram_bucket)
	{start="positive"} 1
	{start="negative"} 0.3

# Finally some useful quantiles.
eval instant at 50m histogram_quantile(0.2, testhistogram_bucket)
	{start="positive"} 0.048
	{start="negative"} -0.2


eval instant at 50m histogram_quantile(0.5, testhistogram_bucket)
	{start="positive"} 0.15
	{start="negative"} -0.15

eval instant at 50m histogram_quantile(0.8, testhistogram_bucket)
	{start="positive"} 0.72
	{start="negative"} 0.3

# More realistic with rates.
eval instant at 50m histogram_quantile(0.2, rate(testhistogram_bucket[5m]))
	{start="positive"} 0.048
	{start="negative"} -0.2

eval instant at 50m histogram_quantile(0.5, rate(testhistogram_bucket[5m]))
	{start="positive"} 0.15
	{start="negative"} -0.15

eval instant at 50m histogram_quantile(0.8, rate(testhistogram_bucket[5m]))
	{start="positive"} 0.72
	{start="negative"} 0.3

# Want results exactly in the middle of the bucket.
eval instant at 7m histogram_quantile(1./6., testhistogram2_bucket)
	{} 1

eval instant at 7m histogram_quantile(0.5, testhistogram2_bucket)
	{} 3

eval instant at 7m histogram_quantile(5./6., testhistogram2_bucket)
	{} 5

eval instant at 47m histogram_quantile(1./6., rate(testhistogram2_bucket[15m]))
	{} 1

eval instant at 47m histogram_quantile(0.5, rate(testhistogram2_bucket[15m]))
	{} 3

eval instant at 47m histogram_quantile(5./6., rate(testhistogram2_bucket[15m]))
	{} 5

# Aggregated histogram: Everything in one.
eval instant at 50m histogram_quantile(0.3, sum(rate(request_duration_seconds_bucket[5m])) by (le))
	{} 0.075

eval instant at 50m histogram_quantile(0.5, sum(rate(request_duration_seconds_bucket[5m])) by (le))
	{} 0.1277777777777778

# Aggregated histogram: Everything in one. Now with avg, which does not change anything.
eval instant at 50m histogram_quantile(0.3, avg(rate(request_duration_seconds_bucket[5m])) by (le))
	{} 0.075

eval instant at 50m histogram_quantile(0.5, avg(rate(request_duration_seconds_bucket[5m])) by (le))
	{} 0.12777777777777778

# Aggregated histogram: By instance.
eval instant at 50m histogram_quantile(0.3, sum(rate(request_duration_seconds_bucket[5m])) by (le, instance))
	{instance="ins1"} 0.075
	{instance="ins2"} 0.075

eval instant at 50m histogram_quantile(0.5, sum(rate(request_duration_seconds_bucket[5m])) by (le, instance))
	{instance="ins1"} 0.1333333333
	{instance="ins2"} 0.125

# Aggregated histogram: By job.
eval instant at 50m histogram_quantile(0.3, sum(rate(request_duration_seconds_bucket[5m])) by (le, job))
	{job="job1"} 0.1
	{job="job2"} 0.0642857142857143

eval instant at 50m histogram_quantile(0.5, sum(rate(request_duration_seconds_bucket[5m])) by (le, job))
	{job="job1"} 0.14
	{job="job2"} 0.1125

# Aggregated histogram: By job and instance.
eval instant at 50m histogram_quantile(0.3, sum(rate(request_duration_seconds_bucket[5m])) by (le, job, instance))
	{instance="ins1", job="job1"} 0.11
	{instance="ins2", job="job1"} 0.09
	{instance="ins1", job="job2"} 0.06
	{instance="ins2", job="job2"} 0.0675

eval instant at 50m histogram_quantile(0.5, sum(rate(request_duration_seconds_bucket[5m])) by (le, job, instance))
	{instance="ins1", job="job1"} 0.15
	{instance="ins2", job="job1"} 0.1333333333333333
	{instance="ins1", job="job2"} 0.1
	{instance="ins2", job="job2"} 0.1166666666666667

# The unaggregated histogram for comparison. Same result as the previous one.
eval instant at 50m histogram_quantile(0.3, rate(request_duration_seconds_bucket[5m]))
	{instance="ins1", job="job1"} 0.11
	{instance="ins2", job="job1"} 0.09
	{instance="ins1", job="job2"} 0.06
	{instance="ins2", job="job2"} 0.0675

eval instant at 50m histogram_quantile(0.5, rate(request_duration_seconds_bucket[5m]))
	{instance="ins1", job="job1"} 0.15
	{instance="ins2", job="job1"} 0.13333333333333333
	{instance="ins1", job="job2"} 0.1
	{instance="ins2", job="job2"} 0.11666666666666667

# A histogram with nonmonotonic bucket counts. This may happen when recording
# rule evaluation or federation races scrape ingestion, causing some buckets
# counts to be derived from fewer samples.

load 5m
    nonmonotonic_bucket{le="0.1"}   0+2x10
    nonmonotonic_bucket{le="1"}     0+1x10
    nonmonotonic_bucket{le="10"}    0+5x10
    nonmonotonic_bucket{le="100"}   0+4x10
    nonmonotonic_bucket{le="1000"}  0+9x10
    nonmonotonic_bucket{le="+Inf"}  0+8x10

# Nonmonotonic buckets
eval instant at 50m histogram_quantile(0.01, nonmonotonic_bucket)
    {} 0.0045

eval instant at 50m histogram_quantile(0.5, nonmonotonic_bucket)
    {} 8.5

eval instant at 50m histogram_quantile(0.99, nonmonotonic_bucket)
    {} 979.75

# Buckets with different representations of the same upper bound.
eval instant at 50m histogram_quantile(0.5, rate(mixed_bucket[5m]))
	{instance="ins1", job="job1"} 0.15
	{instance="ins2", job="job1"} NaN

eval instant at 50m histogram_quantile(0.75, rate(mixed_bucket[5m]))
	{instance="ins1", job="job1"} 0.2
	{instance="ins2", job="job1"} NaN

eval instant at 50m histogram_quantile(1, rate(mixed_bucket[5m]))
	{instance="ins1", job="job1"} 0.2
	{instance="ins2", job="job1"} NaN

load 5m
	empty_bucket{le="0.1", job="job1", instance="ins1"}    0x10
	empty_bucket{le="0.2", job="job1", instance="ins1"}    0x10
	empty_bucket{le="+Inf", job="job1", instance="ins1"}   0x10

eval instant at 50m histogram_quantile(0.2, rate(empty_bucket[5m]))
	{instance="ins1", job="job1"} NaN

# Load a duplicate histogram with a different name to test failure scenario on multiple histograms with the same label set
# https://github.com/prometheus/prometheus/issues/9910
load 5m
	request_duration_seconds2_bucket{job="job1", instance="ins1", le="0.1"}	0+1x10
	request_duration_seconds2_bucket{job="job1", instance="ins1", le="0.2"}	0+3x10
	request_duration_seconds2_bucket{job="job1", instance="ins1", le="+Inf"}	0+4x10

eval_fail instant at 50m histogram_quantile(0.99, {__name__=~"request_duration.*"})
`);
  });
});

/** One sample per series at 0 s, of metric `g` labelled i="0", i="1", … */
function gauges(values: number[], extra: Record<string, string> = {}): MemorySeries[] {
  return values.map((v, i) => ({
    labels: { __name__: 'g', i: String(i), ...extra },
    samples: [[0, v]],
    stale: [0],
  }));
}

const valuesOf = async (series: MemorySeries[], query: string): Promise<number[]> =>
  vectorOf(await engineOver(series).instantQuery(query, 0)).map(([, v]) => v);

describe('instant functions', { timeout: 60_000 }, () => {
  it('turns a one-element vector into its value with scalar, anything else into NaN', async () => {
    const engine = engineOver(gauges([3, 4]));
    expect(rowsOf(await engine.instantQuery('scalar(g{i="1"})', 0))).toEqual([[{}, 4]]);
    expect(rowsOf(await engine.instantQuery('scalar(g)', 0))).toEqual([[{}, NaN]]);
    expect(rowsOf(await engine.instantQuery('scalar(nothing)', 0))).toEqual([[{}, NaN]]);
  });

  it('rounds half up, and to the nearest multiple of to_nearest (prometheus.io functions)', async () => {
    const engine = engineOver([]);
    const round = async (args: string): Promise<number> =>
      rowsOf(await engine.instantQuery(`round(vector(${args}))`, 0))[0]![1];
    expect(await round('2.5')).toBe(3);
    expect(await round('-2.5')).toBe(-2);
    expect(await round('7), (5')).toBe(5);
    expect(await round('7.5), (5')).toBe(10);
    expect(await round('1.26), (0.1')).toBeCloseTo(1.3, 12);
  });

  it("answers NaN and ±Inf as Go's math package does", async () => {
    const at = async (query: string): Promise<number> =>
      rowsOf(await engineOver([]).instantQuery(query, 0))[0]![1];
    expect(await at('abs(vector(-Inf))')).toBe(Infinity);
    expect(await at('sqrt(vector(-1))')).toBeNaN();
    expect(await at('ln(vector(0))')).toBe(-Infinity);
    expect(await at('ln(vector(-1))')).toBeNaN();
    expect(await at('log2(vector(8))')).toBe(3);
    expect(await at('exp(vector(-Inf))')).toBe(0);
    expect(await at('ceil(vector(NaN))')).toBeNaN();
    expect(await at('floor(vector(-Inf))')).toBe(-Infinity);
    expect(await at('sgn(vector(-Inf))')).toBe(-1);
    expect(await at('sgn(vector(NaN))')).toBeNaN();
    expect(await at('clamp(vector(NaN), 0, 1)')).toBeNaN();
  });

  it('drops the metric name from the result of every math function', async () => {
    const engine = engineOver(gauges([-1.5]));
    for (const f of ['abs', 'ceil', 'floor', 'round', 'exp', 'sqrt', 'sgn', 'sin', 'deg']) {
      expect(vectorOf(await engine.instantQuery(`${f}(g)`, 0)), f).toEqual([
        [{ i: '0' }, expect.any(Number)],
      ]);
    }
  });

  it('answers NaN for histogram_quantile without a +Inf bucket, and skips series without le', async () => {
    const buckets = (les: string[]): MemorySeries[] =>
      les.map((le, i) => ({ labels: { __name__: 'h_bucket', le }, samples: [[0, (i + 1) * 10]] }));
    expect(await valuesOf(buckets(['0.1', '1']), 'histogram_quantile(0.5, h_bucket)')).toEqual([
      NaN,
    ]);
    const withoutLe: MemorySeries = { labels: { __name__: 'h_bucket' }, samples: [[0, 5]] };
    // 10 in ≤ 0.1, 20 in ≤ 1, 30 in all: the median (rank 15) lies halfway into (0.1, 1].
    const got = await valuesOf(
      [...buckets(['0.1', '1', '+Inf']), withoutLe],
      'histogram_quantile(0.5, h_bucket)',
    );
    expect(got).toHaveLength(1);
    expect(got[0]).toBeCloseTo(0.55, 12);
  });

  const finite = fc.double({ min: -1e6, max: 1e6, noNaN: true });

  it('orders values with sort and sort_desc, NaN last either way', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(finite, fc.constant(NaN)), { minLength: 1, maxLength: 12 }),
        async (values) => {
          const series = gauges(values);
          for (const [f, ordered] of [
            ['sort', (a: number, b: number) => a <= b],
            ['sort_desc', (a: number, b: number) => a >= b],
          ] as const) {
            const got = await valuesOf(series, `${f}(g)`);
            expect(got).toHaveLength(values.length);
            const numbers = got.filter((v) => !Number.isNaN(v));
            expect(got.slice(0, numbers.length)).toEqual(numbers);
            numbers.forEach((v, i) => i === 0 || expect(ordered(numbers[i - 1]!, v)).toBe(true));
          }
        },
      ),
    );
  });

  it('clamps as clamp_max of clamp_min, and within [min, max]', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(finite, { minLength: 1, maxLength: 8 }),
        finite,
        finite,
        async (values, a, b) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          const series = gauges(values);
          const clamped = await valuesOf(series, `clamp(g, ${lo}, ${hi})`);
          expect(clamped).toEqual(await valuesOf(series, `clamp_max(clamp_min(g, ${lo}), ${hi})`));
          for (const v of clamped) expect(v >= lo && v <= hi).toBe(true);
        },
      ),
    );
  });

  it("answers histogram_quantile non-decreasing in φ, within the buckets' bounds", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 6 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (counts, p, q) => {
          // Cumulative counts over the bounds 1, 2, 4, … and +Inf.
          let total = 0;
          const series: MemorySeries[] = counts.map((c, i) => ({
            labels: { __name__: 'h_bucket', le: i === counts.length - 1 ? '+Inf' : String(2 ** i) },
            samples: [[0, (total += c)]],
          }));
          const [lo, hi] = p <= q ? [p, q] : [q, p];
          const [a] = await valuesOf(series, `histogram_quantile(${lo}, h_bucket)`);
          const [b] = await valuesOf(series, `histogram_quantile(${hi}, h_bucket)`);
          // Prometheus' bucketQuantile: NaN for fewer than two buckets or no observations.
          if (total === 0 || counts.length < 2) {
            expect([a, b]).toEqual([NaN, NaN]);
            return;
          }
          // φ = 0 with the first bucket empty is 0/0 there: NaN, as Prometheus 2.42 answers.
          const zeroOfEmpty = (phi: number): boolean => phi === 0 && counts[0] === 0;
          expect(Number.isNaN(a)).toBe(zeroOfEmpty(lo));
          expect(Number.isNaN(b)).toBe(zeroOfEmpty(hi));
          // Past the last finite bound the answer is that bound (Prometheus' bucketQuantile).
          const lastBound = 2 ** (counts.length - 2);
          if (!zeroOfEmpty(hi)) expect(b! >= 0 && b! <= lastBound).toBe(true);
          if (!zeroOfEmpty(lo)) expect(a! >= 0 && a! <= b!).toBe(true);
        },
      ),
    );
  });

  it('answers histogram_quantile(0) NaN when the first bucket is empty (0/0), as Prometheus 2.42', async () => {
    // promtool test rules on Prometheus 2.42.0 answers NaN for these series too.
    const series: MemorySeries[] = [
      { labels: { __name__: 'h_bucket', le: '1' }, samples: [[0, 0]] },
      { labels: { __name__: 'h_bucket', le: '+Inf' }, samples: [[0, 1]] },
    ];
    expect(await valuesOf(series, 'histogram_quantile(0, h_bucket)')).toEqual([NaN]);
    expect(await valuesOf(series, 'histogram_quantile(0.5, h_bucket)')).toEqual([1]);
  });

  it('copies a label with label_replace and "(.*)", keeping every other label', async () => {
    await fc.assert(
      fc.asyncProperty(fc.stringMatching(/^[a-z0-9-]{1,8}$/), async (value) => {
        const engine = engineOver(gauges([1], { src: value }));
        const got = vectorOf(
          await engine.instantQuery('label_replace(g, "dst", "x-$1", "src", "(.*)")', 0),
        );
        expect(got).toEqual([[{ __name__: 'g', i: '0', src: value, dst: `x-${value}` }, 1]]);
      }),
    );
  });
});
