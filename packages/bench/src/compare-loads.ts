/**
 * What `bench:compare` measures of one target: the smoke request, each workload's warm-up and
 * measured wrk load with its storage check, the remote-write bodies, and Kafka mode's backlog
 * drain and COPY ceiling; with the tally of everything sent over the run.
 */
import { createDatabase } from '@monitor/db';
import { timeBacklogDrain } from './backlog-drain.js';
import type { Cleanup } from './harness/cleanup.js';
import { logProgress } from './harness/progress.js';
import type { BenchProcess } from './bench-process.js';
import type { CompareFleet, WireFormat } from './compare-fleet.js';
import { compareMetricNames } from './compare-fleet.js';
import type { BacklogFigures } from './backlog-drain.js';
import type { CompareBenchReport, StoredCheck, TargetReport } from './compare-report.js';
import { chargeLoad, checkStored, workloadNames } from './compare-report.js';
import type { CompareTarget, TargetName } from './compare-target.js';
import type { CopyCeilingResult } from './copy-ceiling.js';
import { measureCopyCeiling } from './copy-ceiling.js';
import type {
  RemoteWriteBodies,
  RemoteWriteFigures,
  RemoteWriteOptions,
} from './remote-write-load.js';
import { measureRemoteWriteTo } from './remote-write-load.js';
import type { KafkaTarget } from './kafka-target.js';
import { listAllServices } from '@monitor/db/bench';
import type { WrkFigures } from './wrk-result.js';
import { runWrkLoad } from './wrk-load.js';

/**
 * Each host's values change from one pass over the fleet to the next (this many sets), so
 * neither store gets series of one constant value, which would compress to nothing.
 */
export const valueVariants = 4;
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
const copyRowsPerBatch = 10_000;
/**
 * Connections the Kafka mode's writer writes with at its defaults (WRITER_CONSUMERS 2 ×
 * WRITER_WRITE_CONNECTIONS 2): the COPY ceiling is also measured on as many.
 */
export const writerConnections = 4;

/** The command line's options. */
export type Options = {
  targets: TargetName[];
  hosts: number;
  durationSeconds: number;
  warmUpSeconds: number;
  threads: number;
  singleConnections: number;
  batchHosts: number;
  batchConnections: number;
  backlogSeconds: number;
  /** Rows of each raw COPY ceiling, in batches of `copyRowsPerBatch`. */
  copyRows: number;
  /** The Kafka mode's database server, when testkit starts it. */
  kafkaStorage: 'timescale' | 'postgres';
  /** Kafka mode's sample shards: 1, or s1… on TimescaleDB servers of their own (kafka-target). */
  kafkaShards: number;
  remoteWriteWarmUpRequests: number;
  remoteWriteRequests: number;
  remoteWriteSeriesPerRequest: number;
  remoteWriteConcurrency: number;
  victoriaMetrics: string;
  wrk: string;
};

/** What `seed` prepares for the loads: the same for every target. */
export type Workload = {
  fleet: CompareFleet;
  dataFiles: Record<WireFormat, string>;
  wrk: string;
  /** Where each stage's samples start; the same for every target. */
  stageBaseMs: (stage: Stage) => number;
  /** The remote-write bodies, the same for every target that takes them. */
  remoteWriteBodies: RemoteWriteBodies;
};

/** What every load of the run shares. */
export type RunContext = Workload & { options: Options; logDir: string; cleanup: Cleanup };

/** Where each stage's samples start, stages `stageSpacingMs` apart from `runBaseMs` on. */
export function stageBases(runBaseMs: number): (stage: Stage) => number {
  return (stage) => runBaseMs + stages.indexOf(stage) * stageSpacingMs;
}

export function remoteWriteOptions(options: Options): RemoteWriteOptions {
  return {
    warmUpRequests: options.remoteWriteWarmUpRequests,
    requests: options.remoteWriteRequests,
    seriesPerRequest: options.remoteWriteSeriesPerRequest,
    concurrency: options.remoteWriteConcurrency,
    histograms: false,
  };
}

/** Samples acknowledged and sent to a target so far, and what it held before the first. */
export type Tally = { acknowledged: number; sent: number; storedAtStart: number };

/** Smoke request, then per workload a warm-up and a measured load, each checked in storage. */
export async function measureTarget(
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
export async function measureBacklog(
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
  const storedBefore = await kafka.countSamples();
  const writer = await kafka.startWriter('writer-backlog');
  const figures = await timeBacklogDrain(() => kafka.countSamples(), writer, {
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
export async function measureRemoteWriteOf(
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
export async function measureCopy(
  kafka: KafkaTarget,
  context: RunContext,
  connections: number,
): Promise<CopyCeilingResult> {
  const batches = Math.ceil(context.options.copyRows / copyRowsPerBatch);
  logProgress(
    `raw COPY, ${batches} batches of ${copyRowsPerBatch} rows on ${connections} connection(s)`,
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
    batches,
    rowsPerBatch: copyRowsPerBatch,
    connections,
  });
}

/** Everything sent to the target over the run against what it holds at the end. */
export async function checkTotal(target: CompareTarget, tally: Tally): Promise<StoredCheck> {
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
