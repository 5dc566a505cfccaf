import type { Expr, SubqueryExpr } from './ast.js';
import { atModifierUnsafeFunctions } from './function-definitions.js';
import { subqueryTimes } from './subquery-times.js';

function invariant(expr: Expr): Expr {
  return { kind: 'step-invariant', expr };
}

/**
 * Prometheus' PreprocessExpr: resolves `@ start()`/`@ end()` and wraps every step-invariant
 * part (a selector with `@`, literals, and what is built only of them) so that it is evaluated
 * once. Returns the expression to evaluate; selectors are updated in place.
 */
export function preprocessExpr(expr: Expr, startMs: number, endMs: number): Expr {
  const [out, isInvariant] = visit(expr, startMs, endMs);
  return isInvariant ? invariant(out) : out;
}

function visit(expr: Expr, startMs: number, endMs: number): [Expr, boolean] {
  switch (expr.kind) {
    case 'vector':
      if (expr.startOrEnd === 'start') expr.atMs = startMs;
      else if (expr.startOrEnd === 'end') expr.atMs = endMs;
      return [expr, expr.atMs !== null];
    case 'matrix': {
      const [, isInvariant] = visit(expr.selector, startMs, endMs);
      return [expr, isInvariant];
    }
    case 'subquery': {
      // The inside of a subquery is wrapped whenever it is invariant, with or without `@` on the
      // subquery: it is then evaluated once, at the subquery's own start.
      const [inner, innerInvariant] = visit(expr.expr, startMs, endMs);
      if (expr.startOrEnd === 'start') expr.atMs = startMs;
      else if (expr.startOrEnd === 'end') expr.atMs = endMs;
      return [{ ...expr, expr: innerInvariant ? invariant(inner) : inner }, expr.atMs !== null];
    }
    case 'aggregate': {
      const [inner, isInvariant] = visit(expr.expr, startMs, endMs);
      // The parameter is not looked at, as in Prometheus (a literal in practice).
      return [{ ...expr, expr: inner }, isInvariant];
    }
    case 'binary': {
      const [lhs, l] = visit(expr.lhs, startMs, endMs);
      const [rhs, r] = visit(expr.rhs, startMs, endMs);
      if (l && r) return [{ ...expr, lhs, rhs }, true];
      return [{ ...expr, lhs: l ? invariant(lhs) : lhs, rhs: r ? invariant(rhs) : rhs }, false];
    }
    case 'call': {
      let isInvariant = !atModifierUnsafeFunctions.has(expr.func.name);
      const visited = expr.args.map((arg) => visit(arg, startMs, endMs));
      for (const [, argInvariant] of visited) isInvariant = isInvariant && argInvariant;
      if (isInvariant) return [{ ...expr, args: visited.map(([a]) => a) }, true];
      return [
        { ...expr, args: visited.map(([a, argInvariant]) => (argInvariant ? invariant(a) : a)) },
        false,
      ];
    }
    case 'paren':
    case 'unary': {
      const [inner, isInvariant] = visit(expr.expr, startMs, endMs);
      return [{ ...expr, expr: inner }, isInvariant];
    }
    case 'string':
    case 'number':
      return [expr, true];
    case 'step-invariant':
      return [expr, true];
  }
}

/**
 * Prometheus' setOffsetForAtModifier: a selector or subquery with `@` is read relative to the
 * evaluation start, so its offset becomes its own plus (start - @ time), less what the enclosing
 * subqueries already shift (their offsets, or their own `@`).
 */
export function setOffsetForAtModifier(expr: Expr, evalTimeMs: number): void {
  const offsetOf = (
    node: { atMs: number | null; originalOffsetMs: number },
    path: readonly SubqueryExpr[],
  ): number => {
    if (node.atMs === null) return node.originalOffsetMs;
    const enclosing = subqueryTimes(path);
    let subqueryOffsetMs = enclosing.offsetMs;
    if (enclosing.atMs !== null) subqueryOffsetMs += evalTimeMs - enclosing.atMs;
    return node.originalOffsetMs + (evalTimeMs - node.atMs) - subqueryOffsetMs;
  };
  const visitAll = (e: Expr, path: readonly SubqueryExpr[]): void => {
    switch (e.kind) {
      case 'vector':
        e.offsetMs = offsetOf(e, path);
        return;
      case 'matrix':
        visitAll(e.selector, path);
        return;
      case 'subquery':
        e.offsetMs = offsetOf(e, path);
        visitAll(e.expr, [...path, e]);
        return;
      case 'call':
        e.args.forEach((arg) => visitAll(arg, path));
        return;
      case 'aggregate':
        if (e.param !== null) visitAll(e.param, path);
        visitAll(e.expr, path);
        return;
      case 'binary':
        visitAll(e.lhs, path);
        visitAll(e.rhs, path);
        return;
      case 'paren':
      case 'unary':
      case 'step-invariant':
        visitAll(e.expr, path);
        return;
      default:
        return;
    }
  };
  visitAll(expr, []);
}
