import type { Expr, VectorMatching, VectorSelector } from './ast.js';
import { formatFloat } from './format-float.js';
import type { LabelMatcher } from './label-matcher.js';

// An expression as Prometheus 2.42 prints it: `String()` of promql/parser/printer.go, and
// `Prettify` of prettier.go (what `/api/v1/format_query` answers): a node longer than 100
// characters is split over lines, its children indented by two spaces per level.

const maxCharactersPerLine = 100;

/**
 * A number literal as Go's `%v` prints a float64 (strconv's 'g', shortest): exponent form
 * (`1e-07`, `2e+21`) below 1e-4 and from 1e6 on, plain decimals between.
 */
function goFloat(value: number): string {
  if (!Number.isFinite(value) || value === 0) return formatFloat(value);
  const [mantissa = '', exponentText = '0'] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent >= -4 && exponent < 6) return formatFloat(value);
  const digits = String(Math.abs(exponent)).padStart(2, '0');
  return `${mantissa}e${exponent < 0 ? '-' : '+'}${digits}`;
}

/** Go's `%q`: double quotes, Go's escapes, printable characters as they are. */
function goQuote(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === '"') out += '\\"';
    else if (char === '\\') out += '\\\\';
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (code === 0x07) out += '\\a';
    else if (code === 0x08) out += '\\b';
    else if (code === 0x0c) out += '\\f';
    else if (code === 0x0b) out += '\\v';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += char;
  }
  return `${out}"`;
}

/** prometheus/common's model.Duration: `1h30m`, `90d` (years and weeks only when exact). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let left = ms;
  let out = '';
  const units: [string, number, boolean][] = [
    ['y', 31_536_000_000, true],
    ['w', 604_800_000, true],
    ['d', 86_400_000, false],
    ['h', 3_600_000, false],
    ['m', 60_000, false],
    ['s', 1000, false],
    ['ms', 1, false],
  ];
  for (const [unit, size, exact] of units) {
    if (exact && left % size !== 0) continue;
    const count = Math.floor(left / size);
    if (count > 0) {
      out += `${count}${unit}`;
      left -= count * size;
    }
  }
  return out;
}

function matcherText(matcher: LabelMatcher): string {
  return `${matcher.name}${matcher.type}${goQuote(matcher.value)}`;
}

function offsetText(ms: number): string {
  if (ms > 0) return ` offset ${formatDuration(ms)}`;
  if (ms < 0) return ` offset -${formatDuration(-ms)}`;
  return '';
}

function atText(selector: Pick<VectorSelector, 'atMs' | 'startOrEnd'>): string {
  if (selector.atMs !== null) return ` @ ${(selector.atMs / 1000).toFixed(3)}`;
  if (selector.startOrEnd !== null) return ` @ ${selector.startOrEnd}()`;
  return '';
}

/** The selector's name and matchers (the `__name__` matcher its name stands for left out). */
function selectorText(selector: VectorSelector): string {
  const labels = selector.matchers
    .filter((m) => !(m.name === '__name__' && m.type === '=' && m.value === selector.name))
    .map(matcherText)
    .sort();
  return labels.length === 0 ? selector.name : `${selector.name}{${labels.join(',')}}`;
}

function matchingText(matching: VectorMatching | null): string {
  if (matching === null || (matching.matchingLabels.length === 0 && !matching.on)) return '';
  let text = ` ${matching.on ? 'on' : 'ignoring'} (${matching.matchingLabels.join(', ')})`;
  if (matching.card === 'many-to-one' || matching.card === 'one-to-many') {
    const side = matching.card === 'many-to-one' ? 'left' : 'right';
    text += ` group_${side} (${matching.include.join(', ')})`;
  }
  return text;
}

function aggregateOpText(expr: Extract<Expr, { kind: 'aggregate' }>): string {
  if (expr.without) return `${expr.op} without (${expr.grouping.join(', ')}) `;
  if (expr.grouping.length > 0) return `${expr.op} by (${expr.grouping.join(', ')}) `;
  return expr.op;
}

