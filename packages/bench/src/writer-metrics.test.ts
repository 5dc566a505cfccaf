import { describe, expect, it } from 'vitest';
import { sumOf } from './writer-metrics.js';

describe('sumOf', () => {
  it('sums a metric over its label sets and ignores metrics sharing its prefix', () => {
    const text = [
      '# TYPE writer_batch_write_seconds histogram',
      'writer_batch_write_seconds_sum{role="writer"} 1.5',
      'writer_batch_write_seconds_sum{role="other"} 0.5',
      'writer_batch_write_seconds_sum_extra 9',
      'writer_batch_write_seconds_count 3',
    ].join('\n');
    expect(sumOf(text, 'writer_batch_write_seconds_sum')).toBe(2);
    expect(sumOf(text, 'writer_batch_write_seconds_count')).toBe(3);
  });
});
