/**
 * `npm run bench:ingest`: the ingest pipeline's throughput on this machine, with its ceilings
 * measured in the same run (see issue 3, section 7, and docs/benchmarks/ingest.md).
 *
 * 1. PostgreSQL, Kafka and Redis from testkit (or DATABASE_URL / KAFKA_BROKERS / REDIS_URL), a
 *    fresh database, `monitor migrate`, then `monitor gateway` and `monitor writer` as separate
 *    processes.
 * 2. Phase "single": one payload per request; phase "batched": arrays of up to 1000 payloads.
 *    After each, `samples` must hold exactly what was acknowledged.
 * 3. Phase "backlog": the writer alone. It is stopped while the gateway fills Kafka with batched
 *    payloads, then started again and timed while it drains what waits. End to end, the batched
 *    phase cannot land more than the gateway acknowledges, so this is the writer's own rate.
 * 4. Ceilings: a bare node:http server doing JSON.parse + zod (requests/s), and raw COPY of the
 *    same rows into the same table (rows/s).
 *
 * Everything started here is stopped on the way out, on errors and on Ctrl-C; the processes run
 * under testkit's watchdog, so they also die if this process is killed outright.
 */
import { fileURLToPath } from 'node:url';
import type { Database } from '@monitor/db';
import { createDatabase } from '@monitor/db';
import { ingestPath } from '@monitor/schemas';
import type { BacklogFigures } from './backlog-drain.js';
import { timeBacklogDrain } from './backlog-drain.js';
import type { BenchProcess } from './bench-process.js';
import { integerOption } from './harness/command-line.js';
import { logProgress } from './harness/progress.js';
import type { ReportBase } from './harness/report.js';
import type { BenchContext } from './harness/run-bench.js';
import { runBench } from './harness/run-bench.js';
import { measureCopyCeiling } from './copy-ceiling.js';
import { measureStoreCeiling } from './store-ceiling.js';
import type { BodySource, Fleet } from './fleet.js';
import { createFleet } from './fleet.js';
import type { LoadResult } from './load-client.js';
import { runLoad, summarizeLoad } from './load-client.js';
import type { MonitorStack } from './monitor-stack.js';
import { startPipelineStack } from './monitor-stack.js';
import { cpuSnapshot, cpuUsedBetween } from './proc-stats.js';
import type { IngestBenchReport, LoadFigures, PhaseName, PhaseReport } from './ingest-report.js';
import { formatIngestReport } from './ingest-report.js';
import { countSamples, listAllServices } from '@monitor/db/bench';
import { waitForLanded } from './wait-for-landed.js';
import { scrapeWriterCounters } from './writer-metrics.js';

/** The gateway's body limit (docs/api.md#ingest: at most 1 MiB after decompression). */
const maxIngestBodyBytes = 1024 * 1024;
const gatewayWarmUpMs = 3_000;
const bareWarmUpMs = 2_000;
const copyBatches = 50;
const copyRowsPerBatch = 10_000;
/** As many host samples as the writer's backlog transactions hold (≈ 15k rows each). */
const storeBatches = 20;
const storeHostSamplesPerBatch = 5_000;
const drainPollIntervalMs = 100;
const drainSettleMs = 1_000;

const bareServerScript = fileURLToPath(new URL('./bare-ingest-server.ts', import.meta.url));

type Options = {
  hosts: number;
  durationSeconds: number;
  concurrency: number;
  batchConcurrency: number;
  batchSize: number;
};

const usage = `Usage: npm run bench:ingest -- [options]
  --hosts N               simulated hosts (default 2000)
  --duration-seconds N    length of each measured phase (default 20)
  --concurrency N         requests in flight, single payloads and bare ceiling (default 64)
  --batch-concurrency N   requests in flight, batched phase (default 8)
  --batch-size N          payloads per batched request, at most 1000 (default 1000)
  --out FILE              JSON results (default bench-results/ingest-<iso date>.json)
Services come from DATABASE_URL, KAFKA_BROKERS and REDIS_URL when set, else testkit starts them.
WRITER_*, INGEST_PRODUCE_*, INGEST_PUBLISH_*, DATABASE_POOL_MAX and SAMPLES_TOPIC_PARTITIONS are
passed on to the gateway and writer; BENCH_WRITER_NODE_OPTIONS becomes the NODE_OPTIONS of the
writer that drains the backlog (e.g. --require of a script that starts a CPU profile).`;

