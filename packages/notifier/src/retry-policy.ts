/** Exponential backoff of failed deliveries: base · 2^(attempt − 1), capped, with jitter. */
export type RetryPolicy = {
  /** The delay after the first failed attempt. */
  baseDelayMs: number;
  /** No delay exceeds this. */
  maxDelayMs: number;
  /** Attempts in all, the first included; the last failure ends the message `failed`. */
  maxAttempts: number;
  /** Up to this fraction of each delay is taken off at random, so retries spread out (0..1). */
  jitterRatio: number;
};

/** 10 attempts over about 1.5 hours: 5 s, 10 s, 20 s, … up to 30 minutes apart. */
export const defaultRetryPolicy: RetryPolicy = {
  baseDelayMs: 5_000,
  maxDelayMs: 30 * 60_000,
  maxAttempts: 10,
  jitterRatio: 0.2,
};

/**
 * The wait after failed attempt number `attempt` (from 1), or undefined when it was the last
 * one. `random` returns [0, 1), as Math.random.
 */
export function retryDelayMs(
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number | undefined {
  if (attempt >= policy.maxAttempts) return undefined;
  // Capping the exponent first keeps 2^n finite for any attempt count.
  const exponent = Math.min(attempt - 1, 52);
  const fullMs = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** exponent);
  return Math.round(fullMs * (1 - policy.jitterRatio * random()));
}
