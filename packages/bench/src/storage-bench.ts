/**
 * `npm run bench:storage`: bytes on disk per sample, ours against VictoriaMetrics, on the same
 * samples; then the history endpoint's latency over that history (issue 25, items 6 and 7;
 * docs/benchmarks/storage.md, "Storage").
 *
 * 1. A fleet (storage-fleet.ts): 1,000 hosts × 10 metrics × 24 h at 30 s by default, every
 *    value generated up front from a seed; with `--jitter-ms`, each scrape's time that far off
 *    the grid at most, the same times sent to both.
 * 2. VictoriaMetrics (Debian's package): every series through `/api/v1/import`, a forced merge
 *    waited out, then the bytes of its storage dir. Stopped before our side loads.
 * 3. Ours: PostgreSQL 15 with TimescaleDB preloaded (timescale-server.ts), `migrate` in
 *    TimescaleDB mode, the same samples through the writer's storage path (sample store,
 *    series ids, binary COPY), and every chunk of raw samples compressed but the one holding
 *    the newest hour (the history ends one hour past a chunk boundary, so that is exactly the
 *    newest hour). samples_1m and samples_1h are retired (migrations 36 and 37): nothing is
 *    materialized into them. The policies' jobs are paused: this measures sizes, not the
 *    scheduler. Every relation is counted: compressed and uncompressed chunks, indexes, the
 *    aggregates' (empty) materialization hypertables, `series` and `services`.
 * 4. `monitor api` over that database: GET /api/v1/services/:id/metrics for the whole 24 h at
 *    step=1m and step=1h, random services and metrics, p50/p95/p99.
 * 5. The steady state (storage-steady-state.ts): bytes per raw sample of a deployment past its
 *    first raw retention, from the parts measured (each hypertable's compressed and
 *    uncompressed chunks) weighted by the share of the retention the shipped policies (read
 *    from the database's jobs and chunk intervals) leave uncompressed, the newest samples at
 *    their largest (issue 56, item 4).
 * 6. The rollup tiers kept beyond the raw retention (issue 57; storage-kept-tiers.ts): stored by
 *    the writer's maintenance as if the history were nearing the raw retention, a 7-day chunk
 *    of the 5-minute tier and a 30-day one of the hourly tier filled with those rows shifted
 *    back by whole days, compressed; bytes per row and per raw sample they summarize, against
 *    a raw sample's compressed bytes (target: at most a quarter).
 *
 * `--engine postgres` stores our side in plain PostgreSQL storage instead (issue 39, item 7:
 * reported, no target): daily partitions, the rollup tables retired as on TimescaleDB, nothing
 * compressed, so its steady state is what 24 hours weigh per sample, with the dictionary spread
 * over the retention's samples.
 */
import { performance } from 'node:perf_hooks';
import {
  createApiKeyStore,
  createOrgStore,
  headCompressLagMs,
  mergedSpanAtMostMs,
} from '@monitor/db';
import type { Database } from '@monitor/db';
import type { CompressedColumn } from '@monitor/db/bench';
import {
  compressOlderChunks,
  consolidateSampleChunks,
  recompressSampleChunks,
  explainHistoryRead,
  listAllSeries,
  measureCompressedColumns,
  measurePlainSizes,
  measureTimescaleSizes,
  pausePolicyJobs,
  readCompressionWindows,
  readConsolidationJobHours,
  readRawChunkIntervalMs,
  readRawRetentionDays,
  vacuumAnalyze,
} from '@monitor/db/bench';
import { createSeededRandom, getFreePort } from '@monitor/testkit';
import type { BenchProcess } from './bench-process.js';
import { startHttpProcess } from './bench-process.js';
import type { Cleanup } from './harness/cleanup.js';
import { integerOption } from './harness/command-line.js';
import { logProgress } from './harness/progress.js';
import type { ReportBase } from './harness/report.js';
import type { BenchContext } from './harness/run-bench.js';
import { runBench } from './harness/run-bench.js';
import type { TimescaleDatabase } from './harness/timescale-database.js';
import { migrateInMode, startTimescaleDatabase } from './harness/timescale-database.js';
import { runLoad, summarizeLoad } from './load-client.js';
import { monitorCommand } from './monitor-stack.js';
import type { StorageFleet } from './storage-fleet.js';
import { createStorageFleet, storageMetricNames } from './storage-fleet.js';
import { measureKeptTiers, timed as timedValue } from './storage-kept-tiers.js';
import { loadFleet } from './storage-load.js';
import type { MeasuredParts } from './storage-steady-state.js';
import { measureParts, steadyState, uncompressedHours } from './storage-steady-state.js';
import type { LayoutFigures, StorageBenchReport } from './storage-report.js';
import { compareStorage, countBytes, formatStorageReport, historyEndMs } from './storage-report.js';
import {
  forceMerge,
  importFleet,
  measureVictoriaMetrics,
  storedRows,
} from './victoria-metrics-storage.js';
import {
  startVictoriaMetricsServer,
  victoriaMetricsBinary,
  victoriaMetricsInstall,
  victoriaMetricsVersion,
} from './victoria-metrics-target.js';

