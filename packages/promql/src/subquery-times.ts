import type { SubqueryExpr } from './ast.js';

/**
 * Prometheus' subqueryTimes: the summed offsets and ranges of the subqueries enclosing a node
 * (outermost first), and the `@` time of the innermost one that has one. An `@` on a subquery
 * pins its evaluation, so the sums restart there.
 */
export function subqueryTimes(path: readonly SubqueryExpr[]): {
  offsetMs: number;
  rangeMs: number;
  atMs: number | null;
} {
  let offsetMs = 0;
  let rangeMs = 0;
  let atMs: number | null = null;
  for (const subquery of path) {
    offsetMs += subquery.originalOffsetMs;
    rangeMs += subquery.rangeMs;
    if (subquery.atMs !== null) {
      offsetMs = subquery.originalOffsetMs;
      rangeMs = subquery.rangeMs;
      atMs = subquery.atMs;
    }
  }
  return { offsetMs, rangeMs, atMs };
}
