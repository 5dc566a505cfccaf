import { readdirSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from '@monitor/db';
import { createDatabase } from '@monitor/db';
import { countHistograms, countSamples, readBackendPid } from '@monitor/db/bench';
import { createTestDatabase, startRestartablePostgres } from '@monitor/testkit';
import { ingestPath } from '@monitor/schemas';
import type { BenchProcess } from './bench-process.js';
import type { Cleanup } from './harness/cleanup.js';
import type { CompareTarget } from './compare-target.js';
import { measuredProcess } from './compare-target.js';
import type { MonitorStack } from './monitor-stack.js';
import { startPipelineStack } from './monitor-stack.js';
import { findDescendantPid, parentPid } from './proc-stats.js';
import type { MeasuredProcess } from './resource-sampler.js';
import { waitForCount } from './wait-for-landed.js';

const pollIntervalMs = 100;
/** With sample shards: two partitions a shard for three. */
const shardedPartitions = 6;

/** The Kafka mode target, with what its backlog phase needs to stop and restart the writer. */
export type KafkaTarget = CompareTarget & {
  readonly stack: MonitorStack;
  /** Every sample shard's database, s0 (the stack's) first. */
  readonly sampleDbs: readonly Database[];
  /** Samples stored over every shard. */
  countSamples(): Promise<number>;
  stopWriter(): Promise<void>;
  /** Starts a fresh writer (`name` names its log); `stop()` stops it instead of the first. */
  startWriter(name: string): Promise<BenchProcess>;
};

/**
 * The distributed service from the build: `monitor gateway` and `monitor writer` as separate
 * processes over Kafka, PostgreSQL and Redis (testkit's, or the environment's). Besides the two
 * roles it measures the servers testkit started here: PostgreSQL (its postmaster, found as the
 * parent of one of our backends, and the backends), the Kafka broker's JVM and redis-server.
 * With `shards` past 1, shards s1, s2, … are TimescaleDB servers of their own beside testkit's
 * (shard s0 and the control database), partition p on shard `p % shards`, each server measured
 * as `postgres-s<n>`: one shard's CPU per sample is its server's.
 */
export async function startKafkaMonitor(options: {
  logDir: string;
  cleanup: Cleanup;
  /** The database server testkit starts (default TimescaleDB). */
  storage?: 'timescale' | 'postgres';
  shards?: number;
}): Promise<KafkaTarget> {
  const shards = options.shards ?? 1;
  const { stack, headers } = await startPipelineStack({
    ...options,
    databasePrefix: 'bench_compare',
    build: 'dist',
    ...(shards === 1
      ? {}
      : {
          sampleShards: {
            partitions: shardedPartitions,
            async create(_serverUrl, cleanup) {
              const urls: string[] = [];
              for (let i = 1; i < shards; i++) {
                const server = await startRestartablePostgres({ timescale: true });
                cleanup.add(`shard server s${i}`, () => server.destroy());
                urls.push((await createTestDatabase(server.url, `bench_compare_s${i}`)).url);
              }
              return urls;
            },
          },
        }),
  });
  const sampleDbs = [
    stack.db,
    ...stack.sampleShardUrls.slice(1).map((url) => {
      const db = createDatabase({ url, maxConnections: 2, applicationName: 'monitor-bench' });
      options.cleanup.add('shard pool', () => db.close());
      return db;
    }),
  ];
  const countAll = async (): Promise<number> =>
    (await Promise.all(sampleDbs.map((db) => countSamples(db)))).reduce((a, b) => a + b, 0);
  const started: BenchProcess[] = [];
  const [gateway, firstWriter] = await stack.startRoles(['gateway', 'writer'], started);
  let writer = firstWriter;
  const measured: MeasuredProcess[] = [
    measuredProcess('gateway', gateway),
    { name: 'writer', pid: () => writer.pid },
  ];
  // A server the environment named may be another machine's: its pids would mean nothing here.
  const databaseOrigin = stack.serviceOrigins['timescale'] ?? stack.serviceOrigins['postgres'];
  if (databaseOrigin === 'native') {
    for (const [i, db] of sampleDbs.entries()) {
      const backend = await readBackendPid(db);
      const postmaster = backend === undefined ? undefined : parentPid(backend);
      const name = i === 0 ? 'postgres' : `postgres-s${i}`;
      measured.push({ name, pid: () => postmaster, tree: true });
    }
  }
  let broker: number | undefined;
  if (stack.serviceOrigins['kafka'] === 'native') {
    broker = findDescendantPid(process.pid, 'java');
    measured.push({ name: 'kafka', pid: () => broker });
  }
  if (stack.serviceOrigins['redis'] === 'native') {
    const redis = findDescendantPid(process.pid, 'redis-server');
    measured.push({ name: 'redis', pid: () => redis });
  }
  return {
    name: 'kafka',
    format: 'json',
    baseUrl: gateway.baseUrl,
    path: ingestPath,
    headers,
    measured,
    logged: started,
    stack,
    sampleDbs,
    countSamples: countAll,
    stopWriter: () => writer.stop(),
    async startWriter(name) {
      writer = await stack.startRole('writer', { name });
      return writer;
    },
    busBytes: () => topicLogBytes(broker, stack.env['SAMPLES_TOPIC']),
    waitForStored: async (args) => {
      const landed = await waitForCount(countAll, { ...args, pollIntervalMs });
      return { stored: landed.stored, drained: landed.drained };
    },
    waitForStoredHistograms: async (args) => {
      const landed = await waitForCount(
        async () =>
          (await Promise.all(sampleDbs.map((db) => countHistograms(db)))).reduce(
            (a, b) => a + b,
            0,
          ),
        { ...args, pollIntervalMs },
      );
      return { stored: landed.stored, drained: landed.drained };
    },
    // The stack's servers stop with the run's cleanup: the Kafka target runs last.
    stop: () => Promise.all([gateway.stop(), writer.stop()]).then(() => undefined),
  };
}

/**
 * The bytes of `topic`'s log segments on a native broker's disk (testkit runs it in its dir,
 * data under `data/`): what the topic costs before replication. Only `.log` files: the offset
 * and time indexes are sparse files preallocated to their maximum until a segment rolls.
 */
function topicLogBytes(
  brokerPid: number | undefined,
  topic: string | undefined,
): number | undefined {
  if (brokerPid === undefined || topic === undefined) return undefined;
  let dataDir: string;
  try {
    dataDir = join(readlinkSync(`/proc/${brokerPid}/cwd`), 'data');
  } catch {
    return undefined;
  }
  let bytes = 0;
  for (const partition of readdirSync(dataDir)) {
    if (!partition.startsWith(`${topic}-`)) continue;
    for (const file of readdirSync(join(dataDir, partition))) {
      if (file.endsWith('.log')) bytes += statSync(join(dataDir, partition, file)).size;
    }
  }
  return bytes;
}

/** The samples each shard holds, with the name its server is measured under. */
export async function shardShares(
  kafka: KafkaTarget,
): Promise<{ name: string; process: string; samples: number }[]> {
  return Promise.all(
    kafka.sampleDbs.map(async (db, i) => ({
      name: `s${i}`,
      process: i === 0 ? 'postgres' : `postgres-s${i}`,
      samples: await countSamples(db),
    })),
  );
}
