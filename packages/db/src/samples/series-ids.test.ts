import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seriesKey, seriesLabelsJson } from './series-ids.js';

describe('seriesLabelsJson', () => {
  it('writes one text per label set, whatever order the labels came in', () => {
    const labels = fc.dictionary(
      fc.string().filter((name) => name !== '__proto__'),
      fc.string(),
    );
    fc.assert(
      fc.property(labels, (record) => {
        const json = seriesLabelsJson(record);
        expect(JSON.parse(json)).toEqual(record);
        const reversed = Object.fromEntries(Object.entries(record).reverse());
        expect(seriesLabelsJson(reversed)).toBe(json);
      }),
    );
  });

  it('sorts by name, numeric names too', () => {
    expect(seriesLabelsJson({ le: '+Inf', '10': 'x', a: '"q"' })).toBe(
      '{"10":"x","a":"\\"q\\"","le":"+Inf"}',
    );
  });
});

describe('seriesKey', () => {
  it('is the metric for a series without labels of its own, and tells label sets apart', () => {
    expect(seriesKey('cpu', null)).toBe('cpu');
    expect(seriesKey('cpu', '{}')).not.toBe(seriesKey('cpu', null));
    expect(seriesKey('cpu', '{"cpu":"0"}')).not.toBe(seriesKey('cpu', '{"cpu":"1"}'));
  });
});
