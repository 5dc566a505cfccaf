import { performance } from 'node:perf_hooks';
import type { Database, HostSample } from '@monitor/db';
import { createSampleStore } from '@monitor/db';
import { fleetMetricNames } from './fleet.js';

export type StoreCeilingOptions = {
  /** The pipeline's services: the ceiling updates them as the writer does. */
  services: readonly { orgId: string; host: string }[];
  /** One spec-shaped payload's containers and processes, as JSON text (as the writer passes them). */
  containersJson: string;
  processesJson: string;
  /** Samples are stamped from here on; keep it clear of the times the other phases used. */
  baseTimeMs: number;
  batches: number;
  hostSamplesPerBatch: number;
};

export type StoreCeilingResult = {
  hostSamples: number;
  /** Rows of `samples` written (one per metric of each host sample). */
  rows: number;
  batches: number;
  hostSamplesPerBatch: number;
  /** Time spent in `writeBatch` only (building the samples is not counted). */
  writeSeconds: number;
  rowsPerSecond: number;
};

/**
 * What the writer's storage work alone sustains: the writer's own `writeBatch` (services
 * upsert, samples, container and process snapshots, one transaction per batch) on one
 * connection, fed decoded host samples with no Kafka and no decoding. Raw COPY into `samples`
 * stores three narrow rows per host sample; this stores everything a host sample carries, so
 * it bounds what any writer can land on this database.
 */
export async function measureStoreCeiling(
  db: Database,
  options: StoreCeilingOptions,
): Promise<StoreCeilingResult> {
  const { services, batches, hostSamplesPerBatch } = options;
  if (services.length === 0) throw new Error('the storage ceiling needs at least one service');
  const store = createSampleStore(db);
  const containers = { json: options.containersJson };
  const processes = { json: options.processesJson };
  let next = 0;
  let writeMs = 0;
  for (let batch = 0; batch < batches; batch++) {
    const samples: HostSample[] = [];
    for (let i = 0; i < hostSamplesPerBatch; i++, next++) {
      const service = services[next % services.length]!;
      samples.push({
        orgId: service.orgId,
        host: service.host,
        // Services in turn, one millisecond further per round: (service, metric, time) never repeats.
        timeMs: options.baseTimeMs + Math.floor(next / services.length),
        metrics: Object.fromEntries(
          fleetMetricNames.map((metric, m) => [metric, ((next + m) % 1000) / 10]),
        ),
        tags: { environment: 'bench' },
        containers,
        processes,
      });
    }
    const startedAt = performance.now();
    await store.writeBatch({ samples });
    writeMs += performance.now() - startedAt;
  }
  const hostSamples = batches * hostSamplesPerBatch;
  const rows = hostSamples * fleetMetricNames.length;
  return {
    hostSamples,
    rows,
    batches,
    hostSamplesPerBatch,
    writeSeconds: writeMs / 1000,
    rowsPerSecond: writeMs > 0 ? rows / (writeMs / 1000) : 0,
  };
}