type Context = BenchContext<Options, Omit<IngestBenchReport, keyof ReportBase>>;
/** The pipeline: Kafka, PostgreSQL and Redis, a migrated database, a gateway and a writer. */
type Target = {
  stack: MonitorStack;
  headers: Record<string, string>;
  gateway: BenchProcess;
  firstWriter: BenchProcess;
};

async function start({ report, cleanup, processes }: Context): Promise<Target> {
  const { stack, headers } = await startPipelineStack({
    cleanup,
    logDir: report.logDir,
    databasePrefix: 'bench',
  });
  report.settings.services = stack.serviceOrigins;
  report.settings.writerBatchMaxMessages = stack.env['WRITER_BATCH_MAX_MESSAGES'] ?? 'default';
  report.settings.writerBatchMaxWaitMs = stack.env['WRITER_BATCH_MAX_WAIT_MS'] ?? 'default';

  logProgress('starting gateway and writer');
  const [gateway, firstWriter] = await stack.startRoles(['gateway', 'writer'], processes);
  return { stack, headers, gateway, firstWriter };
}

/** The measured phases, the backlog's drain, then the ceilings (bare HTTP, COPY, the store). */
async function measure(
  { stack, headers, gateway, firstWriter }: Target,
  { options, report, cleanup, processes }: Context,
): Promise<void> {
  let writer = firstWriter;
  const { db } = stack;

  // Samples stamped from five minutes ago on, one millisecond further per use of a host.
  const fleetBaseMs = Math.floor(Date.now() / 1000) * 1000 - 5 * 60_000;
  const fleet = createFleet({ hostCount: options.hosts, baseTimeMs: fleetBaseMs });
  const batchHosts = Math.min(
    options.batchSize,
    options.hosts,
    fleet.payloadsFitting(maxIngestBodyBytes),
  );
  report.settings.payloadBytes = fleet.maxPayloadBytes;
  report.settings.batchHosts = batchHosts;
  if (batchHosts < options.batchSize) {
    report.notes.push(
      `batched requests carry ${batchHosts} payloads, not ${options.batchSize}: ` +
        (batchHosts === options.hosts && options.hosts < options.batchSize
          ? `the fleet has only ${options.hosts} hosts`
          : `${options.batchSize} payloads of ${fleet.maxPayloadBytes} B would exceed the ${maxIngestBodyBytes} B body limit`),
    );
    logProgress(report.notes[report.notes.length - 1] ?? '');
  }

  const ingest = { baseUrl: gateway.baseUrl, path: () => ingestPath, headers };
  let acknowledged = 0;

  logProgress(`warming up the gateway for ${gatewayWarmUpMs} ms`);
  const warmUp = await runLoad({
    ...ingest,
    concurrency: options.concurrency,
    durationMs: gatewayWarmUpMs,
    bodies: fleet.createBodySource({ payloadsPerRequest: 1, slots: options.concurrency }),
  });
  acknowledged += warmUp.samplesAccepted;
  if (warmUp.ok === 0)
    throw new Error(
      `the gateway acknowledged nothing while warming up: ${warmUp.examples.join('; ')}`,
    );
  const warmLanded = await waitForLanded(db, {
    expected: acknowledged,
    timeoutMs: 60_000,
    pollIntervalMs: drainPollIntervalMs,
    settleMs: 0,
  });
  if (!warmLanded.drained)
    throw new Error(`warm-up samples did not land: ${warmLanded.stored} of ${acknowledged}`);

  const phases: { name: PhaseName; payloadsPerRequest: number; concurrency: number }[] = [
    { name: 'single', payloadsPerRequest: 1, concurrency: options.concurrency },
    { name: 'batched', payloadsPerRequest: batchHosts, concurrency: options.batchConcurrency },
  ];
  for (const phase of phases) {
    logProgress(
      `phase ${phase.name}: ${phase.payloadsPerRequest} payload(s) per request, concurrency ${phase.concurrency}, ${options.durationSeconds} s`,
    );
    const result = await measurePhase({
      db,
      ingest,
      gateway,
      writer,
      fleet,
      durationMs: options.durationSeconds * 1000,
      ...phase,
    });
    report.phases[phase.name] = result;
    acknowledged += result.samplesAccepted;
    logProgress(
      `phase ${phase.name}: ${Math.round(result.requestsPerSecond)} requests/s, ` +
        `${Math.round(result.samplesPerSecond)} samples/s acknowledged, ${Math.round(result.landed.samplesPerSecond)} landed/s, ` +
        `lag ${Math.round(result.landed.lagMs)} ms, missing ${result.landed.missing}, extra ${result.landed.extra}`,
    );
  }

  logProgress(
    `phase backlog: writer stopped, gateway fills Kafka with batched requests for ${options.durationSeconds} s`,
  );
  await writer.stop();
  const fill = await runLoad({
    ...ingest,
    concurrency: options.batchConcurrency,
    durationMs: options.durationSeconds * 1000,
    bodies: fleet.createBodySource({
      payloadsPerRequest: batchHosts,
      slots: options.batchConcurrency,
    }),
  });
  acknowledged += fill.samplesAccepted;
  const storedBeforeBacklog = await countSamples(db);
  const writerNodeOptions = process.env['BENCH_WRITER_NODE_OPTIONS'];
  writer = await stack.startRole('writer', {
    name: 'writer-backlog',
    extraEnv: writerNodeOptions === undefined ? {} : { NODE_OPTIONS: writerNodeOptions },
  });
  processes.push(writer);
  backlog.figures = await timeBacklogDrain(() => countSamples(db), writer, {
    storedBefore: storedBeforeBacklog,
    rows: fill.samplesAccepted,
    timeoutMs: Math.max(60_000, 3 * options.durationSeconds * 1000),
    pollIntervalMs: drainPollIntervalMs,
  });
  logProgress(
    `phase backlog: ${backlog.figures.rows} rows waiting, ${Math.round(backlog.figures.rowsPerSecond)} rows/s drained` +
      `, ${backlog.figures.writerCpuSeconds?.toFixed(1) ?? '?'} writer CPU s over ${backlog.figures.seconds.toFixed(1)} s`,
  );

  const stored = await countSamples(db);
  report.loss = {
    acknowledged,
    stored,
    missing: Math.max(0, acknowledged - stored),
    extra: Math.max(0, stored - acknowledged),
    zeroLoss: stored === acknowledged,
  };

  // The ceilings run on a quiet machine: the pipeline processes are stopped first.
  await Promise.all([gateway.stop(), writer.stop()]);

  logProgress('ceiling: bare node:http + JSON.parse + zod');
  const bare = await stack.startNodeProcess({
    name: 'bare-http',
    args: [bareServerScript],
    env: { PATH: process.env['PATH'] ?? '' },
    readyPath: '/',
  });
  processes.push(bare);
  const bareBodies = fleet.createBodySource({ payloadsPerRequest: 1, slots: options.concurrency });
  const bareLoad = { ...ingest, baseUrl: bare.baseUrl, bodies: bareBodies };
  await runLoad({ ...bareLoad, concurrency: options.concurrency, durationMs: bareWarmUpMs });
  const bareRun = await runLoad({
    ...bareLoad,
    concurrency: options.concurrency,
    durationMs: options.durationSeconds * 1000,
  });
  report.ceilings.bareHttp = loadFigures(bareRun, bareBodies, 1, options.concurrency);
  await bare.stop();

  logProgress(`ceiling: raw COPY, ${copyBatches} batches of ${copyRowsPerBatch} rows`);
  const copyDb = createDatabase({
    url: stack.databaseUrl,
    maxConnections: 1,
    applicationName: 'monitor-bench-copy',
  });
  cleanup.add('COPY connection', () => copyDb.close());
  const serviceIds = (await listAllServices(db)).map((row) => row.id);
  report.ceilings.copy = await measureCopyCeiling(copyDb, {
    serviceIds,
    // Ten minutes before the fleet's first sample: no (service, metric, time) of the phases.
    baseTimeMs: fleetBaseMs - 10 * 60_000,
    batches: copyBatches,
    rowsPerBatch: copyRowsPerBatch,
  });

  logProgress(
    `ceiling: the writer's storage alone, ${storeBatches} batches of ${storeHostSamplesPerBatch} host samples`,
  );
  const spec = JSON.parse(
    fleet.createBodySource({ payloadsPerRequest: 1, slots: 1 }).next(0).toString('utf8'),
  ) as { docker_containers: unknown[]; processes: unknown[] };
  const services = await listAllServices(db);
  // As many connections as the writer has consumers (WRITER_CONSUMERS, default 2).
  const connections = Number(stack.env['WRITER_CONSUMERS'] ?? 2);
  const storeDb = createDatabase({
    url: stack.databaseUrl,
    maxConnections: connections,
    applicationName: 'monitor-bench-store',
  });
  cleanup.add('storage ceiling connections', () => storeDb.close());
  report.ceilings.store = await measureStoreCeiling(storeDb, {
    connections,
    services: services.map((row) => ({ orgId: row.orgId, host: row.name })),
    containersJson: JSON.stringify(spec.docker_containers),
    processesJson: JSON.stringify(spec.processes),
    // Twenty minutes before the fleet's first sample: clear of the phases and the COPY rows.
    baseTimeMs: fleetBaseMs - 20 * 60_000,
    batches: storeBatches,
    hostSamplesPerBatch: storeHostSamplesPerBatch,
  });
}

