import { performance } from 'node:perf_hooks';
import type { Database } from '@monitor/db';
import {
  binarySampleChunks,
  createSeriesScales,
  readSampleTimeColumn,
  scaleValues,
} from '@monitor/db';
import { copyBinarySamples, ensureSeries } from '@monitor/db/bench';
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
  /**
   * COPY statements in flight at once, each on its own connection of `db` (open it with at least
   * this many), the batches shared out between them; the rate is then over wall-clock time.
   * Default 1.
   */
  connections?: number;
};

export type CopyCeilingResult = {
  rows: number;
  batches: number;
  rowsPerBatch: number;
  /** Time spent in COPY statements only (building the rows is not counted). */
  copySeconds: number;
  rowsPerSecond: number;
  connections: number;
};

/** Rows per write to the COPY stream, as the writer chunks them. */
const rowsPerChunk = 2000;

/**
 * The writer's ceiling: raw `COPY samples (time, series_id, value) FROM STDIN` of rows shaped
 * like the pipeline's, in the binary format the writer sends, into the same table with its
 * dedup index, one batch per statement, on `connections` connections of `db` at once. The rows
 * are built before the clock starts. The series of the services' metrics are created (or found) first,
 * untimed, as the writer's cache would know them.
 */
export async function measureCopyCeiling(
  db: Database,
  options: CopyCeilingOptions,
): Promise<CopyCeilingResult> {
  const { serviceIds, batches, rowsPerBatch } = options;
  if (serviceIds.length === 0) throw new Error('the COPY ceiling needs at least one service id');
  const timeoutMs = options.copyTimeoutMs ?? 60_000;
  const metricCount = fleetMetricNames.length;
  const seriesIds = await seriesOf(db, serviceIds);
  const batchChunks: Buffer[][] = [];
  const scales = createSeriesScales();
  const timeColumn = await readSampleTimeColumn(db);
  let row = 0;
  for (let batch = 0; batch < batches; batch++) {
    const timesMs: number[] = [];
    const ids: number[] = [];
    const values: number[] = [];
    for (let i = 0; i < rowsPerBatch; i++, row++) {
      // Row r is metric r % 3 of payload ⌊r / 3⌋; payloads cycle through the services and
      // advance one millisecond per cycle, so (service, metric, time) never repeats.
      const payload = Math.floor(row / metricCount);
      const service = payload % serviceIds.length;
      timesMs.push(options.baseTimeMs + Math.floor(payload / serviceIds.length));
      ids.push(seriesIds[service * metricCount + (row % metricCount)] ?? 0);
      values.push((row % 1000) / 10);
    }
    // Encoded as the writer encodes them (scaled integers where exact), before the clock.
    const samples = { timesMs, seriesIds: ids, values, mantissas: [], scales: [] };
    scaleValues(samples, scales);
    batchChunks.push([...binarySampleChunks(samples, rowsPerChunk, timeColumn)]);
  }
  const connections = Math.max(1, Math.min(options.connections ?? 1, batches));
  let next = 0;
  const copier = async (): Promise<void> => {
    for (let chunks = batchChunks[next++]; chunks !== undefined; chunks = batchChunks[next++]) {
      await withTimeout(copyBinarySamples(db, chunks), timeoutMs, 'COPY batch');
    }
  };
  const startedAt = performance.now();
  await Promise.all(Array.from({ length: connections }, copier));
  const copyMs = performance.now() - startedAt;
  const rows = batches * rowsPerBatch;
  return {
    rows,
    batches,
    rowsPerBatch,
    copySeconds: copyMs / 1000,
    rowsPerSecond: copyMs > 0 ? rows / (copyMs / 1000) : 0,
    connections,
  };
}

/** The series id of each (service, metric), service by service in `fleetMetricNames` order. */
async function seriesOf(db: Database, serviceIds: readonly string[]): Promise<number[]> {
  const metrics = [...fleetMetricNames];
  const byName = await ensureSeries(db, serviceIds, metrics);
  return serviceIds.flatMap((serviceId) =>
    metrics.map((metric) => {
      const id = byName.get(`${serviceId}\u0000${metric}`);
      if (id === undefined) throw new Error(`no series for ${metric} of ${serviceId}`);
      return id;
    }),
  );
}

/** Bounds a COPY's wait, so a stalled server fails the measurement instead of hanging it. */
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
