import { performance } from 'node:perf_hooks';
import type { Database, HostSample } from '@monitor/db';
import { createSampleStore } from '@monitor/db';
import { fleetMetricNames } from './fleet.js';

type StoreCeilingOptions = {
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
  connections: number;
  /** Wall time of the writes only (building the samples is not counted). */
  writeSeconds: number;
  rowsPerSecond: number;
};

/**
 * What the writer's storage work alone sustains: the writer's own `writeBatch` (services
 * upsert, samples, container and process snapshots, one transaction per batch) fed decoded host
 * samples with no Kafka and no decoding, on `connections` connections at once (`db` needs that
 * many), each writing hosts of its own as the writer's consumers do (they own different
 * partitions). Raw COPY into `samples` stores three narrow rows per host sample; this stores
 * everything a host sample carries, so it bounds what a writer with as many consumers can land.
 */
export async function measureStoreCeiling(
  db: Database,
  options: StoreCeilingOptions & { connections: number },
): Promise<StoreCeilingResult> {
  const { services, batches, hostSamplesPerBatch, connections } = options;
  if (services.length < connections)
    throw new Error('the storage ceiling needs a service per connection');
  const store = createSampleStore(db);
  const containers = { json: options.containersJson };
  const processes = { json: options.processesJson };
  // Built before the clock starts; connection c writes services c, c + connections, ….
  const work = Array.from({ length: connections }, (_, c) => {
    const own = services.filter((_service, index) => index % connections === c);
    let next = 0;
    return Array.from({ length: Math.ceil(batches / connections) }, () =>
      Array.from({ length: hostSamplesPerBatch }, (): HostSample => {
        const service = own[next % own.length]!;
        const sample = {
          orgId: service.orgId,
          host: service.host,
          // Its services in turn, one millisecond further per round: no key repeats.
          timeMs: options.baseTimeMs + Math.floor(next / own.length),
          metrics: Object.fromEntries(
            fleetMetricNames.map((metric, m) => [metric, ((next + m) % 1000) / 10]),
          ),
          tags: { environment: 'bench' },
          containers,
          processes,
        };
        next++;
        return sample;
      }),
    );
  });
  const startedAt = performance.now();
  await Promise.all(
    work.map(async (ownBatches) => {
      for (const samples of ownBatches) await store.writeBatch({ samples });
    }),
  );
  const writeMs = performance.now() - startedAt;
  const writtenBatches = work.reduce((total, ownBatches) => total + ownBatches.length, 0);
  const hostSamples = writtenBatches * hostSamplesPerBatch;
  const rows = hostSamples * fleetMetricNames.length;
  return {
    hostSamples,
    rows,
    batches: writtenBatches,
    hostSamplesPerBatch,
    connections,
    writeSeconds: writeMs / 1000,
    rowsPerSecond: writeMs > 0 ? rows / (writeMs / 1000) : 0,
  };
}