const hourMs = 3_600_000;
const mergeTimeoutMs = 10 * 60_000;

type Options = {
  hosts: number;
  hours: number;
  intervalSeconds: number;
  seed: number;
  connections: number;
  pointsPerBatch: number;
  queryConcurrency: number;
  queryDurationSeconds: number;
  jitterMs: number;
  engine: 'timescale' | 'postgres';
  victoriaMetrics: string;
};

const usage = `Usage: npm run bench:storage -- [options]
  --hosts N                 hosts in the fleet (default 1000), 10 metrics each
  --hours N                 history per series (default 24)
  --interval-seconds N      between points (default 30)
  --seed N                  the fleet's values (default 25)
  --connections N           our load: sample stores writing side by side (default 2)
  --points-per-batch N      our load: points of each host per writeBatch (default 2)
  --query-concurrency N     history queries in flight (default 4)
  --query-duration-seconds N  measured time per query kind (default 15)
  --jitter-ms N             each scrape up to N ms off the 30 s grid (default 0: exact grid)
  --engine E                our storage: timescale (default) or postgres (plain, no compression)
  --victoria-metrics PATH   the server (default ${victoriaMetricsBinary}: ${victoriaMetricsInstall})
  --out FILE                JSON results (default bench-results/storage-<iso date>.json)
Needs TimescaleDB for the machine's PostgreSQL (tools/build-machine/timescaledb/install-from-source.sh).`;

type Target = TimescaleDatabase;
type Context = BenchContext<Options, Omit<StorageBenchReport, keyof ReportBase>>;

async function start({ options, report, cleanup }: Context): Promise<Target> {
  const target = await startTimescaleDatabase({
    logDir: report.logDir,
    cleanup,
    prefix: 'bench_storage',
    maxConnections: options.connections + 1,
    applicationName: 'monitor-bench-storage',
  });
  report.settings.timescaledb = target.version;
  return target;
}

async function migrateTarget({ db }: Target, { options }: Context): Promise<void> {
  await migrateInMode(db, options.engine);
  if (options.engine === 'timescale') await pausePolicyJobs(db);
}

