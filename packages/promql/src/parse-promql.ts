import { createRequire } from 'node:module';
import type { SyntaxNode } from '@lezer/common';
import type { LRParser } from '@lezer/lr';
import type {
  AggregateOp,
  BinaryOp,
  Expr,
  SubqueryExpr,
  ValueType,
  VectorMatching,
  VectorSelector,
} from './ast.js';
import { isComparison, isSetOperator, typeOf } from './ast.js';
import { functionDefinitions } from './function-definitions.js';
import type { MatchType } from './label-matcher.js';
import { createLabelMatcher } from './label-matcher.js';
import { metricNameLabel } from './labels.js';
import { badData } from './promql-error.js';
import { parseDurationMs, parsePromqlNumber, unquotePromqlString } from './promql-literals.js';

// Loaded through its CommonJS entry: the package's `exports` do not point at its types, which
// NodeNext resolution of the ES entry would need.
const { parser } = createRequire(import.meta.url)('@prometheus-io/lezer-promql') as {
  parser: LRParser;
};

const binaryOps: Record<string, BinaryOp> = {
  Add: '+',
  Sub: '-',
  Mul: '*',
  Div: '/',
  Mod: '%',
  Pow: '^',
  Atan2: 'atan2',
  EqlSingle: '==',
  Eql: '==',
  Neq: '!=',
  Gtr: '>',
  Lss: '<',
  Gte: '>=',
  Lte: '<=',
  And: 'and',
  Or: 'or',
  Unless: 'unless',
};

/** Binding strength of each operator, as Prometheus' yacc grammar orders them (^ binds right). */
const precedence: Record<BinaryOp, number> = {
  or: 1,
  and: 2,
  unless: 2,
  '==': 3,
  '!=': 3,
  '>': 3,
  '<': 3,
  '>=': 3,
  '<=': 3,
  '+': 4,
  '-': 4,
  '*': 5,
  '/': 5,
  '%': 5,
  atan2: 5,
  '^': 6,
};

const matchOps: Record<string, MatchType> = {
  EqlSingle: '=',
  Neq: '!=',
  EqlRegex: '=~',
  NeqRegex: '!~',
};

const aggregateOps: Record<string, AggregateOp> = {
  Sum: 'sum',
  Avg: 'avg',
  Min: 'min',
  Max: 'max',
  Count: 'count',
  Group: 'group',
  Stddev: 'stddev',
  Stdvar: 'stdvar',
  Topk: 'topk',
  Bottomk: 'bottomk',
  Quantile: 'quantile',
  CountValues: 'count_values',
};

/** The lezer node's children (lezer's own iteration, without error recovery nodes). */
function children(node: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let child = node.firstChild; child !== null; child = child.nextSibling) out.push(child);
  return out;
}

function position(query: string, offset: number): string {
  const before = query.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `${line}:${column}`;
}

function firstError(node: SyntaxNode): SyntaxNode | null {
  if (node.type.isError) return node;
  for (let child = node.firstChild; child !== null; child = child.nextSibling) {
    const found = firstError(child);
    if (found !== null) return found;
  }
  return null;
}

/**
 * A name followed by `(` that is no function: the grammar only knows Prometheus' functions, so
 * it reads such a call as a broken selector. Named in the error, as Prometheus does.
 */
