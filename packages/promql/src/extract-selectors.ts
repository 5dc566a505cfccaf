import type { Expr } from './ast.js';
import type { LabelMatcher } from './label-matcher.js';

/**
 * Prometheus' `parser.ExtractSelectors`: the matchers of every vector selector in `expr`, range
 * selectors' and subqueries' included, in the order Prometheus walks the tree (an aggregation's
 * operand before its parameter). `query_exemplars` reads the series any one list matches.
 */
export function extractSelectors(expr: Expr): LabelMatcher[][] {
  switch (expr.kind) {
    case 'number':
    case 'string':
      return [];
    case 'vector':
      return [expr.matchers];
    case 'matrix':
      return [expr.selector.matchers];
    case 'call':
      return expr.args.flatMap(extractSelectors);
    case 'aggregate':
      return [
        ...extractSelectors(expr.expr),
        ...(expr.param === null ? [] : extractSelectors(expr.param)),
      ];
    case 'binary':
      return [...extractSelectors(expr.lhs), ...extractSelectors(expr.rhs)];
    case 'subquery':
    case 'unary':
    case 'paren':
    case 'step-invariant':
      return extractSelectors(expr.expr);
  }
}
