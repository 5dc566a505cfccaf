import { describe, expect, it } from 'vitest';
import { parsePromql } from './parse-promql.js';

describe('parsePromql', () => {
  it('reads modifiers onto the selector they apply to', () => {
    const expr = parsePromql('rate(foo{a=~"b.*"}[5m] offset 1m @ 100)');
    expect(expr.kind).toBe('call');
    if (expr.kind !== 'call') return;
    const arg = expr.args[0]!;
    expect(arg.kind).toBe('matrix');
    if (arg.kind !== 'matrix') return;
    expect(arg.rangeMs).toBe(300_000);
    expect(arg.selector.originalOffsetMs).toBe(60_000);
    expect(arg.selector.atMs).toBe(100_000);
    expect(arg.selector.matchers.map((m) => [m.name, m.type, m.value])).toEqual([
      ['a', '=~', 'b.*'],
      ['__name__', '=', 'foo'],
    ]);
  });

  it.each([
    ['rate(x)', 'expected type range vector in call to function "rate", got instant vector'],
    ['sum(x[5m])', 'expected type instant vector in aggregation expression, got range vector'],
    ['1 > 2', 'comparisons between scalars must use BOOL modifier'],
    ['{a=""}', 'vector selector must contain at least one non-empty matcher'],
    ['x offset 1m offset 2m', 'offset may not be set multiple times'],
    ['unknown_fn(x)', 'unknown function with name "unknown_fn"'],
    ['a and 1', 'set operator "and" not allowed in binary scalar expression'],
  ])('refuses %s as Prometheus does', (query, message) => {
    expect(() => parsePromql(query)).toThrow(message);
  });
});