async function measurePhase(args: {
  name: PhaseName;
  db: Database;
  ingest: { baseUrl: string; path: () => string; headers: Record<string, string> };
  gateway: BenchProcess;
  writer: BenchProcess;
  fleet: Fleet;
  payloadsPerRequest: number;
  concurrency: number;
  durationMs: number;
}): Promise<PhaseReport> {
  const { db, gateway, writer } = args;
  const bodies = args.fleet.createBodySource({
    payloadsPerRequest: args.payloadsPerRequest,
    slots: args.concurrency,
  });
  const storedBefore = await countSamples(db);
  const writerBefore = await scrapeWriterCounters(writer.baseUrl);
  const cpuBefore = cpuSnapshot([gateway, writer]);

  const load = await runLoad({
    ...args.ingest,
    concurrency: args.concurrency,
    durationMs: args.durationMs,
    bodies,
  });
  const cpuAfter = cpuSnapshot([gateway, writer]);

  const expected = storedBefore + load.samplesAccepted;
  const landed = await waitForLanded(db, {
    expected,
    timeoutMs: Math.max(60_000, 3 * args.durationMs),
    pollIntervalMs: drainPollIntervalMs,
    settleMs: drainSettleMs,
  });
  const writerAfter = await scrapeWriterCounters(writer.baseUrl);

  const landedSeconds = (landed.landedAtMs - load.startedAtMs) / 1000;
  const figures = loadFigures(load, bodies, args.payloadsPerRequest, args.concurrency);
  const cpu = cpuUsedBetween(cpuBefore, cpuAfter);
  const phase: PhaseReport = {
    ...figures,
    landed: {
      expected,
      storedBefore,
      stored: landed.stored,
      missing: Math.max(0, expected - landed.stored),
      extra: Math.max(0, landed.stored - expected),
      drained: landed.drained,
      samplesPerSecond: landedSeconds > 0 ? (landed.stored - storedBefore) / landedSeconds : 0,
      lagMs: Math.max(0, landed.landedAtMs - load.lastOkAtMs),
      lagResolutionMs: landed.landedAtMs - landed.previousPollAtMs,
    },
    cpu: {
      gatewaySeconds: cpu.seconds[gateway.name],
      writerSeconds: cpu.seconds[writer.name],
      loadGeneratorSeconds: cpu.seconds['self'] ?? 0,
      machineBusyPercent: cpu.machineBusyPercent,
    },
  };
  if (writerBefore && writerAfter) {
    const samplesWritten = writerAfter.samplesWritten - writerBefore.samplesWritten;
    const writeSeconds = writerAfter.writeSeconds - writerBefore.writeSeconds;
    phase.writer = {
      samplesWritten,
      batches: writerAfter.batches - writerBefore.batches,
      writeSeconds,
      rowsPerWriteSecond: writeSeconds > 0 ? samplesWritten / writeSeconds : 0,
    };
  }
  return phase;
}

