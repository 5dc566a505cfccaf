import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Database } from '@monitor/db';
import { fleetMetricNames } from './fleet.js';

type CopyCeilingOptions = {
  /** Service ids the rows belong to (the ones the pipeline created, so the index sees them). */
  serviceIds: readonly string[];
  /** Rows are stamped from here on; keep it clear of the times the pipeline phases used. */
  baseTimeMs: number;
  batches: number;
  rowsPerBatch: number;
  /** A COPY that takes longer fails the measurement instead of hanging it (default 60 s). */
  copyTimeoutMs?: number;
};

export type CopyCeilingResult = {
  rows: number;
  batches: number;
  rowsPerBatch: number;
  /** Time spent in COPY statements only (building the text is not counted). */
  copySeconds: number;
  rowsPerSecond: number;
};

/** Rows per write to the COPY stream, as the writer chunks them. */
const rowsPerChunk = 2000;

/**
 * The writer's ceiling: raw `COPY samples (time, service_id, metric, value) FROM STDIN` of rows
 * shaped like the pipeline's, into the same table with its dedup index, one batch per
 * statement, on the one connection of `db` (open it with `maxConnections: 1`).
 */
export async function measureCopyCeiling(
  db: Database,
  options: CopyCeilingOptions,
): Promise<CopyCeilingResult> {
  const { serviceIds, batches, rowsPerBatch } = options;
  if (serviceIds.length === 0) throw new Error('the COPY ceiling needs at least one service id');
  const timeoutMs = options.copyTimeoutMs ?? 60_000;
  const metricCount = fleetMetricNames.length;
  let row = 0;
  let copyMs = 0;
  for (let batch = 0; batch < batches; batch++) {
    const chunks: string[] = [];
    let chunk = '';
    for (let i = 0; i < rowsPerBatch; i++, row++) {
      // Row r is metric r % 3 of payload ⌊r / 3⌋; payloads cycle through the services and
      // advance one millisecond per cycle, so (service, metric, time) never repeats.
      const payload = Math.floor(row / metricCount);
      const serviceId = serviceIds[payload % serviceIds.length] ?? '';
      const timeMs = options.baseTimeMs + Math.floor(payload / serviceIds.length);
      const metric = fleetMetricNames[row % metricCount] ?? '';
      chunk += `${new Date(timeMs).toISOString()}\t${serviceId}\t${metric}\t${(row % 1000) / 10}\n`;
      if ((i + 1) % rowsPerChunk === 0) {
        chunks.push(chunk);
        chunk = '';
      }
    }
    if (chunk !== '') chunks.push(chunk);

    const startedAt = performance.now();
    const writable =
      await db.sql`copy samples (time, service_id, metric, value) from stdin`.writable();
    await withTimeout(pipeline(Readable.from(chunks), writable), timeoutMs, 'COPY batch');
    copyMs += performance.now() - startedAt;
  }
  const rows = batches * rowsPerBatch;
  return {
    rows,
    batches,
    rowsPerBatch,
    copySeconds: copyMs / 1000,
    rowsPerSecond: copyMs > 0 ? rows / (copyMs / 1000) : 0,
  };
}

/**
 * postgres.js 3.4.9 never settles a COPY's stream when the server rejects it after the last
 * chunk (porsager/postgres#1173): bound the wait so a failure cannot hang the benchmark.
 */
async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not finish within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
