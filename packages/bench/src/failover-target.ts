import type { PatroniCluster } from '@monitor/testkit';
import { startPatroniCluster } from '@monitor/testkit';
import type { Cleanup } from './harness/cleanup.js';
import { logProgress } from './harness/progress.js';
import type { ReportBase } from './harness/report.js';
import type { FailoverBenchReport } from './failover-report.js';
import type { BenchContext } from './harness/run-bench.js';
import type { MonitorStack } from './monitor-stack.js';
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
  /** The database scenario's cluster, whose leader it kills. */
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
  const cluster = options.scenario === 'database' ? await startCluster(cleanup) : undefined;
  const database =
    cluster === undefined
      ? undefined
      : {
          serverUrl: (await cluster.leader()).url,
          clientUrl: (url: string) =>
            cluster.url.replace('/postgres?', `${new URL(url).pathname}?`),
        };
  const { stack, headers } = await startPipelineStack({
    cleanup,
    logDir: report.logDir,
    databasePrefix: cluster === undefined ? 'bench_failover' : 'bench_db_failover',
    ...(database === undefined ? {} : { database }),
  });
  report.settings.origins =
    cluster === undefined
      ? stack.serviceOrigins
      : { ...stack.serviceOrigins, postgres: 'Patroni (testkit)' };
  report.settings.kafkaSessionTimeoutMs = stack.env['KAFKA_SESSION_TIMEOUT_MS'] ?? 'default';
  report.settings.kafkaHeartbeatIntervalMs = stack.env['KAFKA_HEARTBEAT_INTERVAL_MS'] ?? 'default';
  const partitions = Number(stack.env['SAMPLES_TOPIC_PARTITIONS'] ?? 6);
  report.settings.partitions = partitions;
  return { stack, headers, partitions, cluster };
}

async function startCluster(cleanup: Cleanup): Promise<PatroniCluster> {
  logProgress('starting a Patroni cluster (etcd, two TimescaleDB nodes)');
  const cluster = await startPatroniCluster({ timescale: true });
  cleanup.add('Patroni cluster', () => cluster.stop());
  return cluster;
}