/** The fleet loaded into each store, then sizes and history queries, layout by layout. */
async function measure(target: Target, context: Context): Promise<void> {
  const { options, report, cleanup, processes } = context;
  const { logDir } = report;
  const { db } = target;
  const plain = options.engine === 'postgres';
  // Plain PostgreSQL's partitions are daily.
  const chunkMs = plain ? 24 * hourMs : await readRawChunkIntervalMs(db);

  // One hour past a UTC midnight, which is a boundary of the raw chunks and of the aggregates'
  // daily ones alike: every chunk but the newest then holds as much as it does in a deployment.
  const endMs = historyEndMs(Date.now(), Math.max(chunkMs, 24 * hourMs), hourMs);
  const pointsPerSeries = (options.hours * 3600) / options.intervalSeconds;
  const startMs = endMs - pointsPerSeries * options.intervalSeconds * 1000;
  report.settings.windowStart = new Date(startMs).toISOString();
  report.settings.windowEnd = new Date(endMs).toISOString();
  logProgress(`generating ${options.hosts} hosts × ${pointsPerSeries} points`);
  const fleet = createStorageFleet({
    hostCount: options.hosts,
    pointsPerSeries,
    intervalMs: options.intervalSeconds * 1000,
    startMs,
    seed: options.seed,
    jitterMs: options.jitterMs,
  });
  report.samples = fleet.sampleCount;

  const victoriaMetricsBytes = await measureVictoriaMetricsSide(options, fleet, report, cleanup);

  // Ours.
  const orgs = createOrgStore(db);
  const org = await orgs.createOrganization('bench-storage');
  const { key } = await createApiKeyStore(db).createKey({
    orgId: org.id,
    name: 'bench',
    scopes: ['read'],
  });
  logProgress(`loading ${fleet.sampleCount} samples through the sample store`);
  let nextProgress = 0;
  const loaded = await loadFleet(db, fleet, {
    orgId: org.id,
    connections: options.connections,
    pointsPerBatch: options.pointsPerBatch,
    progress: (written) => {
      if (written < nextProgress) return;
      nextProgress += 2_000_000;
      logProgress(`  ${written} samples stored`);
    },
  });
  if (loaded.samplesWritten !== fleet.sampleCount)
    throw new Error(`stored ${loaded.samplesWritten} of ${fleet.sampleCount} samples`);
  report.load.ours = {
    seconds: loaded.seconds,
    samplesPerSecond: loaded.samplesWritten / loaded.seconds,
    connections: options.connections,
    batchSamples: Math.ceil(options.hosts / options.connections) * options.pointsPerBatch * 10,
  };
  logProgress(`loaded in ${loaded.seconds.toFixed(1)} s`);
  if (plain) {
    await measurePlainSide(db, options, report, {
      cleanup,
      processes,
      databaseUrl: target.url,
      key,
      samples: fleet.sampleCount,
      startMs,
      endMs,
      victoriaMetricsBytes,
    });
    return;
  }

  const steps: Record<string, number> = {};
  // As the policies leave a 24-hour history: raw chunks compressed, nothing materialized into
  // samples_1m and samples_1h (retired by migrations 36 and 37: their hours and minutes are
  // computed from the raw samples as they are read, and the tiers are stored only before the raw
  // retention ends, which step 6 weighs apart).
  // The raw samples as their job leaves them at the history's end: every head chunk that ended a
  // minute before compressed (storage/timescale/head-chunks.ts), the newest one not.
  steps['compress samples'] = await timed(() =>
    compressOlderChunks(db, 'samples', new Date(endMs - headCompressLagMs)),
  );
  // Head chunks merged into compressed chunks of up to 6 hours, none consolidated yet: what a
  // compressed chunk weighs until the consolidation job took it (storage/timescale/head-chunks.ts).
  const merged = await measureParts(db, ['samples']);
  steps['consolidate samples'] = await timed(() => consolidateSampleChunks(db));
  // What autovacuum would have done by now: the services projection is updated with every
  // batch, and its dead row versions are reusable space, not history.
  steps['vacuum analyze'] = await timed(() => vacuumAnalyze(db));
  const shipped = await measureLayout(db, {
    name: 'as shipped',
    changes: [],
    exclude: [],
    steps,
    samples: fleet.sampleCount,
    victoriaMetricsBytes,
  });
  report.layouts.push(shipped);

  const api = await startApi(target.url, logDir, cleanup, 'api');
  processes.push(api);
  const targets = await queryTargets(db);
  await measureQueries(db, options, report, {
    api,
    key,
    targets,
    startMs,
    endMs,
    layout: 'as shipped',
  });
  await api.stop();

  // For the steady state: the newest compressed chunk consolidated too, as the job does once
  // it is full.
  const partSteps: Record<string, number> = {};
  partSteps['consolidate every samples chunk'] = await timed(() => recompressSampleChunks(db));
  partSteps['vacuum analyze'] = await timed(() => vacuumAnalyze(db));
  report.layouts.push(
    await measureLayout(db, {
      name: 'every chunk consolidated, to measure them',
      changes: ['the newest compressed chunk consolidated'],
      exclude: [],
      steps: partSteps,
      samples: fleet.sampleCount,
      victoriaMetricsBytes,
    }),
  );
  report.steadyState = await measureSteadyState(db, {
    uncompressedParts: [],
    mergedSamples: merged[0]!.compressed,
    sizes: shipped.sizes,
    samples: fleet.sampleCount,
    historyHours: options.hours,
    victoriaMetricsBytesPerSample: victoriaMetricsBytes / fleet.sampleCount,
  });
  // Last, so that nothing above counts them: the tiers kept beyond the raw retention.
  const raw = report.steadyState.terms.find((t) => t.name === 'samples');
  if (raw === undefined) throw new Error('the steady state has no raw samples');
  report.keptTiers = await measureKeptTiers(db, {
    startMs,
    endMs,
    rawBytesPerSample: raw.compressedPerSample,
  });
}

