import { describeError, logProgress } from './progress.js';

/** Undoing what a run started: on success, on errors and on Ctrl-C. */
export type Cleanup = {
  /** Registers an undo step; steps run newest first. */
  add(name: string, undo: () => Promise<void>): void;
  /** Runs every step once; idempotent, so both a signal and `finally` may call it. */
  run(): Promise<void>;
};

/** An empty undo list; a step that fails is logged and the others still run. */
export function createCleanup(): Cleanup {
  const steps: { name: string; undo: () => Promise<void> }[] = [];
  let running: Promise<void> | undefined;
  return {
    add(name, undo) {
      steps.push({ name, undo });
    },
    run() {
      running ??= (async () => {
        for (const step of steps.reverse()) {
          try {
            await step.undo();
          } catch (err) {
            logProgress(`could not stop ${step.name}: ${describeError(err)}`);
          }
        }
      })();
      return running;
    },
  };
}

/** SIGINT and SIGTERM stop everything the run started, then exit with the signal's code. */
export function stopOnSignals(cleanup: Cleanup): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      logProgress(`${signal}: stopping everything this run started`);
      void cleanup.run().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
}
