import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '@monitor/db';
import type { BenchProcess } from './bench-process.js';
import { processCpuSeconds } from './proc-stats.js';
import { countSamples, waitForLanded } from './wait-for-landed.js';
import { scrapeWriterCounters } from './writer-metrics.js';

/** A writer draining on its own what the gateway put in Kafka while no writer ran. */
export type BacklogFigures = {
  /** Host samples' rows waiting in Kafka when the writer started. */
  rows: number;
  /** Rows stored between the first poll that saw the writer's first batch and the last poll. */
  rowsTimed: number;
  seconds: number;
  rowsPerSecond: number;
  /** Writer CPU seconds over the timed span. */
  writerCpuSeconds: number | undefined;
  /** Storage transactions over the whole drain, from the writer's metrics. */
  batches: number | undefined;
  drained: boolean;
};

/**
 * Times a freshly started writer draining `rows` waiting rows. Its start (process, group join,
 * first fetch and transaction) is left out: the clock runs from the first poll that sees rows
 * landing to the poll that sees them all, and counts only the rows stored in between.
 */
export async function timeBacklogDrain(
  db: Database,
  writer: BenchProcess,
  args: { storedBefore: number; rows: number; timeoutMs: number; pollIntervalMs: number },
): Promise<BacklogFigures> {
  const expected = args.storedBefore + args.rows;
  const deadline = performance.now() + args.timeoutMs;
  let firstSeen: { atMs: number; stored: number; cpuSeconds: number | undefined } | undefined;
  for (;;) {
    const atMs = performance.now();
    const stored = await countSamples(db);
    if (stored > args.storedBefore) {
      firstSeen = { atMs, stored, cpuSeconds: processCpuSeconds(writer.pid) };
      break;
    }
    if (atMs > deadline) break;
    await sleep(args.pollIntervalMs);
  }
  const landed =
    firstSeen === undefined
      ? undefined
      : await waitForLanded(db, {
          expected,
          timeoutMs: Math.max(0, deadline - performance.now()),
          pollIntervalMs: args.pollIntervalMs,
          settleMs: 0,
        });
  const cpuAfter = processCpuSeconds(writer.pid);
  const counters = await scrapeWriterCounters(writer.baseUrl);
  const rowsTimed = firstSeen && landed ? landed.stored - firstSeen.stored : 0;
  const seconds = firstSeen && landed ? (landed.landedAtMs - firstSeen.atMs) / 1000 : 0;
  return {
    rows: args.rows,
    rowsTimed,
    seconds,
    rowsPerSecond: seconds > 0 ? rowsTimed / seconds : 0,
    writerCpuSeconds:
      firstSeen?.cpuSeconds === undefined || cpuAfter === undefined
        ? undefined
        : cpuAfter - firstSeen.cpuSeconds,
    batches: counters?.batches,
    drained: landed?.drained ?? false,
  };
}
