import { performance } from 'node:perf_hooks';
import type { Database, HostSample } from '@monitor/db';
import { createSampleStore } from '@monitor/db';
import type { StorageFleet } from './storage-fleet.js';

/**
 * Loads the fleet through the writer's storage path (`createSampleStore(...).writeBatch`: the
 * services upsert, series ids, binary COPY into `samples`), in time order as agents send it:
 * each batch holds `pointsPerBatch` consecutive points of a group of hosts. The hosts are
 * split into one group per connection, written side by side, as the writer's consumers do.
 */
export async function loadFleet(
  db: Database,
  fleet: StorageFleet,
  options: {
    orgId: string;
    connections: number;
    pointsPerBatch: number;
    progress: (samplesWritten: number) => void;
    /** Sample shards: the database of each host (its partition's shard); `db` when unset. */
    shardOf?: (host: string) => Database;
  },
): Promise<{ seconds: number; samplesWritten: number }> {
  const startedAt = performance.now();
  let samplesWritten = 0;
  const groupSize = Math.ceil(fleet.hosts.length / options.connections);
  const groups = Array.from({ length: options.connections }, (_, g) => ({
    first: g * groupSize,
    end: Math.min(fleet.hosts.length, (g + 1) * groupSize),
  })).filter((group) => group.first < group.end);
  await Promise.all(
    groups.map(async (group) => {
      // A store per group (and shard): each keeps its own series cache, like each writer.
      const stores = new Map<Database, ReturnType<typeof createSampleStore>>();
      const storeOf = (on: Database) => {
        const store = stores.get(on) ?? createSampleStore(on);
        stores.set(on, store);
        return store;
      };
      for (let point = 0; point < fleet.pointsPerSeries; point += options.pointsPerBatch) {
        const samples = hostSamples(fleet, {
          orgId: options.orgId,
          firstHost: group.first,
          endHost: group.end,
          firstPoint: point,
          endPoint: Math.min(fleet.pointsPerSeries, point + options.pointsPerBatch),
        });
        const byDb = new Map<Database, HostSample[]>();
        for (const sample of samples) {
          const on = options.shardOf?.(sample.host) ?? db;
          const part = byDb.get(on);
          if (part === undefined) byDb.set(on, [sample]);
          else part.push(sample);
        }
        for (const [on, part] of byDb) {
          const result = await storeOf(on).writeBatch({ samples: part });
          if (result.duplicatesSkipped > 0)
            throw new Error(
              `${result.duplicatesSkipped} samples stored twice: the fleet repeats keys`,
            );
          samplesWritten += result.samplesWritten;
        }
        options.progress(samplesWritten);
      }
    }),
  );
  return { seconds: (performance.now() - startedAt) / 1000, samplesWritten };
}

/** The host samples of hosts [firstHost, endHost) at points [firstPoint, endPoint), time first. */
export function hostSamples(
  fleet: StorageFleet,
  range: {
    orgId: string;
    firstHost: number;
    endHost: number;
    firstPoint: number;
    endPoint: number;
  },
): HostSample[] {
  const { metrics, pointsPerSeries, values } = fleet;
  const samples: HostSample[] = [];
  for (let point = range.firstPoint; point < range.endPoint; point++) {
    for (let host = range.firstHost; host < range.endHost; host++) {
      const timeMs = fleet.timeOf(point, host);
      const hostInfo = fleet.hosts[host];
      if (hostInfo === undefined) throw new RangeError(`no host ${host}`);
      const sampleMetrics: Record<string, number> = {};
      for (let m = 0; m < metrics.length; m++) {
        const series = host * metrics.length + m;
        sampleMetrics[(metrics[m] as { name: string }).name] =
          values[series * pointsPerSeries + point] ?? 0;
      }
      samples.push({
        orgId: range.orgId,
        host: hostInfo.name,
        timeMs,
        metrics: sampleMetrics,
        tags: hostInfo.tags,
        containers: [],
        processes: [],
      });
    }
  }
  return samples;
}
