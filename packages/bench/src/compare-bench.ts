/**
 * `npm run bench:compare`: the built service against VictoriaMetrics on the same machine, in
 * one run, with one load generator (wrk) and the same hosts, metrics, tags, values and times
 * for every target (issue 13; docs/benchmarks.md).
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
import { createDatabase } from '@monitor/db';
import { timeBacklogDrain } from './backlog-drain.js';
import type { Cleanup } from './harness/cleanup.js';
import { integerOption } from './harness/command-line.js';
import { logProgress } from './harness/progress.js';
import type { ReportBase } from './harness/report.js';
import type { BenchProcess } from './bench-process.js';
import type { CompareFleet, WireFormat } from './compare-fleet.js';
import { compareMetricNames, createCompareFleet } from './compare-fleet.js';
import type { BacklogFigures } from './backlog-drain.js';
import type {
  CompareBenchReport,
  StoredCheck,
  TargetReport,
  WorkloadName,
} from './compare-report.js';
import {
  chargeLoad,
  checkStored,
  compareRatios,
  formatCompareReport,
  workloadNames,
} from './compare-report.js';
import type { CompareTarget, TargetName } from './compare-target.js';
import { targetNames } from './compare-target.js';
import type { CopyCeilingResult } from './copy-ceiling.js';
import { measureCopyCeiling } from './copy-ceiling.js';
import type { BenchContext } from './harness/run-bench.js';
import { measureEachAlone, runBench } from './harness/run-bench.js';
import type {
  RemoteWriteBodies,
  RemoteWriteFigures,
  RemoteWriteOptions,
} from './remote-write-load.js';
import {
  createRemoteWriteBodies,
  defaultRemoteWriteRequests,
  measureRemoteWriteTo,
  seriesPerHost,
} from './remote-write-load.js';
import { startEmbeddedMonitor } from './embedded-target.js';
import type { KafkaTarget } from './kafka-target.js';
import { startKafkaMonitor } from './kafka-target.js';
import {
  startVictoriaMetrics,
  victoriaMetricsBinary,
  victoriaMetricsInstall,
  victoriaMetricsVersion,
} from './victoria-metrics-target.js';
import { countSamples, listAllServices } from '@monitor/db/bench';
import type { WrkFigures } from './wrk-result.js';
import { runWrkLoad } from './wrk-load.js';

/**
 * Each host's values change from one pass over the fleet to the next (this many sets), so
 * neither store gets series of one constant value, which would compress to nothing.
 */
const valueVariants = 4;
/** Every stage's samples start this much later than the previous stage's: no time is reused. */
const stageSpacingMs = 5 * 60_000;
const stages = [
  'smoke',
  'single-warm-up',
  'single',
  'batched-warm-up',
  'batched',
  'backlog',
] as const;
type Stage = (typeof stages)[number];
const storedTimeoutMs = 120_000;
/** After the count reached what was acknowledged, how long requests in flight get to land. */
const settleMs = 1_000;
const copyBatches = 50;
const copyRowsPerBatch = 10_000;
/**
 * Connections the Kafka mode's writer writes with at its defaults (WRITER_CONSUMERS 2 ×
 * WRITER_WRITE_CONNECTIONS 2): the COPY ceiling is also measured on as many.
 */
const writerConnections = 4;

type Options = {
  targets: TargetName[];
  hosts: number;
  durationSeconds: number;
  warmUpSeconds: number;
  threads: number;
  singleConnections: number;
  batchHosts: number;
  batchConnections: number;
  backlogSeconds: number;
  remoteWriteWarmUpRequests: number;
  remoteWriteRequests: number;
  remoteWriteSeriesPerRequest: number;
  remoteWriteConcurrency: number;
  victoriaMetrics: string;
  wrk: string;
};

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
  --rw-warm-up N           remote-write bodies sent to each first, not measured (default 100)
  --rw-requests N          remote-write bodies sent to VictoriaMetrics and the gateway (default ${defaultRemoteWriteRequests})
  --rw-series-per-request N  samples per remote-write body (default 2000)
  --rw-concurrency N       remote-write requests in flight (default 8)
  --victoria-metrics PATH  the server (default ${victoriaMetricsBinary}: ${victoriaMetricsInstall})
  --wrk PATH               the load generator (default wrk on PATH: apt-get install wrk)
  --out FILE               JSON results (default bench-results/compare-<iso date>.json)
Needs \`npm run build\` first: the embedded and Kafka targets run packages/server/dist/main.js.
Kafka, PostgreSQL and Redis come from KAFKA_BROKERS, DATABASE_URL and REDIS_URL when set, else
testkit starts them. Spec-shaped payloads (containers, processes): npm run bench:ingest.`;

/** What `seed` prepares for the loads: the same for every target. */
type Workload = {
  fleet: CompareFleet;
  dataFiles: Record<WireFormat, string>;
  wrk: string;
  /** Where each stage's samples start; the same for every target. */
  stageBaseMs: (stage: Stage) => number;
  /** The remote-write bodies, the same for every target that takes them. */
  remoteWriteBodies: RemoteWriteBodies;
};