/**
 * The steady state from this database's parts and its policies as the jobs hold them (chunk
 * intervals, compress_after, schedule intervals) and the raw retention stored.
 */
async function measureSteadyState(
  db: Database,
  input: {
    /** Parts measured before a step compressed them, whose uncompressed figures count. */
    uncompressedParts: readonly MeasuredParts[];
    /** The raw samples' compressed chunks before any was consolidated. */
    mergedSamples: MeasuredParts['compressed'];
    sizes: LayoutFigures['sizes'];
    samples: number;
    historyHours: number;
    victoriaMetricsBytesPerSample: number;
  },
): Promise<NonNullable<StorageBenchReport['steadyState']>> {
  const relations = ['samples'];
  const windows = (await readCompressionWindows(db)).filter((w) => relations.includes(w.name));

  const uncompressedHoursOf: Record<string, number> = {};
  for (const w of windows) {
    uncompressedHoursOf[w.name] = uncompressedHours({
      chunkHours: w.chunkHours,
      compressAfterHours: w.compressAfterHours,
      jobIntervalHours: w.jobHours,
    });
  }
  const retentionDays = await readRawRetentionDays(db);

  const retentionHours = retentionDays * 24;
  // The raw samples: head chunks uncompressed at their largest, the moment before the
  // compression job takes them (issue 56: the disk a user must have), then batches merged from
  // them into compressed chunks, not consolidated yet (also at their largest), and consolidated
  // chunks for the rest of the retention.
  const raw = windows.find((w) => w.name === 'samples');
  if (raw !== undefined) {
    uncompressedHoursOf['samples'] = raw.chunkHours + raw.compressAfterHours + raw.jobHours;
  }
  // Merged batches at their largest: the widest step between two consolidations of a growing
  // chunk and the job's wait.
  const consolidationJobHours = await readConsolidationJobHours(db);
  const mergedHours =
    consolidationJobHours === undefined ? 0 : mergedSpanAtMostMs / hourMs + consolidationJobHours;
  const heldHoursOf: Record<string, number> = {
    samples: retentionHours - mergedHours,
    'samples, merged': mergedHours,
  };
  uncompressedHoursOf['samples, merged'] = 0;
  const dictionaryBytes = countBytes(input.sizes, (r) => r.kind === 'dictionary');
  const state = steadyState({
    parts: [
      ...(await measureParts(db, relations)).map((part) => {
        const before = input.uncompressedParts.find((p) => p.name === part.name);
        return before === undefined ? part : { ...part, uncompressed: before.uncompressed };
      }),
      {
        name: 'samples, merged',
        compressed: input.mergedSamples,
        uncompressed: { bytes: 0, samples: 0 },
      },
    ],
    uncompressedHoursOf,
    heldHoursOf,
    retentionHours,
    dictionaryBytes,
    samples: input.samples,
    historyHours: input.historyHours,
  });
  const ratio = state.total / input.victoriaMetricsBytesPerSample;
  logProgress(
    `steady state: ${state.total.toFixed(3)} bytes/sample against ` +
      `${input.victoriaMetricsBytesPerSample.toFixed(3)} (${ratio.toFixed(2)}×)`,
  );
  return {
    ...state,
    uncompressedHoursOf,
    heldHoursOf,
    victoriaMetricsBytesPerSample: input.victoriaMetricsBytesPerSample,
    ratio,
  };
}

