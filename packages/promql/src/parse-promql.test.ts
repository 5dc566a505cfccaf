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

  it('reads a subquery with its range, step and modifiers', () => {
    const expr = parsePromql('rate(x[5m])[30m:1m] offset 5m @ 100');
    expect(expr).toMatchObject({
      kind: 'subquery',
      rangeMs: 1_800_000,
      stepMs: 60_000,
      originalOffsetMs: 300_000,
      atMs: 100_000,
      expr: { kind: 'call', args: [{ kind: 'matrix', rangeMs: 300_000 }] },
    });
    expect(parsePromql('x[5m:] offset -1m')).toMatchObject({
      kind: 'subquery',
      stepMs: 0,
      originalOffsetMs: -60_000,
    });
  });

  it('binds ^ tighter than the sign of a literal, as Prometheus does', () => {
    expect(parsePromql('-1 ^ 2')).toEqual({
      kind: 'unary',
      op: '-',
      expr: {
        kind: 'binary',
        op: '^',
        lhs: { kind: 'number', value: 1 },
        rhs: { kind: 'number', value: 2 },
        returnBool: false,
        matching: null,
      },
    });
    expect(parsePromql('-1')).toEqual({ kind: 'number', value: -1 });
    expect(parsePromql('2 ^ -1')).toMatchObject({ rhs: { kind: 'number', value: -1 } });
    expect(parsePromql('-1 * 2')).toMatchObject({ lhs: { kind: 'number', value: -1 } });
  });

  it.each([
    ['x[5m][10m:]', 'subquery is only allowed on instant vector, got matrix instead'],
    ['1[5m:1m]', 'subquery is only allowed on instant vector, got scalar instead'],
    ['x[5m:0s]', 'duration must be greater than 0'],
    ['x[5m:] offset 1m offset 2m', 'offset may not be set multiple times'],
    ['x[5m:] @ 1 @ 2', '@ <timestamp> may not be set multiple times'],
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
