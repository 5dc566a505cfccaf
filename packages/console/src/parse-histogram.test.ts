import { describe, expect, it } from 'vitest';
import { bucketInterval, parseHistogram, parseSampleValue } from './parse-histogram.js';

describe('parseSampleValue', () => {
  it('reads Go floats as Prometheus writes them, infinities and NaN included', () => {
    expect(parseSampleValue('0.125')).toBe(0.125);
    expect(parseSampleValue('1e-05')).toBe(0.00001);
    expect(parseSampleValue('+Inf')).toBe(Infinity);
    expect(parseSampleValue('-Inf')).toBe(-Infinity);
    expect(parseSampleValue('NaN')).toBeNaN();
  });
});

describe('parseHistogram', () => {
  it('reads the count, the sum and each bucket with the boundaries it says are inclusive', () => {
    expect(
      parseHistogram({
        count: '12',
        sum: '3.4',
        buckets: [
          [3, '-0.001', '0.001', '2'],
          [0, '1', '1.0905077326652577', '7'],
          [1, '2', '4', '1.5'],
          [2, '4', '+Inf', '1.5'],
        ],
      }),
    ).toEqual({
      count: 12,
      sum: 3.4,
      buckets: [
        { lower: -0.001, upper: 0.001, lowerInclusive: true, upperInclusive: true, count: 2 },
        {
          lower: 1,
          upper: 1.0905077326652577,
          lowerInclusive: false,
          upperInclusive: true,
          count: 7,
        },
        { lower: 2, upper: 4, lowerInclusive: true, upperInclusive: false, count: 1.5 },
        { lower: 4, upper: Infinity, lowerInclusive: false, upperInclusive: false, count: 1.5 },
      ],
    });
  });

  it('has no buckets when the API lists none (nothing observed, or only NaN)', () => {
    expect(parseHistogram({ count: '0', sum: '0' })).toEqual({ count: 0, sum: 0, buckets: [] });
  });
});

describe('bucketInterval', () => {
  it('writes a bucket as an interval, brackets where its bounds are inclusive', () => {
    const [zero, upperInclusive] = parseHistogram({
      count: '3',
      sum: '1',
      buckets: [
        [3, '-0.001', '0.001', '1'],
        [0, '0.5', '1', '2'],
      ],
    }).buckets;
    expect(bucketInterval(zero!, String)).toBe('[-0.001, 0.001]');
    expect(bucketInterval(upperInclusive!, String)).toBe('(0.5, 1]');
  });
});