/**
 * Our side in plain PostgreSQL storage: the rollup tables brought up to the history's end by
 * the same refresh maintenance runs every minute, then sizes, the history endpoint, and the
 * steady state (every relation uncompressed for the whole retention).
 */
async function measurePlainSide(
  db: Database,
  options: Options,
  report: StorageBenchReport,
  run: {
    cleanup: Cleanup;
    processes: BenchProcess[];
    databaseUrl: string;
    key: string;
    samples: number;
    startMs: number;
    endMs: number;
    victoriaMetricsBytes: number;
  },
): Promise<void> {
  const steps: Record<string, number> = {};
  steps['vacuum analyze'] = await timed(() => vacuumAnalyze(db));
  const sizes = await measurePlainSizes(db);
  const countedBytes = countBytes(sizes, () => true);
  const comparison = compareStorage({
    samples: run.samples,
    ourBytes: countedBytes,
    victoriaMetricsBytes: run.victoriaMetricsBytes,
  });
  logProgress(
    `plain PostgreSQL: ${comparison.ourBytesPerSample.toFixed(3)} bytes/sample against ` +
      `${comparison.victoriaMetricsBytesPerSample.toFixed(3)} (${comparison.ratio.toFixed(2)}×)`,
  );
  report.layouts.push({
    name: 'plain PostgreSQL',
    changes: ['STORAGE_MODE=postgres: daily partitions and rollup tables, nothing compressed'],
    sizes,
    countedBytes,
    comparison,
    columns: [],
    steps,
  });

  const api = await startApi(run.databaseUrl, report.logDir, run.cleanup, 'api');
  run.processes.push(api);
  await measureQueries(db, options, report, {
    api,
    key: run.key,
    targets: await queryTargets(db),
    startMs: run.startMs,
    endMs: run.endMs,
    layout: 'plain',
  });
  await api.stop();

  // Nothing is compressed: the raw samples weigh what 24 hours hold, for every hour of the
  // retention (samples_1m and samples_1h are retired, migrations 36 and 37).

  const retentionHours = (await readRawRetentionDays(db)) * 24;
  const part = (name: string): MeasuredParts => ({
    name,
    compressed: { bytes: 0, samples: 0 },
    uncompressed: {
      bytes: countBytes(sizes, (r) => r.name === name),
      samples: run.samples,
    },
  });
  const parts = ['samples'].map(part);
  const state = steadyState({
    parts,
    uncompressedHoursOf: Object.fromEntries(parts.map((p) => [p.name, retentionHours])),
    retentionHours,
    dictionaryBytes: countBytes(sizes, (r) => r.kind === 'dictionary'),
    samples: run.samples,
    historyHours: options.hours,
  });
  const victoriaMetricsBytesPerSample = run.victoriaMetricsBytes / run.samples;
  report.steadyState = {
    ...state,
    uncompressedHoursOf: Object.fromEntries(parts.map((p) => [p.name, retentionHours])),
    heldHoursOf: {},
    victoriaMetricsBytesPerSample,
    ratio: state.total / victoriaMetricsBytesPerSample,
  };
  logProgress(
    `plain PostgreSQL steady state: ${state.total.toFixed(3)} bytes/sample ` +
      `(${(state.total / victoriaMetricsBytesPerSample).toFixed(2)}×)`,
  );
}