function unknownFunction(query: string): string | null {
  const call = /(?:^|[^A-Za-z0-9_:"'`])([A-Za-z_][A-Za-z0-9_]*)\s*\(/g;
  for (let match = call.exec(query); match !== null; match = call.exec(query)) {
    const name = match[1]!;
    if (functionDefinitions.has(name)) continue;
    if (name in keywordsBeforeParen) continue;
    return name;
  }
  return null;
}

const keywordsBeforeParen: Record<string, true> = {
  by: true,
  without: true,
  on: true,
  ignoring: true,
  group_left: true,
  group_right: true,
  bool: true,
  start: true,
  end: true,
  ...Object.fromEntries(Object.values(aggregateOps).map((op) => [op, true])),
  and: true,
  or: true,
  unless: true,
  atan2: true,
};

class Builder {
  constructor(private readonly query: string) {}

  text(node: SyntaxNode): string {
    return this.query.slice(node.from, node.to);
  }

  fail(node: SyntaxNode, message: string): never {
    throw badData(`${position(this.query, node.from)}: parse error: ${message}`);
  }

  expr(node: SyntaxNode): Expr {
    switch (node.name) {
      case 'NumberLiteral':
        return this.numberLiteral(node);
      case 'StringLiteral':
        return { kind: 'string', value: this.string(node) };
      case 'VectorSelector':
        return this.vectorSelector(node);
      case 'MatrixSelector':
        return this.matrixSelector(node);
      case 'SubqueryExpr':
        return this.subquery(node);
      case 'OffsetExpr':
        return this.offset(node);
      case 'StepInvariantExpr':
        return this.at(node);
      case 'FunctionCall':
        return this.call(node);
      case 'AggregateExpr':
        return this.aggregate(node);
      case 'BinaryExpr':
        return this.binary(node);
      case 'UnaryExpr': {
        const [op, operand] = children(node);
        const inner = this.expr(operand!);
        const type = typeOf(inner);
        if (type !== 'scalar' && type !== 'vector') {
          this.fail(
            node,
            `unary expression only allowed on expressions of type scalar or instant vector, got "${documented(type)}"`,
          );
        }
        const sign = this.text(op!) === '-' ? '-' : '+';
        // As Prometheus: a sign on a literal is folded into it.
        if (inner.kind === 'number')
          return sign === '-' ? { ...inner, value: -inner.value } : inner;
        return { kind: 'unary', op: sign, expr: inner };
      }
      case 'ParenExpr':
        return { kind: 'paren', expr: this.expr(children(node)[0]!) };
      default:
        return this.fail(node, `unexpected ${node.name}`);
    }
  }

  /**
   * The grammar reads a sign before a number as part of the literal; Prometheus reads it as a
   * unary operator folded into the literal, which is the same value.
   */
  numberLiteral(node: SyntaxNode): Expr {
    const { sign, digits } = this.signedNumber(node);
    const value = this.numberText(node, digits);
    return { kind: 'number', value: sign === '-' ? -value : value };
  }

  signedNumber(node: SyntaxNode): { sign: '+' | '-' | null; digits: string } {
    const match = /^([+-])\s*(.*)$/s.exec(this.text(node));
    if (match === null) return { sign: null, digits: this.text(node) };
    return { sign: match[1] === '-' ? '-' : '+', digits: match[2]! };
  }

  number(node: SyntaxNode): number {
    return this.numberText(node, this.text(node));
  }

  numberText(node: SyntaxNode, text: string): number {
    try {
      return parsePromqlNumber(text);
    } catch (err) {
      return this.fail(node, (err as Error).message);
    }
  }

  string(node: SyntaxNode): string {
    try {
      return unquotePromqlString(this.text(node));
    } catch (err) {
      return this.fail(node, (err as Error).message);
    }
  }

  duration(node: SyntaxNode): number {
    let ms: number;
    try {
      ms = parseDurationMs(this.text(node));
    } catch (err) {
      return this.fail(node, (err as Error).message);
    }
    if (ms === 0) this.fail(node, 'duration must be greater than 0');
    return ms;
  }

  vectorSelector(node: SyntaxNode): VectorSelector {
    let name = '';
    const matchers = [];
    for (const child of children(node)) {
      if (child.name === 'Identifier') name = this.text(child);
      else if (child.name === 'LabelMatchers') {
        for (const matcher of children(child)) {
          const [labelName, op, value] = children(matcher);
          const type = matchOps[children(op!)[0]?.name ?? ''];
          if (labelName === undefined || type === undefined || value === undefined) {
            this.fail(matcher, 'invalid label matcher');
          }
          matchers.push(createLabelMatcher(this.text(labelName), type, this.string(value)));
        }
      }
    }
    if (name !== '') {
      if (matchers.some((m) => m.name === metricNameLabel)) {
        this.fail(node, `metric name must not be set twice: "${name}"`);
      }
      matchers.push(createLabelMatcher(metricNameLabel, '=', name));
    } else if (!matchers.some((m) => !m.matches(''))) {
      this.fail(node, 'vector selector must contain at least one non-empty matcher');
    }
    return {
      kind: 'vector',
      name,
      matchers,
      originalOffsetMs: 0,
      offsetMs: 0,
      atMs: null,
      startOrEnd: null,
    };
  }

  matrixSelector(node: SyntaxNode): Expr {
    const [inner, duration] = children(node);
    const selector = this.expr(inner!);
    if (selector.kind !== 'vector') this.fail(node, 'ranges only allowed for vector selectors');
    if (selector.originalOffsetMs !== 0 || selector.atMs !== null || selector.startOrEnd !== null) {
      this.fail(node, 'no offset or @ modifiers allowed before range');
    }
    return { kind: 'matrix', selector, rangeMs: this.duration(duration!) };
  }

  /** The selector or subquery an offset or @ applies to (Prometheus allows nothing else). */
  modified(node: SyntaxNode, expr: Expr, what: string): VectorSelector | SubqueryExpr {
    // Lezer's grammar hangs a modifier written after `a or b` (or `-b`) on the whole expression;
    // Prometheus' own parser binds it tighter, to the operand it follows: `a or (b offset 1m)`.
    while (expr.kind === 'binary' || expr.kind === 'unary') {
      expr = expr.kind === 'binary' ? expr.rhs : expr.expr;
    }
    if (expr.kind === 'vector' || expr.kind === 'subquery') return expr;
    if (expr.kind === 'matrix') return expr.selector;
    return this.fail(
      node,
      `${what} modifier must be preceded by an instant vector selector or range vector selector or a subquery`,
    );
  }

  offset(node: SyntaxNode): Expr {
    const parts = children(node);
    const inner = this.expr(parts[0]!);
    const selector = this.modified(node, inner, 'offset');
    const negative = parts.some((p) => p.name === 'Sub');
    const ms = this.duration(parts[parts.length - 1]!);
    if (selector.originalOffsetMs !== 0) this.fail(node, 'offset may not be set multiple times');
    selector.originalOffsetMs = negative ? -ms : ms;
    selector.offsetMs = selector.originalOffsetMs;
    return inner;
  }

  at(node: SyntaxNode): Expr {
    const parts = children(node);
    const inner = this.expr(parts[0]!);
    const selector = this.modified(node, inner, '@');
    if (selector.atMs !== null || selector.startOrEnd !== null) {
      this.fail(node, '@ <timestamp> may not be set multiple times');
    }
    const value = parts[parts.length - 1]!;
    if (value.name === 'AtModifierPreprocessors') {
      selector.startOrEnd = children(value)[0]?.name === 'Start' ? 'start' : 'end';
    } else {
      const seconds = this.number(value);
      if (!Number.isFinite(seconds) || Math.abs(seconds) >= 9.2e18) {
        this.fail(node, `timestamp out of bounds for @ modifier: ${seconds}`);
      }
      selector.atMs = Math.round(seconds * 1000);
    }
    return inner;
  }

  subquery(node: SyntaxNode): Expr {
    const parts = children(node);
    const inner = this.expr(parts[0]!);
    const durations = parts.filter((p) => p.name === 'Duration');
    const rangeMs = this.duration(durations[0]!);
    const stepMs = durations[1] === undefined ? 0 : this.duration(durations[1]);
    const type = typeOf(inner);
    if (type !== 'vector') {
      // Prometheus names the type itself here ("matrix"), not its documented name.
      this.fail(node, `subquery is only allowed on instant vector, got ${type} instead`);
    }
    return {
      kind: 'subquery',
      expr: inner,
      rangeMs,
      stepMs,
      originalOffsetMs: 0,
      offsetMs: 0,
      atMs: null,
      startOrEnd: null,
    };
  }

  call(node: SyntaxNode): Expr {
    const [identifier, body] = children(node);
    const name = this.text(identifier!);
    const func = functionDefinitions.get(name);
    if (func === undefined) return this.fail(node, `unknown function with name "${name}"`);
    const args = children(body!).map((arg) => this.expr(arg));
    const nargs = func.argTypes.length;
    if (func.variadic === 0) {
      if (nargs !== args.length) {
        this.fail(node, `expected ${nargs} argument(s) in call to "${name}", got ${args.length}`);
      }
    } else {
      const least = nargs - 1;
      if (least > args.length) {
        this.fail(
          node,
          `expected at least ${least} argument(s) in call to "${name}", got ${args.length}`,
        );
      } else if (func.variadic > 0 && least + func.variadic < args.length) {
        this.fail(
          node,
          `expected at most ${least + func.variadic} argument(s) in call to "${name}", got ${args.length}`,
        );
      }
    }
    args.forEach((arg, i) => {
      const want = func.argTypes[Math.min(i, nargs - 1)]!;
      this.expectType(node, arg, want, `call to function "${name}"`);
    });
    return { kind: 'call', func, args };
  }

  expectType(node: SyntaxNode, expr: Expr, want: ValueType, context: string): void {
    const got = typeOf(expr);
    if (got !== want) {
      this.fail(node, `expected type ${documented(want)} in ${context}, got ${documented(got)}`);
    }
  }

  grouping(node: SyntaxNode): string[] {
    return children(node)
      .filter((c) => c.name === 'LabelName')
      .map((c) => this.text(c));
  }

  aggregate(node: SyntaxNode): Expr {
    let op: AggregateOp | undefined;
    let grouping: string[] = [];
    let without = false;
    let args: Expr[] = [];
    for (const child of children(node)) {
      if (child.name === 'AggregateOp') op = aggregateOps[children(child)[0]?.name ?? ''];
      else if (child.name === 'AggregateModifier') {
        const [kind, labels] = children(child);
        without = kind?.name === 'Without';
        grouping = labels === undefined ? [] : this.grouping(labels);
      } else if (child.name === 'FunctionCallBody') {
        args = children(child).map((arg) => this.expr(arg));
      }
    }
    if (op === undefined) return this.fail(node, 'unknown aggregation');
    const takesParam =
      op === 'topk' || op === 'bottomk' || op === 'quantile' || op === 'count_values';
    const want = takesParam ? 2 : 1;
    if (args.length !== want) {
      this.fail(
        node,
        `wrong number of arguments for aggregate expression provided, expected ${want}, got ${args.length}`,
      );
    }
    const param = takesParam ? args[0]! : null;
    const expr = args[args.length - 1]!;
    this.expectType(node, expr, 'vector', 'aggregation expression');
    if (param !== null) {
      this.expectType(
        node,
        param,
        op === 'count_values' ? 'string' : 'scalar',
        'aggregation parameter',
      );
    }
    return { kind: 'aggregate', op, expr, param, grouping, without };
  }

  binary(node: SyntaxNode): Expr {
    const parts = children(node);
    const opName = parts[1]?.name;
    if (opName === 'Pow' && parts[0]!.name === 'NumberLiteral') {
      const { sign } = this.signedNumber(parts[0]!);
      // `-1 ^ 2`: the grammar binds the sign to the literal, Prometheus binds `^` tighter than a
      // unary minus (which has the precedence of `*`), so this is -(1 ^ 2).
      if (sign !== null) {
        const { digits } = this.signedNumber(parts[0]!);
        const base: Expr = { kind: 'number', value: this.numberText(parts[0]!, digits) };
        return { kind: 'unary', op: sign, expr: this.binaryOf(node, parts, base) };
      }
    }
    return this.rotated(node, parts, this.expr(parts[0]!));
  }

  /**
   * `lhs op rhs`, re-associated where Lezer's grammar got the precedence wrong: it parses
   * `a + b @ 1 * c` as `(a + b @ 1) * c`, a modifier closing the expression before it, where
   * Prometheus reads `a + ((b @ 1) * c)`. An unparenthesized left operand that binds looser than
   * `op` arises only so, and then `op` takes its right operand instead.
   */
  rotated(node: SyntaxNode, parts: SyntaxNode[], lhs: Expr): Expr {
    const op = binaryOps[parts[1]!.name];
    if (lhs.kind === 'binary' && op !== undefined) {
      const tighter = precedence[op] > precedence[lhs.op] || (op === '^' && lhs.op === '^');
      if (tighter) return { ...lhs, rhs: this.rotated(node, parts, lhs.rhs) };
    }
    return this.binaryOf(node, parts, lhs);
  }

  binaryOf(node: SyntaxNode, parts: SyntaxNode[], lhs: Expr): Expr {
    const rhs = this.expr(parts[parts.length - 1]!);
    const opNode = parts[1]!;
    const op = binaryOps[opNode.name];
    if (op === undefined) return this.fail(opNode, `unknown operator ${this.text(opNode)}`);
    let returnBool = false;
    let matching: VectorMatching = {
      card: 'one-to-one',
      on: false,
      matchingLabels: [],
      include: [],
    };
    for (const part of parts.slice(2, -1)) {
      if (part.name === 'BoolModifier') returnBool = true;
      else if (part.name === 'MatchingModifierClause') matching = this.matching(part);
    }
    const lt = typeOf(lhs);
    const rt = typeOf(rhs);
    if (returnBool && !isComparison(op)) {
      this.fail(opNode, 'bool modifier can only be used on comparison operators');
    }
    if (isComparison(op) && !returnBool && lt === 'scalar' && rt === 'scalar') {
      this.fail(opNode, 'comparisons between scalars must use BOOL modifier');
    }
    if (isSetOperator(op) && matching.card === 'one-to-one') matching.card = 'many-to-many';
    if (matching.on) {
      for (const label of matching.matchingLabels) {
        if (matching.include.includes(label)) {
          this.fail(opNode, `label "${label}" must not occur in ON and GROUP clause at once`);
        }
      }
    }
    if (lt !== 'scalar' && lt !== 'vector') {
      this.fail(node, 'binary expression must contain only scalar and instant vector types');
    }
    if (rt !== 'scalar' && rt !== 'vector') {
      this.fail(node, 'binary expression must contain only scalar and instant vector types');
    }
    let vectorMatching: VectorMatching | null = matching;
    if (lt !== 'vector' || rt !== 'vector') {
      if (matching.matchingLabels.length > 0) {
        this.fail(node, 'vector matching only allowed between instant vectors');
      }
      vectorMatching = null;
    } else if (isSetOperator(op)) {
      if (matching.card === 'one-to-many' || matching.card === 'many-to-one') {
        this.fail(node, `no grouping allowed for "${op}" operation`);
      }
    }
    if ((lt === 'scalar' || rt === 'scalar') && isSetOperator(op)) {
      this.fail(node, `set operator "${op}" not allowed in binary scalar expression`);
    }
    return { kind: 'binary', op, lhs, rhs, returnBool, matching: vectorMatching };
  }

  matching(node: SyntaxNode): VectorMatching {
    const matching: VectorMatching = {
      card: 'one-to-one',
      on: false,
      matchingLabels: [],
      include: [],
    };
    let afterGroup = false;
    for (const part of children(node)) {
      switch (part.name) {
        case 'On':
          matching.on = true;
          break;
        case 'GroupLeft':
          matching.card = 'many-to-one';
          afterGroup = true;
          break;
        case 'GroupRight':
          matching.card = 'one-to-many';
          afterGroup = true;
          break;
        case 'GroupingLabels':
          if (afterGroup) matching.include = this.grouping(part);
          else matching.matchingLabels = this.grouping(part);
          break;
        default:
          break;
      }
    }
    return matching;
  }
}

function documented(type: ValueType): string {
  switch (type) {
    case 'vector':
      return 'instant vector';
    case 'matrix':
      return 'range vector';
    default:
      return type;
  }
}

/**
 * Parses PromQL with Prometheus' own grammar (`@prometheus-io/lezer-promql`, the one its UI
 * uses) into this package's AST, with the checks Prometheus' parser makes (argument counts and
 * types, modifiers, matchers). Throws a `bad_data` PromqlError naming the problem.
 */
export function parsePromql(query: string): Expr {
  if (query.trim() === '') throw badData('1:1: parse error: no expression found in input');
  const tree = parser.parse(query);
  const top = tree.topNode;
  const error = firstError(top);
  if (error !== null) {
    const name = unknownFunction(query);
    if (name !== null) throw badData(`1:1: parse error: unknown function with name "${name}"`);
    const near = query.slice(error.from, Math.max(error.to, error.from + 1)).trim();
    throw badData(
      `${position(query, error.from)}: parse error: unexpected ${near === '' ? 'end of input' : JSON.stringify(near)}`,
    );
  }
  const root = children(top);
  if (root.length !== 1) throw badData('1:1: parse error: no expression found in input');
  return new Builder(query).expr(root[0]!);
}
