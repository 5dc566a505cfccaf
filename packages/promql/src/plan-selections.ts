import type { Expr, SubqueryExpr, VectorSelector } from './ast.js';
import type { TimeRange } from './series-source.js';
import { subqueryTimes } from './subquery-times.js';

// What each selector of a query must read: its time range, as Prometheus selects it, and the
// function it feeds (a hint to the source).

/** The function each selector feeds directly, as a hint to the source. */
function functionsOfSelectors(expr: Expr): Map<VectorSelector, string> {
  const out = new Map<VectorSelector, string>();
  const visit = (e: Expr, func: string | null): void => {
    switch (e.kind) {
      case 'vector':
        if (func !== null) out.set(e, func);
        return;
      case 'matrix':
        visit(e.selector, func);
        return;
      case 'call':
        for (const arg of e.args) visit(arg, e.func.name);
        return;
      case 'aggregate':
        if (e.param !== null) visit(e.param, null);
        visit(e.expr, null);
        return;
      case 'binary':
        visit(e.lhs, null);
        visit(e.rhs, null);
        return;
      case 'paren':
      case 'step-invariant':
        visit(e.expr, func);
        return;
      case 'unary':
      case 'subquery':
        visit(e.expr, null);
        return;
      default:
        return;
    }
  };
  visit(expr, null);
  return out;
}

/** A selector, its range (0 for an instant selector) and the subqueries it sits in. */
type Selection = { selector: VectorSelector; rangeMs: number; path: SubqueryExpr[] };

function selectionsOf(expr: Expr): Selection[] {
  const out: Selection[] = [];
  const visit = (e: Expr, path: SubqueryExpr[]): void => {
    switch (e.kind) {
      case 'vector':
        out.push({ selector: e, rangeMs: 0, path });
        return;
      case 'matrix':
        out.push({ selector: e.selector, rangeMs: e.rangeMs, path });
        return;
      case 'subquery':
        visit(e.expr, [...path, e]);
        return;
      case 'call':
        e.args.forEach((arg) => visit(arg, path));
        return;
      case 'aggregate':
        if (e.param !== null) visit(e.param, path);
        visit(e.expr, path);
        return;
      case 'binary':
        visit(e.lhs, path);
        visit(e.rhs, path);
        return;
      case 'paren':
      case 'unary':
      case 'step-invariant':
        visit(e.expr, path);
        return;
      default:
        return;
    }
  };
  visit(expr, []);
  return out;
}

/**
 * The samples a selection needs, as Prometheus' getTimeRangesForSelector computes them: the
 * query's range (or the `@` time), moved back by the enclosing subqueries' offsets and ranges and
 * the selector's own offset, widened by the lookback or the selector's range.
 */
function timeRangeOf(
  { selector, rangeMs, path }: Selection,
  query: { startMs: number; endMs: number; lookbackDeltaMs: number },
): TimeRange {
  const window = rangeMs > 0 ? rangeMs : query.lookbackDeltaMs;
  const orig = selector.originalOffsetMs;
  if (path.length === 0) {
    let refMin = query.startMs - orig;
    let refMax = query.endMs - orig;
    if (selector.atMs !== null) {
      refMin = Math.min(selector.atMs - orig, selector.atMs);
      refMax = Math.max(selector.atMs - orig + (query.endMs - query.startMs), selector.atMs);
    }
    return { startMs: refMin - window, endMs: refMax };
  }
  const enclosing = subqueryTimes(path);
  let startMs = enclosing.atMs ?? query.startMs;
  let endMs = enclosing.atMs ?? query.endMs;
  if (selector.atMs !== null) {
    startMs = selector.atMs;
    endMs = selector.atMs;
  } else {
    startMs -= enclosing.offsetMs + enclosing.rangeMs;
    endMs -= enclosing.offsetMs;
  }
  startMs -= window + orig;
  endMs -= orig;
  if (selector.atMs !== null) {
    // timestamp() reads a selector with `@` at the `@` time itself, whatever its offset.
    startMs = Math.min(startMs, selector.atMs - window);
    endMs = Math.max(endMs, selector.atMs);
  }
  return { startMs, endMs };
}

/** One selector's read: its range (0 for an instant selector), time range and function. */
export type PlannedSelection = {
  selector: VectorSelector;
  rangeMs: number;
  timeRange: TimeRange;
  func: string | null;
};

/** The reads of every selector of `expr` (preprocessed, offsets set) for a query's range. */
export function planSelections(
  expr: Expr,
  query: { startMs: number; endMs: number; lookbackDeltaMs: number },
): PlannedSelection[] {
  const functions = functionsOfSelectors(expr);
  return selectionsOf(expr).map((selection) => ({
    selector: selection.selector,
    rangeMs: selection.rangeMs,
    timeRange: timeRangeOf(selection, query),
    func: functions.get(selection.selector) ?? null,
  }));
}