function loadFigures(
  load: LoadResult,
  bodies: BodySource,
  payloadsPerRequest: number,
  concurrency: number,
): LoadFigures {
  return {
    payloadsPerRequest,
    concurrency,
    bodyBytes: bodies.maxBodyBytes,
    durationSeconds: Math.round(load.seconds * 1000) / 1000,
    ...summarizeLoad(load),
    samplesAccepted: load.samplesAccepted,
    samplesPerSecond: load.samplesAccepted / load.seconds,
  };
}

/** Ratios and the issue's targets, from whatever the run measured. */
function summarize(report: IngestBenchReport, backlog: BacklogFigures | undefined): void {
  const { single, batched } = report.phases;
  const bare = report.ceilings.bareHttp;
  const copy = report.ceilings.copy;
  if (single && bare && bare.requestsPerSecond > 0) {
    report.ratios.gatewayVsBare = single.requestsPerSecond / bare.requestsPerSecond;
  }
  if (batched && copy && copy.rowsPerSecond > 0) {
    report.ratios.writerLandedVsCopy = batched.landed.samplesPerSecond / copy.rowsPerSecond;
    if (batched.writer)
      report.ratios.writerBusyVsCopy = batched.writer.rowsPerWriteSecond / copy.rowsPerSecond;
  }
  const gatewayVsBare = report.ratios.gatewayVsBare;
  const writerVsCopy = report.ratios.writerLandedVsCopy;
  const landed = batched?.landed.samplesPerSecond;
  const measuredAll = single !== undefined && batched !== undefined;
  const backlogVsCopy =
    backlog && copy && copy.rowsPerSecond > 0
      ? backlog.rowsPerSecond / copy.rowsPerSecond
      : undefined;
  const store = report.ceilings.store;
  if (store && copy && copy.rowsPerSecond > 0) {
    report.ratios.storeVsCopy = store.rowsPerSecond / copy.rowsPerSecond;
    if (backlog) report.ratios.backlogVsStore = backlog.rowsPerSecond / store.rowsPerSecond;
  }
  report.targets = {
    'gateway single requests/s / bare node:http': {
      value: gatewayVsBare,
      unit: 'ratio',
      target: '≥ 50 %',
      met: gatewayVsBare !== undefined && gatewayVsBare >= 0.5,
    },
    'writer samples landed/s (batched) / COPY': {
      value: writerVsCopy,
      unit: 'ratio',
      target: '≥ 60 %',
      met: writerVsCopy !== undefined && writerVsCopy >= 0.6,
    },
    'writer draining a backlog rows/s / COPY': {
      value: backlogVsCopy,
      unit: 'ratio',
      target: '≥ 60 %',
      met: backlogVsCopy !== undefined && backlogVsCopy >= 0.6,
    },
    'batched samples landed/s, end to end': {
      value: landed,
      unit: 'samples/s',
      target:
        batched && batched.payloadsPerRequest < 1000
          ? `≥ 100,000 (${batched.payloadsPerRequest} hosts/request, not 1000)`
          : '≥ 100,000',
      met: landed !== undefined && landed >= 100_000,
    },
    'zero loss (stored == acknowledged)': {
      value: measuredAll ? report.loss.zeroLoss : undefined,
      unit: 'yes/no',
      target: 'yes',
      met: measuredAll && report.loss.zeroLoss,
    },
  };
  for (const [name, phase] of Object.entries(report.phases)) {
    const failures = Object.entries({ ...phase.statuses, ...phase.errors });
    if (failures.length > 0) {
      report.notes.push(
        `phase ${name}: ${failures.map(([what, n]) => `${n} × ${what}`).join(', ')}; e.g. ${phase.examples.slice(0, 2).join(' | ')}`,
      );
    }
    if (!phase.landed.drained)
      report.notes.push(`phase ${name}: samples had not all landed when the wait timed out`);
  }
  if (backlog) {
    report.notes.push(
      `phase backlog: the writer drained ${backlog.rows} waiting rows; ${backlog.rowsTimed} of them in ${backlog.seconds.toFixed(2)} s ` +
        `(${Math.round(backlog.rowsPerSecond)} rows/s, writer CPU ${backlog.writerCpuSeconds?.toFixed(1) ?? '?'} s, ` +
        `${backlog.batches ?? '?'} transactions in all)${backlog.drained ? '' : '; NOT drained before the timeout'}`,
    );
  }
}

