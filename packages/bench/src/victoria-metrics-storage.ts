import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StorageFleet } from './storage-fleet.js';

/**
 * Loading the storage benchmark's fleet into VictoriaMetrics and measuring its files: its
 * JSON-lines import (`/api/v1/import`, a whole series per line), then a forced merge, then
 * the bytes of its storage dir.
 */

const requestTimeoutMs = 120_000;
/** Series per import request: ~10 MB bodies, big enough that HTTP costs nothing. */
const seriesPerRequest = 200;
const mergePollMs = 1_000;
/** Merges count as finished once nothing merges and the part count held still this long. */
const mergeQuietMs = 5_000;

/** The series' labels in VictoriaMetrics: the name, the host and its tags, as our services keep them. */
function seriesLabels(fleet: StorageFleet, series: number): Record<string, string> {
  const host = fleet.hosts[Math.floor(series / fleet.metrics.length)];
  const metric = fleet.metrics[series % fleet.metrics.length];
  if (host === undefined || metric === undefined) throw new RangeError(`no series ${series}`);
  return { __name__: metric.name, host: host.name, ...host.tags };
}

/** One import line: the series' labels, every value and every timestamp. */
function importLine(fleet: StorageFleet, series: number, timestamps: string): string {
  const { pointsPerSeries } = fleet;
  const values = fleet.values.subarray(series * pointsPerSeries, (series + 1) * pointsPerSeries);
  return `{"metric":${JSON.stringify(seriesLabels(fleet, series))},"values":[${values.join(',')}],"timestamps":[${timestamps}]}\n`;
}

/** Imports every series of the fleet; resolves once every request was answered 204. */
export async function importFleet(baseUrl: string, fleet: StorageFleet): Promise<void> {
  // Each host's timestamps, shared by its metrics (the same times our side stores).
  const timestampsOf = (host: number): string =>
    Array.from({ length: fleet.pointsPerSeries }, (_, p) => fleet.timeOf(p, host)).join(',');
  for (let first = 0; first < fleet.seriesCount; first += seriesPerRequest) {
    let body = '';
    const end = Math.min(fleet.seriesCount, first + seriesPerRequest);
    let host = -1;
    let timestamps = '';
    for (let series = first; series < end; series++) {
      const seriesHost = Math.floor(series / fleet.metrics.length);
      if (seriesHost !== host) {
        host = seriesHost;
        timestamps = timestampsOf(host);
      }
      body += importLine(fleet, series, timestamps);
    }
    const response = await fetch(`${baseUrl}/api/v1/import`, {
      method: 'POST',
      body,
      signal: AbortSignal.timeout(requestTimeoutMs),
    });
    const text = await response.text();
    if (response.status !== 204)
      throw new Error(`VictoriaMetrics import: ${response.status} ${text.slice(0, 300)}`);
  }
}

/** Rows VictoriaMetrics says it holds, once what it buffers is flushed to parts. */
export async function storedRows(baseUrl: string): Promise<number> {
  await get(`${baseUrl}/internal/force_flush`);
  const metrics = parseMetrics(await get(`${baseUrl}/metrics`));
  return sumOf(metrics, 'vm_rows', (labels) => labels.startsWith('{type="storage/'));
}

/**
 * Flushes, starts a forced merge of every partition and waits until no merge runs, nothing is
 * pending and the number of parts held still for a few seconds. Returns the seconds it took.
 */
export async function forceMerge(baseUrl: string, timeoutMs: number): Promise<number> {
  const startedAt = Date.now();
  await get(`${baseUrl}/internal/force_flush`);
  await get(`${baseUrl}/internal/force_merge`);
  let lastParts = -1;
  let quietSince = Date.now();
  for (;;) {
    const metrics = parseMetrics(await get(`${baseUrl}/metrics`));
    const busy =
      sumOf(metrics, 'vm_active_merges', () => true) +
      sumOf(metrics, 'vm_pending_rows', () => true);
    const parts = sumOf(metrics, 'vm_parts', () => true);
    if (busy > 0 || parts !== lastParts) quietSince = Date.now();
    lastParts = parts;
    if (Date.now() - quietSince >= mergeQuietMs) return (Date.now() - startedAt) / 1000;
    if (Date.now() - startedAt > timeoutMs)
      throw new Error(`VictoriaMetrics still merging after ${timeoutMs} ms`);
    await sleep(mergePollMs);
  }
}

export type VictoriaMetricsSizes = {
  /** Every file under the storage dir (apparent sizes). */
  totalBytes: number;
  /** `data/`: the samples (timestamps and values) and their per-part indexes. */
  dataBytes: number;
  /** `indexdb/`: the series dictionary (labels → series ids, per-day indexes). */
  indexdbBytes: number;
  /** Everything else (metadata, locks, caches). */
  otherBytes: number;
  /** Parts per kind, after the merge (`vm_parts`). */
  parts: Record<string, number>;
};

/** The storage dir's bytes, split by what they hold. */
export async function measureVictoriaMetrics(
  baseUrl: string,
  storageDir: string,
): Promise<VictoriaMetricsSizes> {
  const totalBytes = directoryBytes(storageDir);
  const dataBytes = directoryBytes(join(storageDir, 'data'));
  const indexdbBytes = directoryBytes(join(storageDir, 'indexdb'));
  const metrics = parseMetrics(await get(`${baseUrl}/metrics`));
  const parts: Record<string, number> = {};
  for (const [key, value] of metrics) {
    const type = /^vm_parts\{type="([^"]+)"\}$/.exec(key)?.[1];
    if (type !== undefined) parts[type] = value;
  }
  return {
    totalBytes,
    dataBytes,
    indexdbBytes,
    otherBytes: totalBytes - dataBytes - indexdbBytes,
    parts,
  };
}

/** Sum of the apparent sizes of the regular files under `dir` (0 when it does not exist). */
function directoryBytes(dir: string): number {
  let total = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += directoryBytes(path);
    else if (entry.isFile()) total += lstatSync(path).size;
  }
  return total;
}

/** Prometheus text as `name{labels}` → value (comments skipped). */
function parseMetrics(text: string): Map<string, number> {
  const metrics = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    metrics.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return metrics;
}

function sumOf(
  metrics: Map<string, number>,
  name: string,
  labels: (labels: string) => boolean,
): number {
  let total = 0;
  for (const [key, value] of metrics) {
    if (key === name || (key.startsWith(`${name}{`) && labels(key.slice(name.length))))
      total += value;
  }
  return total;
}

async function get(url: string): Promise<string> {
  const response = await fetch(url, { signal: AbortSignal.timeout(requestTimeoutMs) });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${text.slice(0, 300)}`);
  return text;
}
