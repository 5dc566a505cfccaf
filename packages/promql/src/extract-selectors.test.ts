import { describe, expect, it } from 'vitest';
import { extractSelectors } from './extract-selectors.js';
import { parsePromql } from './parse-promql.js';

/** Each selector's matchers as `name type value` text. */
const selectorsOf = (query: string) =>
  extractSelectors(parsePromql(query)).map((matchers) =>
    matchers.map((m) => `${m.name}${m.type}${JSON.stringify(m.value)}`),
  );

describe('extractSelectors', () => {
  it('lists the matchers of every selector, whatever lies between them', () => {
    expect(
      selectorsOf(
        'topk(scalar(a), rate(b{job="x"}[5m])) / on(job) group_left -max_over_time(c[1h:1m]) or (d)',
      ),
    ).toEqual([['job="x"', '__name__="b"'], ['__name__="a"'], ['__name__="c"'], ['__name__="d"']]);
  });

  it('keeps each selector of a repeated metric, and its regular expressions as written', () => {
    expect(selectorsOf('{__name__=~"x_.+", le!="1"} + x_total offset 5m')).toEqual([
      ['__name__=~"x_.+"', 'le!="1"'],
      ['__name__="x_total"'],
    ]);
  });

  it('finds none in an expression of literals', () => {
    expect(selectorsOf('1 + vector(2) * scalar(vector(time()))')).toEqual([]);
    expect(selectorsOf('"text"')).toEqual([]);
  });
});
