import type { Database, HostSample } from '@monitor/db';
import { createSampleStore } from '@monitor/db';

/**
 * Writes `samplesOf(round)` through the writer's own store every 100 ms until stopped, while a
 * benchmark measures something else on the same database; `stop` resolves the values written.
 */
export function writeMeanwhile(
  db: Database,
  samplesOf: (round: number) => HostSample[],
): { stop(): Promise<number> } {
  const store = createSampleStore(db);
  let running = true;
  let written = 0;
  const loop = (async () => {
    for (let round = 0; running; round++) {
      const samples = samplesOf(round);
      await store.writeBatch({ samples });
      for (const sample of samples) written += Object.keys(sample.metrics).length;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return written;
    },
  };
}