/** Loads, merges and measures VictoriaMetrics, then stops it; returns its bytes. */
async function measureVictoriaMetricsSide(
  options: Options,
  fleet: StorageFleet,
  report: StorageBenchReport,
  cleanup: Cleanup,
): Promise<number> {
  const { proc, storageDir } = await startVictoriaMetricsServer({
    binary: options.victoriaMetrics,
    logDir: report.logDir,
    cleanup,
  });
  logProgress(`importing ${fleet.sampleCount} samples into VictoriaMetrics`);
  const startedAt = performance.now();
  await importFleet(proc.baseUrl, fleet);
  const rows = await storedRows(proc.baseUrl);
  const seconds = (performance.now() - startedAt) / 1000;
  report.load.victoriaMetrics = {
    seconds,
    samplesPerSecond: fleet.sampleCount / seconds,
    storedRows: rows,
  };
  if (rows !== fleet.sampleCount)
    report.notes.push(`VictoriaMetrics holds ${rows} rows of ${fleet.sampleCount} samples sent`);
  logProgress(`imported in ${seconds.toFixed(1)} s; forced merge`);
  const mergeSeconds = await forceMerge(proc.baseUrl, mergeTimeoutMs);
  const sizes = await measureVictoriaMetrics(proc.baseUrl, storageDir);
  report.victoriaMetrics = { ...sizes, mergeSeconds };
  logProgress(
    `VictoriaMetrics: ${sizes.totalBytes} bytes after ${mergeSeconds.toFixed(1)} s of merging`,
  );
  await proc.stop();
  return sizes.totalBytes;
}

async function measureLayout(
  db: Database,
  layout: {
    name: string;
    changes: string[];
    /** Aggregates of the other layout, not counted in this one. */
    exclude: readonly string[];
    steps: Record<string, number>;
    samples: number;
    victoriaMetricsBytes: number;
  },
): Promise<LayoutFigures> {
  const sizes = await measureTimescaleSizes(db);
  sizes.relations = sizes.relations.filter((r) => !layout.exclude.includes(r.name));
  sizes.compression = sizes.compression.filter((c) => !layout.exclude.includes(c.name));
  const countedBytes = countBytes(sizes, () => true);
  const columns: CompressedColumn[] = [];
  for (const c of sizes.compression) {
    if (c.compressedChunks > 0) columns.push(...(await measureCompressedColumns(db, c.name)));
  }
  const comparison = compareStorage({
    samples: layout.samples,
    ourBytes: countedBytes,
    victoriaMetricsBytes: layout.victoriaMetricsBytes,
  });
  logProgress(
    `${layout.name}: ${comparison.ourBytesPerSample.toFixed(3)} bytes/sample against ` +
      `${comparison.victoriaMetricsBytesPerSample.toFixed(3)} (${comparison.ratio.toFixed(2)}×)`,
  );
  return {
    name: layout.name,
    changes: layout.changes,
    sizes,
    countedBytes,
    comparison,
    columns,
    steps: layout.steps,
  };
}

type QueryTarget = { serviceId: string; metric: string; seriesId: string };

async function queryTargets(db: Database): Promise<QueryTarget[]> {
  return await listAllSeries(db);
}

/** The history query at both steps: checked once, then driven for the configured time. */
async function measureQueries(
  db: Database,
  options: Options,
  report: StorageBenchReport,
  run: {
    api: BenchProcess;
    key: string;
    targets: readonly QueryTarget[];
    startMs: number;
    endMs: number;
    layout: string;
  },
): Promise<void> {
  const headers = { 'x-api-key': run.key };
  const from = new Date(run.startMs).toISOString();
  const to = new Date(run.endMs).toISOString();
  for (const step of ['1m', '1h'] as const) {
    const random = createSeededRandom(options.seed + (step === '1m' ? 1 : 2)).next;
    const path = (): string => {
      const target = run.targets[Math.floor(random() * run.targets.length)];
      if (target === undefined) throw new Error('no series to query');
      const query = new URLSearchParams({ metric: target.metric, from, to, step });
      return `/api/v1/services/${target.serviceId}/metrics?${query.toString()}`;
    };
    const points = await checkAnswer(run.api.baseUrl, headers, path());
    const expected = (run.endMs - run.startMs) / (step === '1m' ? 60_000 : hourMs);
    if (points !== expected)
      throw new Error(`step=${step}: ${points} points in 24 h, expected ${expected}`);
    // Warm-up: the api process's pool and prepared statements, the server's caches.
    await runLoad({
      baseUrl: run.api.baseUrl,
      path,
      headers,
      concurrency: options.queryConcurrency,
      durationMs: 3_000,
    });
    logProgress(`${run.layout}: step=${step} for ${options.queryDurationSeconds} s`);
    const load = await runLoad({
      baseUrl: run.api.baseUrl,
      path,
      headers,
      concurrency: options.queryConcurrency,
      durationMs: options.queryDurationSeconds * 1000,
    });
    const summary = summarizeLoad(load);
    const target = run.targets[0];
    const explain =
      target === undefined
        ? undefined
        : await explainHistoryRead(db, {
            step,
            seriesId: target.seriesId,
            from: new Date(run.startMs),
            to: new Date(run.endMs),
          });
    report.queries.push({
      layout: run.layout,
      step,
      concurrency: options.queryConcurrency,
      points,
      ...summary,
      ...(explain === undefined ? {} : { explain }),
    });
    logProgress(
      `${run.layout} step=${step}: p50 ${summary.latency.p50Ms} ms, p95 ${summary.latency.p95Ms} ms, ` +
        `p99 ${summary.latency.p99Ms} ms, ${Math.round(summary.requestsPerSecond)} requests/s`,
    );
  }
}