/** What every load of the run shares. */
type RunContext = Workload & { options: Options; logDir: string; cleanup: Cleanup };

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
    stageBaseMs: (stage) => runBaseMs + stages.indexOf(stage) * stageSpacingMs,
    // Scrape times a second apart from two hours back: clear of the wrk stages' times.
    remoteWriteBodies: createRemoteWriteBodies(
      remoteWriteOptions(options),
      runBaseMs - 60 * 60_000,
    ),
  });
}

function remoteWriteOptions(options: Options): RemoteWriteOptions {
  return {
    warmUpRequests: options.remoteWriteWarmUpRequests,
    requests: options.remoteWriteRequests,
    seriesPerRequest: options.remoteWriteSeriesPerRequest,
    concurrency: options.remoteWriteConcurrency,
  };
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
      return startKafkaMonitor({ logDir, cleanup });
  }
}

/** Samples acknowledged and sent to a target so far, and what it held before the first. */
type Tally = { acknowledged: number; sent: number; storedAtStart: number };

/** Smoke request, then per workload a warm-up and a measured load, each checked in storage. */
async function measureTarget(
  target: CompareTarget,
  targetReport: TargetReport,
  context: RunContext,
  settings: CompareBenchReport['settings'],
): Promise<Tally> {
  const { options } = context;
  const tally: Tally = { acknowledged: 0, sent: 0, storedAtStart: await stored(target, 0) };

  await sendSmokeRequest(target, context);
  tally.acknowledged += compareMetricNames.length;
  tally.sent += compareMetricNames.length;

  for (const workload of workloadNames) {
    const shape = settings.workloads[workload];
    const load = (stage: Stage, durationSeconds: number) =>
      runLoad(target, context, { stage, durationSeconds, ...shape });

    const warmUp = await load(`${workload}-warm-up`, options.warmUpSeconds);
    addToTally(tally, warmUp.figures);
    const before = await stored(target, tally.storedAtStart + tally.acknowledged);

    logProgress(`${target.name} ${workload}: ${options.durationSeconds} s`);
    const busBytesBefore = target.busBytes?.();
    const { figures, usage } = await load(workload, options.durationSeconds);
    addToTally(tally, figures);
    const after = await target.waitForStored({
      expected: before + figures.samplesAcknowledged,
      timeoutMs: storedTimeoutMs,
      settleMs,
    });
    const check = checkStored({
      acknowledged: figures.samplesAcknowledged,
      sent: figures.samplesSent,
      storedBefore: before,
      storedAfter: after.stored,
      drained: after.drained,
    });
    const serverProcesses = target.measured.map((proc) => proc.name);
    // Read once the load's samples are stored: every one of them was on the topic by then.
    const busBytesAfter = target.busBytes?.();
    targetReport.workloads[workload] = {
      ...shape,
      load: figures,
      ...chargeLoad(usage, figures, serverProcesses),
      ...(busBytesBefore !== undefined && busBytesAfter !== undefined
        ? { busBytesPerSample: (busBytesAfter - busBytesBefore) / figures.samplesAcknowledged }
        : {}),
      stored: check,
    };
    logProgress(
      `${target.name} ${workload}: ${Math.round(figures.requestsPerSecond)} requests/s, ` +
        `${Math.round(figures.samplesPerSecond)} samples/s, p99 ${figures.latency.p99Ms} ms; ` +
        `acknowledged ${check.acknowledged}, stored ${check.stored}, sent ${check.sent}`,
    );
  }
  return tally;
}

/** One wrk load of the fleet against `target`, its samples stamped from `stage`'s base. */
function runLoad(
  target: CompareTarget,
  context: RunContext,
  load: { stage: Stage; durationSeconds: number; payloadsPerRequest: number; connections: number },
): ReturnType<typeof runWrkLoad> {
  const { options } = context;
  return runWrkLoad(
    {
      name: `wrk-${target.name}-${load.stage}`,
      baseUrl: target.baseUrl,
      connections: load.connections,
      durationSeconds: load.durationSeconds,
      script: {
        dataFile: context.dataFiles[target.format],
        format: target.format,
        hostCount: options.hosts,
        valueVariants,
        payloadsPerRequest: load.payloadsPerRequest,
        baseTimeMs: context.stageBaseMs(load.stage),
        threads: options.threads,
        path: target.path,
        headers: target.headers,
      },
    },
    {
      wrk: context.wrk,
      logDir: context.logDir,
      cleanup: context.cleanup,
      measured: target.measured,
    },
  );
}

/**
 * One request built here (not by wrk) before any load, so that a target refusing the format
 * fails the run with its own words instead of a count of 4xx.
 */
async function sendSmokeRequest(target: CompareTarget, context: RunContext): Promise<void> {
  const body = context.fleet.requestBody(target.format, {
    request: 0,
    payloadsPerRequest: 1,
    baseTimeMs: context.stageBaseMs('smoke'),
  });
  const response = await fetch(`${target.baseUrl}${target.path}`, {
    method: 'POST',
    headers: target.headers,
    body,
    signal: AbortSignal.timeout(30_000),
  });
  const answer = await response.text();
  if (!response.ok)
    throw new Error(`${target.name} refused the smoke request: ${response.status} ${answer}`);
}

