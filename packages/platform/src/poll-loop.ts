export type PollLoop = {
  /** Starts the rounds; a second call while running does nothing. */
  start: () => void;
  /** Ends the pause at once and resolves after the round in progress. */
  stop: () => Promise<void>;
};

/**
 * Runs `round` again and again: at once while it says more work is waiting, else after
 * `intervalMs`. A round that throws is reported to `onError` and counts as idle, so a database
 * that is away is polled again, not hammered.
 */
export function createPollLoop(options: {
  round: () => Promise<{ moreWaiting: boolean }>;
  intervalMs: number;
  onError: (err: unknown) => void;
}): PollLoop {
  let loop: Promise<void> | undefined;
  let stopping = false;
  let wake: (() => void) | undefined;

  async function run(): Promise<void> {
    while (!stopping) {
      let moreWaiting = false;
      try {
        ({ moreWaiting } = await options.round());
      } catch (err) {
        options.onError(err);
      }
      if (moreWaiting || stopping) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  }

  return {
    start() {
      if (loop !== undefined) return;
      stopping = false;
      loop = run();
    },
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      loop = undefined;
    },
  };
}
