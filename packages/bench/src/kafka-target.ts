import { readdirSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readBackendPid } from '@monitor/db/bench';
import { ingestPath } from '@monitor/schemas';
import type { BenchProcess } from './bench-process.js';
import type { Cleanup } from './harness/cleanup.js';
import type { CompareTarget } from './compare-target.js';
import { measuredProcess } from './compare-target.js';
import type { MonitorStack } from './monitor-stack.js';
import { startPipelineStack } from './monitor-stack.js';
import { findDescendantPid, parentPid } from './proc-stats.js';
import type { MeasuredProcess } from './resource-sampler.js';
import { waitForLanded, waitForLandedHistograms } from './wait-for-landed.js';

const pollIntervalMs = 100;

/** The Kafka mode target, with what its backlog phase needs to stop and restart the writer. */
export type KafkaTarget = CompareTarget & {
  readonly stack: MonitorStack;
  stopWriter(): Promise<void>;
  /** Starts a fresh writer (`name` names its log); `stop()` stops it instead of the first. */
  startWriter(name: string): Promise<BenchProcess>;
};

/**
 * The distributed service from the build: `monitor gateway` and `monitor writer` as separate
 * processes over Kafka, PostgreSQL and Redis (testkit's, or the environment's). Besides the two
 * roles it measures the servers testkit started here: PostgreSQL (its postmaster, found as the
 * parent of one of our backends, and the backends), the Kafka broker's JVM and redis-server.
 */
export async function startKafkaMonitor(options: {
  logDir: string;
  cleanup: Cleanup;
  /** The database server testkit starts (default TimescaleDB). */
  storage?: 'timescale' | 'postgres';
}): Promise<KafkaTarget> {
  const { stack, headers } = await startPipelineStack({
    ...options,
    databasePrefix: 'bench_compare',
    build: 'dist',
  });
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
    const backend = await readBackendPid(stack.db);
    const postmaster = backend === undefined ? undefined : parentPid(backend);
    measured.push({ name: 'postgres', pid: () => postmaster, tree: true });
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
    stopWriter: () => writer.stop(),
    async startWriter(name) {
      writer = await stack.startRole('writer', { name });
      return writer;
    },
    busBytes: () => topicLogBytes(broker, stack.env['SAMPLES_TOPIC']),
    waitForStored: async (args) => {
      const landed = await waitForLanded(stack.db, { ...args, pollIntervalMs });
      return { stored: landed.stored, drained: landed.drained };
    },
    waitForStoredHistograms: async (args) => {
      const landed = await waitForLandedHistograms(stack.db, { ...args, pollIntervalMs });
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
