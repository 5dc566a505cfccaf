import { rmSync } from 'node:fs';
import { markOwner } from './service-dir.js';
import type { SupervisedProcess } from './supervised-process.js';

/** A service a test can stop and start again on the same port and data. */
export type RestartableProcess = {
  /** Stops the process, keeping its data; clients see connections refused. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data; resolves once it answers. */
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  destroy(): Promise<void>;
};

/**
 * Runs `launch` (which must not remove `dir` when the process ends) now and on every `start`,
 * keeping `dir` across restarts and removing it on `destroy` or when the first launch fails.
 */
export async function startRestartableProcess(
  dir: string,
  launch: () => Promise<SupervisedProcess>,
): Promise<RestartableProcess> {
  let running: SupervisedProcess | undefined;
  try {
    running = await launch();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    async stop() {
      await running?.stop();
      running = undefined;
      // The dir outlives its watchdog now: claim it, or another run's sweep takes it for an orphan.
      markOwner(dir, process.pid);
    },
    async start() {
      running ??= await launch();
    },
    async destroy() {
      await running?.stop();
      running = undefined;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
