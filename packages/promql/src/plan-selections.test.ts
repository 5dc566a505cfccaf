import { describe, expect, it } from 'vitest';
import { parsePromql } from './parse-promql.js';
import { planSelections } from './plan-selections.js';
import { preprocessExpr, setOffsetForAtModifier } from './preprocess.js';

function plan(query: string, startMs: number, endMs: number) {
  const expr = preprocessExpr(parsePromql(query), startMs, endMs);
  setOffsetForAtModifier(expr, startMs);
  return planSelections(expr, { startMs, endMs, lookbackDeltaMs: 300_000 }).map((s) => ({
    name: s.selector.name,
    rangeMs: s.rangeMs,
    func: s.func,
    ...s.timeRange,
  }));
}

const minute = 60_000;

describe('planSelections', () => {
  it('reads back over the enclosing subqueries, as Prometheus selects', () => {
    const t = 1000 * minute;
    expect(plan('max_over_time(rate(x[5m])[30m:1m] offset 10m)', t, t + 20 * minute)).toEqual([
      {
        name: 'x',
        rangeMs: 5 * minute,
        func: 'rate',
        startMs: t - 10 * minute - 30 * minute - 5 * minute,
        endMs: t + 20 * minute - 10 * minute,
      },
    ]);
  });

  it('reads a subquery pinned by @ around its @ time, whatever the query range', () => {
    const at = 500 * minute;
    expect(plan(`sum_over_time(y[10m:1m] @ ${at / 1000} offset 1m)`, 0, 2000 * minute)).toEqual([
      {
        name: 'y',
        rangeMs: 0,
        func: null,
        startMs: at - minute - 10 * minute - 5 * minute,
        endMs: at - minute,
      },
    ]);
  });

  it('reads a selector outside subqueries over the query range and its lookback', () => {
    expect(plan('z offset 2m', 10 * minute, 20 * minute)).toEqual([
      { name: 'z', rangeMs: 0, func: null, startMs: 3 * minute, endMs: 18 * minute },
    ]);
  });
});
