import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '@monitor/db';
import { countSamples } from '@monitor/db/bench';

type LandedResult = {
  /** Rows (samples) the store had to reach. */
  expected: number;
  /** Rows it held once it reached `expected` (or at the timeout), and again after settling. */
  stored: number;
  drained: boolean;
  /**
   * `performance.now()` when the poll that first saw `expected` rows started: its snapshot was
   * taken then, so every row had landed by this time and after `previousPollAtMs`.
   */
  landedAtMs: number;
  previousPollAtMs: number;
};

/**
 * Polls `select count(*) from samples` until it reaches `expected` or `timeoutMs` passed, then
 * counts once more after `settleMs` so rows arriving late (more than were acknowledged) show up.
 */
export function waitForLanded(
  db: Database,
  options: { expected: number; timeoutMs: number; pollIntervalMs: number; settleMs: number },
): Promise<LandedResult> {
  return waitForCount(() => countSamples(db), options);
}

/** `waitForLanded` for any store: `count` says how many samples it holds right now. */
export async function waitForCount(
  count: () => Promise<number>,
  options: { expected: number; timeoutMs: number; pollIntervalMs: number; settleMs: number },
): Promise<LandedResult> {
  const deadline = performance.now() + options.timeoutMs;
  let previousPollAtMs = performance.now();
  for (;;) {
    const pollAtMs = performance.now();
    const counted = await count();
    const drained = counted >= options.expected;
    if (drained || performance.now() > deadline) {
      await sleep(options.settleMs);
      return {
        expected: options.expected,
        stored: await count(),
        drained,
        landedAtMs: pollAtMs,
        previousPollAtMs,
      };
    }
    previousPollAtMs = pollAtMs;
    await sleep(options.pollIntervalMs);
  }
}