async function checkAnswer(
  baseUrl: string,
  headers: Record<string, string>,
  path: string,
): Promise<number> {
  const response = await fetch(new URL(path, baseUrl), { headers });
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(`GET ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { points?: unknown[] };
  return body.points?.length ?? 0;
}

async function startApi(
  databaseUrl: string,
  logDir: string,
  cleanup: Cleanup,
  name: string,
): Promise<BenchProcess> {
  const port = await getFreePort();
  const proc = await startHttpProcess({
    name,
    ...monitorCommand('source', ['api']),
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
    },
    logDir,
    port,
    readyPath: '/healthz',
  });
  cleanup.add(name, () => proc.stop());
  return proc;
}

function engineOption(value: string | undefined): Options['engine'] {
  if (value === 'timescale' || value === 'postgres') return value;
  throw new Error(`--engine must be timescale or postgres, not ${String(value)}`);
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  return (await timedValue(work)).seconds;
}

await runBench({
  name: 'storage',
  usage,
  defaults: {
    hosts: '1000',
    hours: '24',
    'interval-seconds': '30',
    seed: '25',
    connections: '2',
    'points-per-batch': '2',
    'query-concurrency': '4',
    'query-duration-seconds': '15',
    'jitter-ms': '0',
    engine: 'timescale',
    'victoria-metrics': victoriaMetricsBinary,
  },
  parseOptions: (values): Options => {
    const options: Options = {
      hosts: integerOption('hosts', values.hosts),
      hours: integerOption('hours', values.hours, 2, 24 * 7),
      intervalSeconds: integerOption('interval-seconds', values['interval-seconds'], 1, 3600),
      seed: integerOption('seed', values.seed, 0),
      connections: integerOption('connections', values.connections, 1, 16),
      pointsPerBatch: integerOption('points-per-batch', values['points-per-batch']),
      queryConcurrency: integerOption('query-concurrency', values['query-concurrency']),
      queryDurationSeconds: integerOption(
        'query-duration-seconds',
        values['query-duration-seconds'],
      ),
      jitterMs: integerOption('jitter-ms', values['jitter-ms'], 0, 1000),
      engine: engineOption(values.engine),
      victoriaMetrics: values['victoria-metrics'],
    };
    if ((options.hours * 3600) % options.intervalSeconds !== 0)
      throw new Error('--interval-seconds must divide the history into whole points');
    return options;
  },
  createReport: (options) => ({
    settings: {
      hosts: options.hosts,
      metrics: [...storageMetricNames],
      pointsPerSeries: (options.hours * 3600) / options.intervalSeconds,
      intervalSeconds: options.intervalSeconds,
      jitterMs: options.jitterMs,
      engine: options.engine,
      seed: options.seed,
      queryConcurrency: options.queryConcurrency,
      queryDurationSeconds: options.queryDurationSeconds,
      victoriaMetrics: {
        binary: options.victoriaMetrics,
        version: victoriaMetricsVersion(options.victoriaMetrics),
      },
    },
    load: {},
    layouts: [],
    queries: [],
  }),
  start,
  migrate: migrateTarget,
  measure,
  format: formatStorageReport,
});
