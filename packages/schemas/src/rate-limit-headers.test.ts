import { describe, expect, it } from 'vitest';
import {
  formatRateLimit,
  formatRateLimitPolicy,
  rateLimitHeaderPatterns,
} from './rate-limit-headers.js';

describe('rate-limit headers', () => {
  it('formats the documented examples within the documented patterns', () => {
    expect(formatRateLimit('6000-per-minute', 5999, 60)).toMatch(
      new RegExp(rateLimitHeaderPatterns.RateLimit),
    );
    expect(formatRateLimitPolicy('6000-per-minute', 6000, 'MGE4ZjQ1YjE2NmFk')).toMatch(
      new RegExp(rateLimitHeaderPatterns['RateLimit-Policy']),
    );
  });
});
