/**
 * `npm run bench:compare`: the built service against VictoriaMetrics on the same machine, in
 * one run, with one load generator (wrk) and the same hosts, metrics, tags, values and times
 * for every target (issue 13; docs/benchmarks/compare.md).
 *
 * Targets, one at a time, each alone on the machine while it is measured:
 * - VictoriaMetrics (Debian's `victoria-metrics`), InfluxDB line protocol on `/write`;
 * - embedded: `node packages/server/dist/main.js all` with a fresh data dir, JSON on the ingest;
 * - Kafka mode: `monitor gateway` and `monitor writer` from dist over testkit's Kafka,
 *   PostgreSQL and Redis; then its backlog phase (the writer stopped while the gateway fills
 *   Kafka, then timed draining it) and raw binary COPY into the same `samples` table, on one
 *   connection and on as many as the writer writes with.
 *
 * VictoriaMetrics and the Kafka mode's gateway also get the same Prometheus remote-write bodies
 * (`remote-write-load.ts`), for the CPU per sample of each.
 *
 * Workloads: "single" (one host per request) and "batched" (100 hosts per request), each a
 * warm-up and a measured load. After each load the run waits until the target has stored what
 * it acknowledged, and checks acknowledged ≤ stored ≤ sent (requests in flight when wrk stops
 * may be stored without an answer). Everything started is stopped by pid on the way out, on
 * errors and on Ctrl-C.
 *
 * Steps: `seed` prepares what every target gets (wrk's request data, the remote-write bodies);
 * `measure` starts each target in turn (no start step: each has the machine to itself).
 */
