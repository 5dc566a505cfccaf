import type { PatroniCluster } from '@monitor/testkit';
import { createTestDatabase, startPatroniCluster } from '@monitor/testkit';
import type { Cleanup } from './harness/cleanup.js';
import { logProgress } from './harness/progress.js';
import type { ReportBase } from './harness/report.js';
import type { FailoverBenchReport } from './failover-report.js';
import type { BenchContext } from './harness/run-bench.js';
import type { MonitorStack, SampleShardDatabases } from './monitor-stack.js';
import { startPipelineStack } from './monitor-stack.js';

/** The command line's options: what the report's settings record, less what the run finds. */
export type FailoverOptions = Omit<
  FailoverBenchReport['settings'],
  'partitions' | 'kafkaSessionTimeoutMs' | 'kafkaHeartbeatIntervalMs' | 'origins'
>;

export type FailoverContext = BenchContext<
  FailoverOptions,
  Omit<FailoverBenchReport, keyof ReportBase>
>;

/** What either scenario fails over: the pipeline's stack, on a Patroni cluster for `database`. */
export type FailoverTarget = {
  stack: MonitorStack;
  headers: Record<string, string>;
  /** The samples topic's partitions: one probe host each. */
  partitions: number;
  /** The database scenario's cluster (the shard scenario's s1), whose leader it kills. */
  cluster: PatroniCluster | undefined;
};

/**
 * Kafka and Redis from testkit or the environment; PostgreSQL from them too, or for the database
 * scenario a Patroni cluster of its own (etcd, two TimescaleDB nodes) whose both hosts the
 * monitor processes get (`target_session_attrs=read-write`). The roles start in `measure`.
 */
export async function startFailoverTarget({
  options,
  report,
  cleanup,
}: FailoverContext): Promise<FailoverTarget> {
  const cluster = options.scenario === 'roles' ? undefined : await startCluster(cleanup);
  const database =
    cluster === undefined || options.scenario === 'shard'
      ? undefined
      : {
          serverUrl: (await cluster.leader()).url,
          clientUrl: (url: string) =>
            cluster.url.replace('/postgres?', `${new URL(url).pathname}?`),
        };
  const { stack, headers } = await startPipelineStack({
    cleanup,
    logDir: report.logDir,
    databasePrefix: `bench_${options.scenario}_failover`,
    ...(database === undefined ? {} : { database }),
    ...(cluster === undefined || options.scenario !== 'shard'
      ? {}
      : { sampleShards: shardsBeside(cluster) }),
  });
  report.settings.origins =
    cluster === undefined
      ? stack.serviceOrigins
      : options.scenario === 'shard'
        ? { ...stack.serviceOrigins, s1: 'Patroni (testkit)' }
        : { ...stack.serviceOrigins, postgres: 'Patroni (testkit)' };
  report.settings.kafkaSessionTimeoutMs = stack.env['KAFKA_SESSION_TIMEOUT_MS'] ?? 'default';
  report.settings.kafkaHeartbeatIntervalMs = stack.env['KAFKA_HEARTBEAT_INTERVAL_MS'] ?? 'default';
  const partitions = Number(stack.env['SAMPLES_TOPIC_PARTITIONS'] ?? 6);
  report.settings.partitions = partitions;
  return { stack, headers, partitions, cluster };
}

/** The shard scenario's partitions: two per shard. */
const shardScenarioPartitions = 6;

/** s1 on the Patroni cluster (both hosts, read-write wanted), s2 on the stack's own server. */
function shardsBeside(cluster: PatroniCluster): SampleShardDatabases {
  return {
    partitions: shardScenarioPartitions,
    async create(serverUrl, cleanup) {
      // Not dropped: its leader is the node killed, and the cluster's data goes with the cluster.
      const s1 = await createTestDatabase((await cluster.leader()).url, 'bench_shard_s1');
      const s2 = await createTestDatabase(serverUrl, 'bench_shard_s2');
      cleanup.add(`database ${s2.name}`, () => s2.drop());
      return [cluster.url.replace('/postgres?', `/${s1.name}?`), s2.url];
    },
  };
}

async function startCluster(cleanup: Cleanup): Promise<PatroniCluster> {
  logProgress('starting a Patroni cluster (etcd, two TimescaleDB nodes)');
  const cluster = await startPatroniCluster({ timescale: true });
  cleanup.add('Patroni cluster', () => cluster.stop());
  return cluster;
}