/** Prometheus' `Expr.String()`: the expression on one line. */
export function formatPromql(expr: Expr): string {
  switch (expr.kind) {
    case 'number':
      return goFloat(expr.value);
    case 'string':
      return goQuote(expr.value);
    case 'vector':
      return `${selectorText(expr)}${atText(expr)}${offsetText(expr.originalOffsetMs)}`;
    case 'matrix': {
      const { selector } = expr;
      return `${selectorText(selector)}[${formatDuration(expr.rangeMs)}]${atText(selector)}${offsetText(selector.originalOffsetMs)}`;
    }
    case 'call':
      return `${expr.func.name}(${expr.args.map(formatPromql).join(', ')})`;
    case 'aggregate': {
      const param = expr.param === null ? '' : `${formatPromql(expr.param)}, `;
      return `${aggregateOpText(expr)}(${param}${formatPromql(expr.expr)})`;
    }
    case 'binary': {
      const bool = expr.returnBool ? ' bool' : '';
      return `${formatPromql(expr.lhs)} ${expr.op}${bool}${matchingText(expr.matching)} ${formatPromql(expr.rhs)}`;
    }
    case 'unary':
      return `${expr.op}${formatPromql(expr.expr)}`;
    case 'paren':
      return `(${formatPromql(expr.expr)})`;
    case 'step-invariant':
      return formatPromql(expr.expr);
    case 'subquery':
      return `${formatPromql(expr.expr)}${subqueryTimeSuffix(expr)}`;
  }
}

/** `[<range>:<step>] @ <time> offset <offset>`, as Prometheus' printer writes a subquery's. */
function subqueryTimeSuffix(expr: Extract<Expr, { kind: 'subquery' }>): string {
  const step = expr.stepMs === 0 ? '' : formatDuration(expr.stepMs);
  return `[${formatDuration(expr.rangeMs)}:${step}]${atText(expr)}${offsetText(expr.originalOffsetMs)}`;
}

function indent(level: number): string {
  return '  '.repeat(level);
}

function pretty(expr: Expr, level: number): string {
  const line = formatPromql(expr);
  const split = line.length > maxCharactersPerLine;
  switch (expr.kind) {
    case 'aggregate': {
      if (!split) return indent(level) + line;
      const param = expr.param === null ? '' : `${pretty(expr.param, level + 1)},\n`;
      return `${indent(level)}${aggregateOpText(expr)}(\n${param}${pretty(expr.expr, level + 1)}\n${indent(level)})`;
    }
    case 'binary': {
      if (!split) return indent(level) + line;
      const bool = expr.returnBool ? ' bool' : '';
      return `${pretty(expr.lhs, level + 1)}\n${indent(level)}${expr.op}${bool}${matchingText(expr.matching)}\n${pretty(expr.rhs, level + 1)}`;
    }
    case 'call': {
      if (!split) return indent(level) + line;
      const args = expr.args.map((arg) => pretty(arg, level + 1)).join(',\n');
      return `${indent(level)}${expr.func.name}(\n${args}\n${indent(level)})`;
    }
    case 'paren':
      if (!split) return indent(level) + line;
      return `${indent(level)}(\n${pretty(expr.expr, level + 1)}\n${indent(level)})`;
    case 'step-invariant':
      return pretty(expr.expr, level);
    case 'subquery':
      if (!split) return indent(level) + line;
      return `${pretty(expr.expr, level)}${subqueryTimeSuffix(expr)}`;
    case 'unary':
      return `${indent(level)}${expr.op}${pretty(expr.expr, level).trim()}`;
    default:
      return indent(level) + line;
  }
}

/** Prometheus' `parser.Prettify`: what `/api/v1/format_query` answers. */
export function prettifyPromql(expr: Expr): string {
  return pretty(expr, 0);
}