import { accessSync, constants, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { integerOption } from './harness/command-line.js';
import { logProgress } from './harness/progress.js';
import type { ReportBase } from './harness/report.js';
import { createCompareFleet } from './compare-fleet.js';
import type { CompareBenchReport, TargetReport, WorkloadName } from './compare-report.js';
import { compareRatios, formatCompareReport } from './compare-report.js';
import type { CompareTarget, TargetName } from './compare-target.js';
import { targetNames } from './compare-target.js';
import type { BenchContext } from './harness/run-bench.js';
import { measureEachAlone, runBench } from './harness/run-bench.js';
import {
  createRemoteWriteBodies,
  defaultRemoteWriteRequests,
  seriesPerHost,
} from './remote-write-load.js';
import { startEmbeddedMonitor } from './embedded-target.js';
import type { KafkaTarget } from './kafka-target.js';
import { shardShares, startKafkaMonitor } from './kafka-target.js';
import {
  startVictoriaMetrics,
  victoriaMetricsBinary,
  victoriaMetricsInstall,
  victoriaMetricsVersion,
} from './victoria-metrics-target.js';

import type { Options, RunContext, Workload } from './compare-loads.js';
import {
  checkTotal,
  measureBacklog,
  measureCopy,
  measureRemoteWriteOf,
  measureTarget,
  remoteWriteOptions,
  stageBases,
  valueVariants,
  writerConnections,
} from './compare-loads.js';

const usage = `Usage: npm run bench:compare -- [options]
  --targets LIST           comma-separated, in this order: ${targetNames.join(',')} (default all)
  --hosts N                hosts in the fleet (default 10000)
  --duration-seconds N     each measured load (default 20)
  --warm-up-seconds N      the same workload before each measured load (default 3)
  --threads N              wrk threads (default 2)
  --single-connections N   connections, 1 host per request (default 64)
  --batch-hosts N          hosts per batched request (default 100)
  --batch-connections N    connections, batched (default 16)
  --backlog-seconds N      Kafka mode: how long the gateway fills Kafka with no writer (default 20)
  --copy-rows N            Kafka mode: rows of each raw COPY ceiling (default 500000)
  --kafka-storage NAME     Kafka mode's database: timescale (default, as deployed) or postgres
  --kafka-shards N         Kafka mode's sample shards (default 1): s1… on TimescaleDB servers of
                           their own, each measured as postgres-s<n>
  --rw-warm-up N           remote-write bodies sent to each first, not measured (default 100)
  --rw-requests N          remote-write bodies sent to VictoriaMetrics and the gateway (default ${defaultRemoteWriteRequests})
  --rw-series-per-request N  samples per remote-write body (default 2000)
  --rw-concurrency N       remote-write requests in flight (default 8)
  --victoria-metrics PATH  the server (default ${victoriaMetricsBinary}: ${victoriaMetricsInstall})
  --wrk PATH               the load generator (default wrk on PATH: apt-get install wrk)
  --out FILE               JSON results (default bench-results/compare-<iso date>.json)
Needs \`npm run build\` first: the embedded and Kafka targets run packages/server/dist/main.js.
Kafka, TimescaleDB (PostgreSQL) and Redis come from KAFKA_BROKERS, TIMESCALE_URL (DATABASE_URL)
and REDIS_URL when set, else testkit starts them. Spec-shaped payloads (containers, processes): npm run bench:ingest.`;

type Context = BenchContext<Options, Omit<CompareBenchReport, keyof ReportBase>>;

/** The load generator, the fleet's requests for it, and the remote-write bodies. */
function prepareWorkload(_: void, { options, report }: Context): Promise<Workload> {
  const wrk = findExecutable(options.wrk);
  if (wrk === undefined) throw new Error(`no ${options.wrk} here: apt-get install wrk`);
  const fleet = createCompareFleet({ hostCount: options.hosts, valueVariants });
  const dataFiles = { influx: '', json: '' };
  for (const format of ['influx', 'json'] as const) {
    dataFiles[format] = join(report.logDir, `fleet-${format}.txt`);
    writeFileSync(dataFiles[format], fleet.fragmentLines(format));
  }
  // An hour back: clear of the future-skew limit, well inside both stores' retention.
  const runBaseMs = Math.floor(Date.now() / 1000) * 1000 - 60 * 60_000;
  return Promise.resolve({
    fleet,
    dataFiles,
    wrk,
    stageBaseMs: stageBases(runBaseMs),
    // Scrape times a second apart from two hours back: clear of the wrk stages' times.
    remoteWriteBodies: createRemoteWriteBodies(
      remoteWriteOptions(options),
      runBaseMs - 60 * 60_000,
    ),
  });
}

/** Each target alone on the machine, in the order given; then the COPY ceiling of Kafka mode's database. */
async function measure(_: void, context: Context, workload: Workload): Promise<void> {
  const { options, report, cleanup, processes } = context;
  const run: RunContext = { ...workload, options, logDir: report.logDir, cleanup };
  const names = options.targets.filter((name) => {
    if (name !== 'victoria-metrics' || findExecutable(options.victoriaMetrics) !== undefined)
      return true;
    const skipped = `${options.victoriaMetrics} is not installed (${victoriaMetricsInstall})`;
    report.targets[name] = { format: 'influx', skipped, workloads: {} };
    report.notes.push(`victoria-metrics: ${skipped}; the other targets ran without it`);
    logProgress(`victoria-metrics skipped: ${skipped}`);
    return false;
  });
  let kafka: KafkaTarget | undefined;
  await measureEachAlone(
    names,
    (name) => startTarget(name, run),
    async (target, name) => {
      if (name === 'kafka') kafka = target as KafkaTarget;
      processes.push(...target.logged);
      const targetReport: TargetReport = { format: target.format, workloads: {} };
      report.targets[name] = targetReport;
      const tally = await measureTarget(target, targetReport, run, report.settings);
      // Counted before remote write, whose series are not the fleet's hosts.
      if (kafka !== undefined && kafka.sampleDbs.length > 1)
        report.shards = await shardShares(kafka);
      if (name !== 'embedded') {
        const figures = await measureRemoteWriteOf(target, run, tally);
        report.remoteWrite = { ...report.remoteWrite, [figures.target]: figures };
      }
      if (kafka) {
        report.settings.kafkaServices = kafka.stack.serviceOrigins;
        if (process.env['DATABASE_URL'] === undefined) {
          report.notes.push(
            "kafka: PostgreSQL is testkit's throwaway server (fsync, synchronous_commit and " +
              'full_page_writes off), embedded runs a durable one: set DATABASE_URL to compare like with like',
          );
        }
        const backlog = await measureBacklog(kafka, run, tally);
        processes.push(backlog.writer);
        report.backlog = backlog.figures;
      }
      targetReport.total = await checkTotal(target, tally);
      logProgress(
        `${name} over the run: ${targetReport.total.acknowledged} acknowledged, ` +
          `${targetReport.total.stored} stored, ${targetReport.total.sent} sent`,
      );
    },
  );
  // With the roles stopped (Kafka mode runs last), so that COPY has the machine to itself.
  if (kafka) {
    report.copies = [];
    for (const connections of [1, writerConnections])
      report.copies.push(await measureCopy(kafka, run, connections));
    report.copy = report.copies.reduce((best, each) =>
      each.rowsPerSecond > best.rowsPerSecond ? each : best,
    );
  }
}

function startTarget(name: TargetName, context: RunContext): Promise<CompareTarget> {
  const { logDir, cleanup } = context;
  switch (name) {
    case 'victoria-metrics':
      return startVictoriaMetrics({ binary: context.options.victoriaMetrics, logDir, cleanup });
    case 'embedded':
      return startEmbeddedMonitor({ logDir, cleanup });
    case 'kafka':
      return startKafkaMonitor({
        logDir,
        cleanup,
        storage: context.options.kafkaStorage,
        shards: context.options.kafkaShards,
      });
  }
}

function storageOption(value: string): 'timescale' | 'postgres' {
  if (value === 'timescale' || value === 'postgres') return value;
  throw new Error(`--kafka-storage: timescale or postgres, not ${value}`);
}

/** `command` if it is a path to an executable, else the first executable of that name on PATH. */
function findExecutable(command: string): string | undefined {
  const candidates = command.includes('/')
    ? [command]
    : (process.env['PATH'] ?? '').split(delimiter).map((dir) => join(dir, command));
  return candidates.find((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Notes for whatever went wrong in a load or a count. */
function noteProblems(report: CompareBenchReport): void {
  for (const [name, target] of Object.entries(report.targets)) {
    for (const [workload, figures] of Object.entries(target.workloads)) {
      const { failed } = figures.load;
      if (failed > 0) {
        report.notes.push(
          `${name} ${workload}: ${failed} requests failed (${JSON.stringify(figures.load.failedStatuses)}, ` +
            `${figures.load.socketErrors} socket errors); wrk's output is in the log dir`,
        );
      }
      if (!figures.stored.drained)
        report.notes.push(`${name} ${workload}: not everything acknowledged was stored in time`);
    }
    const total = target.total;
    if (total && (total.missing > 0 || total.duplicates > 0)) {
      report.notes.push(
        `${name}: ${total.missing} samples missing, ${total.duplicates} duplicated over the run`,
      );
    }
  }
}

function targetList(value: string): TargetName[] {
  const names = value.split(',').map((name) => name.trim());
  for (const name of names) {
    if (!(targetNames as readonly string[]).includes(name))
      throw new Error(`--targets: unknown target ${name}; known: ${targetNames.join(', ')}`);
  }
  // In the documented order whatever order was given: the Kafka stack's servers stop last.
  return targetNames.filter((name) => names.includes(name));
}

await runBench({
  name: 'compare',
  usage,
  defaults: {
    targets: targetNames.join(','),
    hosts: '10000',
    'duration-seconds': '20',
    'warm-up-seconds': '3',
    threads: '2',
    'single-connections': '64',
    'batch-hosts': '100',
    'batch-connections': '16',
    'backlog-seconds': '20',
    'copy-rows': '500000',
    'kafka-storage': 'timescale',
    'kafka-shards': '1',
    'rw-warm-up': '100',
    'rw-requests': String(defaultRemoteWriteRequests),
    'rw-series-per-request': '2000',
    'rw-concurrency': '8',
    'victoria-metrics': victoriaMetricsBinary,
    wrk: 'wrk',
  },
  parseOptions: (values): Options => {
    const options: Options = {
      targets: targetList(values.targets),
      hosts: integerOption('hosts', values.hosts),
      durationSeconds: integerOption('duration-seconds', values['duration-seconds']),
      warmUpSeconds: integerOption('warm-up-seconds', values['warm-up-seconds']),
      threads: integerOption('threads', values.threads),
      singleConnections: integerOption('single-connections', values['single-connections']),
      batchHosts: integerOption('batch-hosts', values['batch-hosts'], 1, 1000),
      batchConnections: integerOption('batch-connections', values['batch-connections']),
      backlogSeconds: integerOption('backlog-seconds', values['backlog-seconds']),
      copyRows: integerOption('copy-rows', values['copy-rows']),
      kafkaStorage: storageOption(values['kafka-storage']),
      kafkaShards: integerOption('kafka-shards', values['kafka-shards'], 1, 6),
      remoteWriteWarmUpRequests: integerOption('rw-warm-up', values['rw-warm-up'], 0),
      remoteWriteRequests: integerOption('rw-requests', values['rw-requests']),
      remoteWriteSeriesPerRequest: integerOption(
        'rw-series-per-request',
        values['rw-series-per-request'],
        seriesPerHost,
      ),
      remoteWriteConcurrency: integerOption('rw-concurrency', values['rw-concurrency']),
      victoriaMetrics: values['victoria-metrics'],
      wrk: values.wrk,
    };
    if (options.batchHosts > options.hosts)
      throw new Error('--batch-hosts must not exceed --hosts: a host appears once per request');
    // wrk gives every thread at least one connection.
    if (Math.min(options.singleConnections, options.batchConnections) < options.threads)
      throw new Error('--single-connections and --batch-connections must be ≥ --threads');
    return options;
  },
  createReport: (options) => ({
    settings: {
      hosts: options.hosts,
      valueVariants,
      durationSeconds: options.durationSeconds,
      warmUpSeconds: options.warmUpSeconds,
      threads: options.threads,
      workloads: {
        single: { payloadsPerRequest: 1, connections: options.singleConnections },
        batched: { payloadsPerRequest: options.batchHosts, connections: options.batchConnections },
      } satisfies Record<WorkloadName, unknown>,
      backlogSeconds: options.backlogSeconds,
      victoriaMetrics: {
        binary: options.victoriaMetrics,
        version: victoriaMetricsVersion(options.victoriaMetrics),
      },
      kafkaServices: {},
    },
    targets: {},
    ratios: {},
  }),
  seed: prepareWorkload,
  measure,
  finish: (report) => {
    report.ratios = compareRatios(report);
    noteProblems(report);
  },
  format: formatCompareReport,
});
