import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RetryPolicy } from './retry-policy.js';
import { defaultRetryPolicy, retryDelayMs } from './retry-policy.js';

const policy: RetryPolicy = {
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  maxAttempts: 10,
  jitterRatio: 0,
};

describe('retryDelayMs', () => {
  it('doubles from the base after each failed attempt', () => {
    expect([1, 2, 3, 4, 5].map((attempt) => retryDelayMs(attempt, policy))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000,
    ]);
  });

  it('never waits longer than the cap', () => {
    expect(retryDelayMs(7, policy)).toBe(60_000);
    expect(retryDelayMs(9, policy)).toBe(60_000);
    expect(retryDelayMs(9, { ...policy, maxAttempts: 5_000 })).toBe(60_000);
    expect(retryDelayMs(4_000, { ...policy, maxAttempts: 5_000 })).toBe(60_000);
  });

  it('gives up after the maximum number of attempts', () => {
    expect(retryDelayMs(9, policy)).toBeDefined();
    expect(retryDelayMs(10, policy)).toBeUndefined();
    expect(retryDelayMs(11, policy)).toBeUndefined();
    expect(retryDelayMs(1, { ...policy, maxAttempts: 1 })).toBeUndefined();
  });

  it('takes at most the jitter fraction off the delay', () => {
    const jittered = { ...policy, jitterRatio: 0.25 };
    expect(retryDelayMs(3, jittered, () => 0)).toBe(4_000);
    expect(retryDelayMs(3, jittered, () => 0.5)).toBe(3_500);
    expect(retryDelayMs(3, jittered, () => 0.999_999)).toBe(3_000);
  });

  it('stays within [full · (1 − jitter), full] for any attempt and random draw', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: defaultRetryPolicy.maxAttempts - 1 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, draw) => {
          const { baseDelayMs, maxDelayMs, jitterRatio } = defaultRetryPolicy;
          const full = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
          const delay = retryDelayMs(attempt, defaultRetryPolicy, () => draw)!;
          expect(delay).toBeLessThanOrEqual(full);
          expect(delay).toBeGreaterThanOrEqual(Math.floor(full * (1 - jitterRatio)));
        },
      ),
    );
  });
});
