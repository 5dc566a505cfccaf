import type { Expr } from './ast.js';
import { parsePromql } from './parse-promql.js';
import { planSelections } from './plan-selections.js';
import { preprocessExpr, setOffsetForAtModifier } from './preprocess.js';
import type { TimeRange } from './series-source.js';

/**
 * The samples a range query over [startMs, endMs] reads, all selectors together; null when it
 * reads none (`vector(1)`, `time()`).
 */
export type RangeReads = (startMs: number, endMs: number) => TimeRange | null;

/**
 * Whether each step of `query` reads only samples at or before its own time, and answers the same
 * whatever range it is evaluated in: then a range query may be answered piece by piece, and a
 * piece whose steps are old enough never changes but by a sample written late. So it is without
 * `@` (which reads at a time of its own, `start()` and `end()` the query's) and without a
 * negative offset (which reads after the step). Returns what a range of it reads, or undefined
 * when it is not so (or does not parse: the engine then says why).
 */
export function splittableRangeReads(
  query: string,
  lookbackDeltaMs: number,
): RangeReads | undefined {
  let expr: Expr;
  try {
    expr = parsePromql(query);
  } catch {
    return undefined;
  }
  if (!stepLocal(expr)) return undefined;
  return (startMs, endMs) => {
    // Planned on a fresh copy: preprocessing writes into the selectors.
    const planned = parsePromql(query);
    const prepared = preprocessExpr(planned, startMs, endMs);
    setOffsetForAtModifier(prepared, startMs);
    let range: TimeRange | null = null;
    for (const { timeRange } of planSelections(prepared, { startMs, endMs, lookbackDeltaMs })) {
      range =
        range === null
          ? { ...timeRange }
          : {
              startMs: Math.min(range.startMs, timeRange.startMs),
              endMs: Math.max(range.endMs, timeRange.endMs),
            };
    }
    return range;
  };
}

function stepLocal(expr: Expr): boolean {
  switch (expr.kind) {
    case 'vector':
    case 'subquery':
      if (expr.atMs !== null || expr.startOrEnd !== null || expr.originalOffsetMs < 0) {
        return false;
      }
      return expr.kind === 'vector' || stepLocal(expr.expr);
    case 'matrix':
      return stepLocal(expr.selector);
    case 'call':
      return expr.args.every(stepLocal);
    case 'aggregate':
      return (expr.param === null || stepLocal(expr.param)) && stepLocal(expr.expr);
    case 'binary':
      return stepLocal(expr.lhs) && stepLocal(expr.rhs);
    case 'paren':
    case 'unary':
    case 'step-invariant':
      return stepLocal(expr.expr);
    default:
      return true;
  }
}