/** The writer's drain of the backlog, for the summary: the report keeps it only as a note. */
const backlog: { figures?: BacklogFigures } = {};

await runBench({
  name: 'ingest',
  usage,
  defaults: {
    hosts: '2000',
    'duration-seconds': '20',
    concurrency: '64',
    'batch-concurrency': '8',
    'batch-size': '1000',
  },
  parseOptions: (values): Options => ({
    hosts: integerOption('hosts', values.hosts),
    durationSeconds: integerOption('duration-seconds', values['duration-seconds']),
    concurrency: integerOption('concurrency', values.concurrency),
    batchConcurrency: integerOption('batch-concurrency', values['batch-concurrency']),
    batchSize: integerOption('batch-size', values['batch-size'], 1, 1000),
  }),
  createReport: (options) => ({
    settings: {
      hosts: options.hosts,
      durationSeconds: options.durationSeconds,
      concurrency: options.concurrency,
      batchConcurrency: options.batchConcurrency,
      batchHosts: 0,
      payloadBytes: 0,
      maxIngestBodyBytes,
      services: {},
    },
    phases: {},
    ceilings: {},
    ratios: {},
    loss: { acknowledged: 0, stored: 0, missing: 0, extra: 0, zeroLoss: false },
    targets: {},
  }),
  start,
  measure,
  finish: (report) => summarize(report, backlog.figures),
  format: formatIngestReport,
});
