import type { LabelMatcher } from './label-matcher.js';
import type { FunctionDefinition } from './function-definitions.js';

import type { ValueType } from './value-type.js';

export type { ValueType } from './value-type.js';

export type AggregateOp =
  | 'sum'
  | 'avg'
  | 'min'
  | 'max'
  | 'count'
  | 'group'
  | 'stddev'
  | 'stdvar'
  | 'topk'
  | 'bottomk'
  | 'quantile'
  | 'count_values';

export type BinaryOp =
  | '+'
  | '-'
  | '*'
  | '/'
  | '%'
  | '^'
  | 'atan2'
  | '=='
  | '!='
  | '>'
  | '<'
  | '>='
  | '<='
  | 'and'
  | 'or'
  | 'unless';

export type VectorMatching = {
  card: 'one-to-one' | 'many-to-one' | 'one-to-many' | 'many-to-many';
  /** `on(...)` when true, `ignoring(...)` (or nothing) when false. */
  on: boolean;
  matchingLabels: string[];
  /** The `group_left(...)`/`group_right(...)` labels. */
  include: string[];
};

export type VectorSelector = {
  kind: 'vector';
  name: string;
  matchers: LabelMatcher[];
  /** The `offset` as written, ms (negative offsets allowed). */
  originalOffsetMs: number;
  /** The offset the evaluator uses, adjusted for `@` relative to the query start. */
  offsetMs: number;
  /** `@` time in ms, once resolved (start()/end() resolve per query). */
  atMs: number | null;
  startOrEnd: 'start' | 'end' | null;
};

/**
 * `expr[range:step]`: `expr` evaluated at every multiple of the step (in absolute time) within
 * each outer step's window, read by a range function like a range selector.
 */
export type SubqueryExpr = {
  kind: 'subquery';
  expr: Expr;
  rangeMs: number;
  /** The step as written, ms; 0 when omitted (`[5m:]`): the engine's default step then. */
  stepMs: number;
  /** The `offset` as written, ms (negative offsets allowed). */
  originalOffsetMs: number;
  /** The offset the evaluator uses, adjusted for `@` relative to the evaluation start. */
  offsetMs: number;
  /** `@` time in ms, once resolved (start()/end() resolve per query). */
  atMs: number | null;
  startOrEnd: 'start' | 'end' | null;
};

export type Expr =
  | { kind: 'number'; value: number }
  | { kind: 'string'; value: string }
  | VectorSelector
  | { kind: 'matrix'; selector: VectorSelector; rangeMs: number }
  | SubqueryExpr
  | { kind: 'call'; func: FunctionDefinition; args: Expr[] }
  | {
      kind: 'aggregate';
      op: AggregateOp;
      expr: Expr;
      param: Expr | null;
      grouping: string[];
      without: boolean;
    }
  | {
      kind: 'binary';
      op: BinaryOp;
      lhs: Expr;
      rhs: Expr;
      returnBool: boolean;
      matching: VectorMatching | null;
    }
  | { kind: 'unary'; op: '+' | '-'; expr: Expr }
  | { kind: 'paren'; expr: Expr }
  | { kind: 'step-invariant'; expr: Expr };

export type MatrixSelector = Extract<Expr, { kind: 'matrix' }>;

export function isComparison(op: BinaryOp): boolean {
  return op === '==' || op === '!=' || op === '>' || op === '<' || op === '>=' || op === '<=';
}

export function isSetOperator(op: BinaryOp): boolean {
  return op === 'and' || op === 'or' || op === 'unless';
}

/** The type an expression evaluates to (Prometheus' `Expr.Type()`). */
export function typeOf(expr: Expr): ValueType {
  switch (expr.kind) {
    case 'number':
      return 'scalar';
    case 'string':
      return 'string';
    case 'vector':
      return 'vector';
    case 'matrix':
    case 'subquery':
      return 'matrix';
    case 'call':
      return expr.func.returnType;
    case 'aggregate':
      return 'vector';
    case 'binary':
      return typeOf(expr.lhs) === 'scalar' && typeOf(expr.rhs) === 'scalar' ? 'scalar' : 'vector';
    case 'unary':
    case 'paren':
    case 'step-invariant':
      return typeOf(expr.expr);
  }
}