/**
 * Kafka mode's writer on its own: stopped while the gateway fills Kafka with batched requests,
 * then a fresh writer timed while it drains them (the clock starts at its first stored row).
 */
async function measureBacklog(
  kafka: KafkaTarget,
  context: RunContext,
  tally: Tally,
): Promise<{ figures: BacklogFigures; writer: BenchProcess }> {
  const { options } = context;
  logProgress(`kafka backlog: writer stopped, gateway fills Kafka for ${options.backlogSeconds} s`);
  await kafka.stopWriter();
  const fill = await runLoad(kafka, context, {
    stage: 'backlog',
    durationSeconds: options.backlogSeconds,
    payloadsPerRequest: options.batchHosts,
    connections: options.batchConnections,
  });
  addToTally(tally, fill.figures);
  const storedBefore = await countSamples(kafka.stack.db);
  const writer = await kafka.startWriter('writer-backlog');
  const figures = await timeBacklogDrain(kafka.stack.db, writer, {
    storedBefore,
    rows: fill.figures.samplesAcknowledged,
    timeoutMs: storedTimeoutMs,
    pollIntervalMs: 100,
  });
  logProgress(
    `kafka backlog: ${figures.rows} rows waiting, ${Math.round(figures.rowsPerSecond)} rows/s drained`,
  );
  return { figures, writer };
}

/**
 * The remote-write bodies to VictoriaMetrics or to Kafka mode's gateway, counted in the tally
 * (Kafka mode's), with the bytes they took on the bus where it can be read.
 */
async function measureRemoteWriteOf(
  target: CompareTarget,
  context: RunContext,
  tally: Tally,
): Promise<RemoteWriteFigures & { busBytesPerSample?: number }> {
  const { options, remoteWriteBodies } = context;
  const busBytesBefore = target.busBytes?.();
  const figures = await measureRemoteWriteTo(
    target,
    remoteWriteBodies,
    remoteWriteOptions(options),
  );
  if (target.name === 'kafka') {
    const bodies = remoteWriteBodies.warmUp.length + remoteWriteBodies.measured.length;
    tally.acknowledged +=
      figures.samplesSent + figures.warmUpOk * options.remoteWriteSeriesPerRequest;
    tally.sent += bodies * options.remoteWriteSeriesPerRequest;
  }
  // Warm-up and measured bodies alike went to the bus, all of them stored by now.
  const busBytesAfter = target.busBytes?.();
  if (busBytesBefore === undefined || busBytesAfter === undefined) return figures;
  const samples = (figures.warmUpOk + figures.ok) * options.remoteWriteSeriesPerRequest;
  return { ...figures, busBytesPerSample: (busBytesAfter - busBytesBefore) / samples };
}

/** Raw binary COPY into the Kafka mode's `samples`, rows shaped as the writer's. */
async function measureCopy(
  kafka: KafkaTarget,
  context: RunContext,
  connections: number,
): Promise<CopyCeilingResult> {
  logProgress(
    `raw COPY, ${copyBatches} batches of ${copyRowsPerBatch} rows on ${connections} connection(s)`,
  );
  const copyDb = createDatabase({
    url: kafka.stack.databaseUrl,
    maxConnections: connections,
    applicationName: 'monitor-bench-copy',
  });
  context.cleanup.add('COPY connection', () => copyDb.close());
  const services = await listAllServices(kafka.stack.db);
  return measureCopyCeiling(copyDb, {
    serviceIds: services.map((row) => row.id),
    // Before the run's first stage, a stretch per measurement: no (service, metric, time) of
    // the loads or of another measurement.
    baseTimeMs: context.stageBaseMs('smoke') - (10 + connections) * 60_000,
    batches: copyBatches,
    rowsPerBatch: copyRowsPerBatch,
    connections,
  });
}

/** Everything sent to the target over the run against what it holds at the end. */
async function checkTotal(target: CompareTarget, tally: Tally): Promise<StoredCheck> {
  const end = await target.waitForStored({
    expected: tally.storedAtStart + tally.acknowledged,
    timeoutMs: storedTimeoutMs,
    settleMs,
  });
  return checkStored({
    acknowledged: tally.acknowledged,
    sent: tally.sent,
    storedBefore: tally.storedAtStart,
    storedAfter: end.stored,
    drained: end.drained,
  });
}

/** What the target holds once it holds at least `expected` (after a settle). */
async function stored(target: CompareTarget, expected: number): Promise<number> {
  const result = await target.waitForStored({ expected, timeoutMs: storedTimeoutMs, settleMs });
  return result.stored;
}

function addToTally(tally: Tally, figures: WrkFigures): void {
  tally.acknowledged += figures.samplesAcknowledged;
  tally.sent += figures.samplesSent;
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
