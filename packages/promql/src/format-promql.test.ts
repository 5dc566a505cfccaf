import { describe, expect, it } from 'vitest';
import { formatDuration, formatPromql, prettifyPromql } from './format-promql.js';
import { parsePromql } from './parse-promql.js';

describe('formatPromql', () => {
  it('writes durations as prometheus/common does, years and weeks only when exact', () => {
    expect(formatDuration(90 * 60_000)).toBe('1h30m');
    expect(formatDuration(90 * 86_400_000)).toBe('90d');
    expect(formatDuration(14 * 86_400_000)).toBe('2w');
    expect(formatDuration(365 * 86_400_000)).toBe('1y');
    expect(formatDuration(1_500)).toBe('1s500ms');
    expect(formatDuration(0)).toBe('0s');
  });

  it('prints an expression on one line as Prometheus’ String() does', () => {
    const print = (text: string) => formatPromql(parsePromql(text));
    expect(print('sum(rate(x{b="2",a=~"1"}[90m] offset 5m))by(job)')).toBe(
      'sum by (job) (rate(x{a=~"1",b="2"}[1h30m] offset 5m))',
    );
    expect(print('0x10 + 1e-7 * 2000000')).toBe('16 + 1e-07 * 2e+06');
    expect(print('label_replace(x, "d", "a\\\\tb\\"", "s", "(.*)")')).toBe(
      'label_replace(x, "d", "a\\\\tb\\"", "s", "(.*)")',
    );
    expect(print('a / on(b) group_left(c) d > bool 1')).toBe(
      'a / on (b) group_left (c) d > bool 1',
    );
  });

  it('splits what is longer than 100 characters, children indented', () => {
    const long = `sum by (job) (rate(${'a'.repeat(60)}[5m])) / sum by (job) (rate(${'b'.repeat(60)}[5m]))`;
    expect(prettifyPromql(parsePromql(long))).toBe(
      `  sum by (job) (rate(${'a'.repeat(60)}[5m]))\n/\n  sum by (job) (rate(${'b'.repeat(60)}[5m]))`,
    );
  });
});
