import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchProcess } from './bench-process.js';
import { processCpuSeconds } from './proc-stats.js';
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
  /** The writer said it stored every waiting row, and `samples` holds them. */
  drained: boolean;
};

/**
 * Times a freshly started writer draining `rows` waiting rows. Its start (process, group join,
 * first fetch and transaction) is left out: the clock runs from the first poll that sees rows
 * written to the poll that sees them all, and counts only the rows written in between.
 *
 * It polls the writer's own counter of committed rows (`writer_samples_written_total`), not
 * `count(*)` of `samples`: a count scans every row stored so far, and polled every 100 ms it
 * took a third of a core from the PostgreSQL being measured (35 % of a core in `top` during a
 * 10 M-row drain). One count at the end (`countStored`, every shard's) checks that the rows are
 * there.
 */
export async function timeBacklogDrain(
  countStored: () => Promise<number>,
  writer: BenchProcess,
  args: { storedBefore: number; rows: number; timeoutMs: number; pollIntervalMs: number },
): Promise<BacklogFigures> {
  const deadline = performance.now() + args.timeoutMs;
  const written = async (): Promise<number> =>
    (await scrapeWriterCounters(writer.baseUrl))?.samplesWritten ?? 0;
  let firstSeen: { atMs: number; written: number; cpuSeconds: number | undefined } | undefined;
  let last: { atMs: number; written: number } | undefined;
  for (;;) {
    const atMs = performance.now();
    const count = await written();
    if (firstSeen === undefined && count > 0) {
      firstSeen = { atMs, written: count, cpuSeconds: processCpuSeconds(writer.pid) };
    }
    if (firstSeen !== undefined && (count >= args.rows || atMs > deadline)) {
      last = { atMs, written: count };
      break;
    }
    if (atMs > deadline) break;
    await sleep(args.pollIntervalMs);
  }
  const cpuAfter = processCpuSeconds(writer.pid);
  const counters = await scrapeWriterCounters(writer.baseUrl);
  const stored = await countStored();
  const rowsTimed = firstSeen && last ? last.written - firstSeen.written : 0;
  const seconds = firstSeen && last ? (last.atMs - firstSeen.atMs) / 1000 : 0;
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
    drained: (last?.written ?? 0) >= args.rows && stored >= args.storedBefore + args.rows,
  };
}
