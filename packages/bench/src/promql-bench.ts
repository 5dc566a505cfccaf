/**
 * `npm run bench:promql`: a PromQL range query over a fleet's history, ours against Prometheus
 * 2.42 on the same samples in the same run (issue 27, item 6; docs/benchmarks/promql.md, "PromQL").
 *
 * 1. The storage bench's fleet (storage-fleet.ts): 1,000 hosts × 10 metrics × 6 h at 15 s by
 *    default (14.4 M samples), every host tagged with one of five regions.
 * 2. Prometheus (Debian's 2.42, `--web.enable-remote-write-receiver`): every sample through
 *    remote write, in time order.
 * 3. Ours: PostgreSQL 15 with TimescaleDB (timescale-server.ts), `migrate` in TimescaleDB mode,
 *    the same samples through the writer's storage path (sample store, binary COPY), the
 *    policies' jobs paused; then what the shipped jobs would have compressed and consolidated
 *    by the window's end (head chunks ended a minute before, storage/timescale/head-chunks.ts)
 *    is, `vacuum analyze`, and `monitor api` runs over it. By default the window ends just
 *    before a compressed chunk's 6-hour boundary (`--window worst`), so that the newest data
 *    (a head chunk, and the samples merged from head chunks since the growing chunk was last
 *    consolidated) holds the most of it, whatever the hour the bench runs at.
 * 4. The query, `sum by (region) (rate(<counter>[5m]))` over the whole history at a 60 s step,
 *    answered once by both and compared (same label sets and times, values within 1e-9
 *    relative), then asked `--iterations` times of each, alternately, one at a time, after
 *    `--warmups` unmeasured ones: p50/p95/p99 from the client's side, HTTP included. 200 by
 *    default: the p99 of 40 (the default until 2026-11-26) was each side's slowest query.
 * 5. `--shards N` (issue 59, item 6): the same samples over N sample shards on the same server,
 *    each host on its partition's shard, the api reading them all: run it beside a run without
 *    to see what a fan-out read costs against one database, each against Prometheus.
 */
import { performance } from 'node:perf_hooks';
import type { Database } from '@monitor/db';
import { listRawChunks, vacuumAnalyze } from '@monitor/db/bench';
import { partitionForKey } from '@monitor/bus';
import { createApiKeyStore, createDatabase, createOrgStore, compressedChunkMs } from '@monitor/db';
import { createTestDatabase, getFreePort, startPrometheus } from '@monitor/testkit';
import { startHttpProcess } from './bench-process.js';
import { integerOption } from './harness/command-line.js';
import { logProgress } from './harness/progress.js';
import type { ReportBase } from './harness/report.js';
import type { BenchContext } from './harness/run-bench.js';
import { runBench } from './harness/run-bench.js';
import type { TimescaleDatabase } from './harness/timescale-database.js';
import { migrateForQueries, startTimescaleDatabase } from './harness/timescale-database.js';
import type { LatencySummary } from './latency-summary.js';
import { summarizeLatencies } from './latency-summary.js';
import { monitorCommand } from './monitor-stack.js';
import { remoteWriteFleet } from './promql-prometheus-load.js';
import type { AnswerCheck } from './promql-answers.js';
import { compareAnswers, compressAsThePoliciesWould, rangeQuery } from './promql-answers.js';
import { formatMachine, formatNotes, int, ms } from './report-text.js';
import { createStorageFleet } from './storage-fleet.js';
import { loadFleet } from './storage-load.js';

type Options = {
  hosts: number;
  hours: number;
  intervalSeconds: number;
  stepSeconds: number;
  metric: string;
  seed: number;
  iterations: number;
  warmups: number;
  connections: number;
  profile: boolean;
  window: 'worst' | 'now';
  scenario: 'single' | 'wide';
  shards: number;
};

/** The bench's database, and with `--shards` more than 1 the other shards (s1, …) beside it. */
type PromqlTarget = TimescaleDatabase & { shards: { url: string; db: Database }[] };

/**
 * `--scenario wide` (issue 57, point 1): aggregations over every series of the fleet, or whole
 * metrics of it, over the newest 1 h (15 s step) and 6 h (60 s), and at its end as instant
 * queries, asked in turn, each of Prometheus then ours.
 */
const wideExpressions = [
  'count by (__name__) ({__name__=~".+"})',
  'max by (region) ({__name__=~".+_percent"})',
  'sum without (host, role, environment) ({__name__=~".+_total"})',
  'sum by (region) (rate(net_received_bytes_total[5m]))',
  'sum by (region) (irate(cpu_seconds_total[1m]))',
  'min by (environment) (memory_percent)',
  'sum by (region) (rate(net_sent_bytes_total[5m])) / on (region) sum by (region) (rate(net_received_bytes_total[5m]))',
  'quantile by (region) (0.99, load_1m)',
  'avg by (role) (avg_over_time(disk_used_percent[10m]))',
] as const;
const wideWindows = [
  { name: '1 h', rangeMs: 3_600_000, stepMs: 15_000 },
  { name: '6 h', rangeMs: 6 * 3_600_000, stepMs: 60_000 },
  { name: 'instant', rangeMs: 0, stepMs: 0 },
] as const;

type PromqlBenchFields = {
  settings: Omit<Options, 'profile'> & {
    query: string;
    samples: number;
    windowStart?: string;
    windowEnd?: string;
    timescaledb?: string;
  };
  load: { oursSeconds?: number; prometheusSeconds?: number };
  /**
   * Our raw chunks as the shipped compression policy leaves them at the time of the queries:
   * how many it compressed, and the share of the queried window they hold.
   */
  compression?: { chunks: number; compressedChunks: number; compressedShare: number };
  /** Whether both answered the same: series, times, values within 1e-9 relative. */
  check?: { series: number; points: number; differences: string[] };
  /** One measurement per layout of our samples: as shipped, then with the proposed index. */
  runs: {
    layout: string;
    /** Seconds to build the layout's change (the index and a vacuum), when it has one. */
    setupSeconds?: number;
    ours: LatencySummary;
    prometheus: LatencySummary;
  }[];
  /** Where `node --cpu-prof` wrote the api's profile, when asked for. */
  profileDir?: string;
  /** `--scenario wide`: each query's medians, and whether both answered alike. */
  wide?: {
    query: string;
    window: string;
    series: number;
    same: boolean;
    oursP50Ms: number;
    prometheusP50Ms: number;
  }[];
};

type PromqlBenchReport = ReportBase & PromqlBenchFields;

const usage = `Usage: npm run bench:promql -- [options]
  --hosts N              hosts in the fleet (default 1000), 10 metrics each, 5 regions
  --hours N              history per series (default 6)
  --interval-seconds N   between points (default 15)
  --step-seconds N       the range query's step (default 60)
  --metric NAME          the counter under rate() (default net_received_bytes_total)
  --seed N               the fleet's values (default 27)
  --iterations N         measured queries per side (default 200: a nearest-rank p99 of fewer
                         than 100 is the slowest query)
  --warmups N            unmeasured queries per side first (default 3)
  --connections N        our load: sample stores writing side by side (default 2)
  --window worst|now     where the queried window ends (default worst): a minute before the
                         newest raw chunk boundary, when the chunk not yet compressed holds
                         nearly all of it; or now, whatever share the hour leaves
  --profile yes|no       run the api under node --cpu-prof (default no)
  --scenario single|wide single: the one query above; wide: ${wideExpressions.length} aggregations over
                         the whole fleet, over 1 h, 6 h and as instant queries at the window's
                         end, asked in turn (the iterations are rounds of all of them)
  --shards N             sample shards (default 1): the bench's database is shard s0 and the
                         control database, N - 1 more on the same server; each host's samples
                         on the shard of its partition (6, p % N), the api over all of them
  --out FILE             JSON results (default bench-results/promql-<iso date>.json)
Needs TimescaleDB for the machine's PostgreSQL and Debian's prometheus (2.42).`;

/** The raw chunks of the window [startMs, endMs): how many, how many compressed, their share. */
async function compressionOf(
  db: Database,
  startMs: number,
  endMs: number,
): Promise<NonNullable<PromqlBenchFields['compression']>> {
  const chunks = await listRawChunks(db);
  const overlapMs = (chunk: { startMs: number; endMs: number }): number =>
    Math.max(0, Math.min(endMs, chunk.endMs) - Math.max(startMs, chunk.startMs));
  const compressed = chunks.filter((chunk) => chunk.compressed);
  return {
    chunks: chunks.length,
    compressedChunks: compressed.length,
    compressedShare:
      compressed.reduce((sum, chunk) => sum + overlapMs(chunk), 0) / (endMs - startMs),
  };
}

/**
 * The queried window, `hours` long, as its end falls against the compressed chunks. `now`:
 * ending at the current minute, so what the jobs have consolidated by then depends on the hour
 * of the day. `worst`: ending a minute before the newest compressed chunk's boundary, as if it
 * were now, when the most samples sit in the head and in merged head-chunk batches: the figure
 * to compare.
 */
function pickWindow(
  options: Options,
  chunkIntervalMs: number,
): { startMs: number; endMs: number; nowMs: number } {
  const intervalMs = options.intervalSeconds * 1000;
  const nowMs = Math.floor(Date.now() / 60_000) * 60_000;
  const endMs =
    options.window === 'now'
      ? nowMs
      : Math.floor(nowMs / chunkIntervalMs) * chunkIntervalMs - 60_000;
  const pointsPerSeries = (options.hours * 3600) / options.intervalSeconds;
  return {
    startMs: endMs - pointsPerSeries * intervalMs,
    endMs,
    nowMs: options.window === 'now' ? nowMs : endMs,
  };
}

type Seeded = {
  prometheus: Awaited<ReturnType<typeof startPrometheus>>;
  key: string;
  startMs: number;
  endMs: number;
};

async function seed(
  target: PromqlTarget,
  { options, report, cleanup }: BenchContext<Options, PromqlBenchFields>,
): Promise<Seeded> {
  const { db } = target;
  const shardDbs = [db, ...target.shards.map((shard) => shard.db)];
  const intervalMs = options.intervalSeconds * 1000;
  const pointsPerSeries = (options.hours * 3600) / options.intervalSeconds;
  const { startMs, endMs, nowMs } = pickWindow(options, compressedChunkMs);
  report.settings.windowStart = new Date(startMs).toISOString();
  report.settings.windowEnd = new Date(endMs).toISOString();
  logProgress(`generating ${options.hosts} hosts × ${pointsPerSeries} points`);
  const fleet = createStorageFleet({
    hostCount: options.hosts,
    pointsPerSeries,
    intervalMs,
    startMs,
    seed: options.seed,
  });
  report.settings.samples = fleet.sampleCount;
  if (!fleet.metrics.some((m) => m.name === options.metric && m.kind === 'counter')) {
    throw new Error(`--metric ${options.metric} is not one of the fleet's counters`);
  }

  // Prometheus first: its load is the quicker one, and it then sits idle until measured.
  const prometheus = await startPrometheus({ scrapeTargets: [], remoteWriteReceiver: true });
  cleanup.add('prometheus', () => prometheus.stop());
  logProgress(`remote-writing ${fleet.sampleCount} samples to Prometheus`);
  let next = 0;
  const prometheusStarted = performance.now();
  await remoteWriteFleet(prometheus.url, fleet, (sent) => {
    if (sent < next) return;
    next += 2_000_000;
    logProgress(`  ${sent} samples sent to Prometheus`);
  });
  report.load.prometheusSeconds = (performance.now() - prometheusStarted) / 1000;

  const org = await createOrgStore(db).createOrganization('bench-promql');
  const { key } = await createApiKeyStore(db).createKey({
    orgId: org.id,
    name: 'bench',
    scopes: ['read'],
  });
  logProgress(`loading ${fleet.sampleCount} samples through the sample store`);
  next = 0;
  const loaded = await loadFleet(db, fleet, {
    orgId: org.id,
    connections: options.connections,
    pointsPerBatch: 4,
    // As a writer stores them: each host on the shard of its partition (6 of them, p % N).
    ...(shardDbs.length === 1
      ? {}
      : {
          shardOf: (host: string) =>
            shardDbs[partitionForKey(`${org.id}:${host}`, 6) % shardDbs.length] as Database,
        }),
    progress: (written) => {
      if (written < next) return;
      next += 2_000_000;
      logProgress(`  ${written} samples stored`);
    },
  });
  if (loaded.samplesWritten !== fleet.sampleCount)
    throw new Error(`stored ${loaded.samplesWritten} of ${fleet.sampleCount} samples`);
  report.load.oursSeconds = loaded.seconds;
  for (const shard of shardDbs) await compressAsThePoliciesWould(shard, startMs, nowMs);
  report.compression = await compressionOf(db, startMs, endMs);
  for (const shard of shardDbs) await vacuumAnalyze(shard);
  return { prometheus, key, startMs, endMs };
}

async function measure(
  target: PromqlTarget,
  { options, report, cleanup, processes }: BenchContext<Options, PromqlBenchFields>,
  { prometheus, key, startMs, endMs }: Seeded,
): Promise<void> {
  const { logDir } = report;
  const port = await getFreePort();
  const command = monitorCommand('source', ['api']);
  const api = await startHttpProcess({
    name: 'api',
    ...command,
    // Node takes --cpu-prof on its command line only, not in NODE_OPTIONS.
    args: options.profile
      ? ['--cpu-prof', `--cpu-prof-dir=${logDir}`, ...command.args]
      : command.args,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '',
      PORT: String(port),
      DATABASE_URL: target.url,
      ...(target.shards.length === 0
        ? {}
        : {
            SAMPLE_SHARDS: JSON.stringify(
              [target.url, ...target.shards.map((shard) => shard.url)].map((url, i) => ({
                name: `s${i}`,
                url,
              })),
            ),
          }),
      LOG_LEVEL: 'warn',
      // The engine is measured, not the cache: the window is past its settled horizon.
      PROMQL_CACHE_MAX_BYTES: '0',
    },
    logDir,
    port,
    readyPath: '/healthz',
  });
  cleanup.add('api', () => api.stop());
  processes.push(api);
  if (options.profile) report.profileDir = logDir;
  if (options.scenario === 'wide') {
    await measureWide(api.baseUrl, { options, report }, { prometheus, key, startMs, endMs });
    await api.stop();
    return;
  }

  const params = {
    query: report.settings.query,
    start: String(startMs / 1000),
    end: String(endMs / 1000),
    step: String(options.stepSeconds),
  };
  const ours = () =>
    rangeQuery(`${api.baseUrl}/prometheus/api/v1/query_range`, { 'X-API-Key': key }, params);
  const theirs = () => rangeQuery(`${prometheus.url}/api/v1/query_range`, {}, params);
  logProgress('checking that both answer the same');
  report.check = compareAnswers(await theirs(), await ours());
  if (report.check.series === 0) throw new Error('Prometheus answered no series');
  if (report.check.differences.length > 0) {
    report.notes.push(`the answers differ: ${report.check.differences.slice(0, 3).join('; ')}`);
  }
  for (let i = 0; i < options.warmups; i++) {
    await theirs();
    await ours();
  }
  logProgress(`measuring ${options.iterations} queries per side, alternately`);
  const oursMs = new Float64Array(options.iterations);
  const theirsMs = new Float64Array(options.iterations);
  for (let i = 0; i < options.iterations; i++) {
    let t = performance.now();
    await theirs();
    theirsMs[i] = performance.now() - t;
    t = performance.now();
    await ours();
    oursMs[i] = performance.now() - t;
  }
  const run = {
    layout: 'as shipped',
    ours: summarizeLatencies(oursMs),
    prometheus: summarizeLatencies(theirsMs),
  };
  report.runs.push(run);
  logProgress(`  p99 ours ${ms(run.ours.p99Ms)} ms, Prometheus ${ms(run.prometheus.p99Ms)} ms`);
  // The api writes its profile on exit.
  await api.stop();
}

/** The wide scenario: every expression over every window, in turn, `iterations` rounds. */
async function measureWide(
  apiUrl: string,
  { options, report }: Pick<BenchContext<Options, PromqlBenchFields>, 'options' | 'report'>,
  { prometheus, key, endMs }: Seeded,
): Promise<void> {
  const paramsOf = (query: string, window: (typeof wideWindows)[number]): Record<string, string> =>
    window.rangeMs === 0
      ? { query, time: String(endMs / 1000) }
      : {
          query,
          start: String((endMs - window.rangeMs) / 1000),
          end: String(endMs / 1000),
          step: String(window.stepMs / 1000),
        };
  const queries = wideWindows.flatMap((window) =>
    wideExpressions.map((query) => ({
      query,
      window: window.name,
      path: window.rangeMs === 0 ? '/api/v1/query' : '/api/v1/query_range',
      params: paramsOf(query, window),
    })),
  );
  const ours = (q: (typeof queries)[number]) =>
    rangeQuery(`${apiUrl}/prometheus${q.path}`, { 'X-API-Key': key }, q.params);
  const theirs = (q: (typeof queries)[number]) =>
    rangeQuery(`${prometheus.url}${q.path}`, {}, q.params);
  logProgress(`checking that both answer the same, ${queries.length} queries`);
  const checks: AnswerCheck[] = [];
  for (const q of queries) checks.push(compareAnswers(await theirs(q), await ours(q)));
  for (let i = 0; i < options.warmups; i++) {
    for (const q of queries) {
      await theirs(q);
      await ours(q);
    }
  }
  logProgress(`measuring ${options.iterations} rounds of ${queries.length} queries per side`);
  const oursMs = queries.map(() => new Float64Array(options.iterations));
  const theirsMs = queries.map(() => new Float64Array(options.iterations));
  for (let i = 0; i < options.iterations; i++) {
    for (const [n, q] of queries.entries()) {
      let t = performance.now();
      await theirs(q);
      theirsMs[n]![i] = performance.now() - t;
      t = performance.now();
      await ours(q);
      oursMs[n]![i] = performance.now() - t;
    }
  }
  const all = (arrays: Float64Array[]) => {
    const out = new Float64Array(arrays.length * options.iterations);
    arrays.forEach((a, n) => out.set(a, n * options.iterations));
    return out;
  };
  report.runs.push({
    layout: 'as shipped, wide',
    ours: summarizeLatencies(all(oursMs)),
    prometheus: summarizeLatencies(all(theirsMs)),
  });
  report.wide = queries.map((q, n) => ({
    query: q.query,
    window: q.window,
    series: checks[n]!.series,
    same: checks[n]!.differences.length === 0,
    oursP50Ms: summarizeLatencies(oursMs[n]!).p50Ms,
    prometheusP50Ms: summarizeLatencies(theirsMs[n]!).p50Ms,
  }));
  const differing = checks.filter((c) => c.differences.length > 0);
  report.check = {
    series: checks.reduce((sum, c) => sum + c.series, 0),
    points: checks.reduce((sum, c) => sum + c.points, 0),
    differences: differing.flatMap((c) => c.differences.slice(0, 2)).slice(0, 20),
  };
  if (differing.length > 0)
    report.notes.push(`${differing.length} of ${queries.length} answers differ`);
}

function formatReport(report: PromqlBenchReport): string {
  const s = report.settings;
  const lines = [
    `PromQL range query against Prometheus 2.42, ${report.date}`,
    formatMachine(report.machine),
    `${int(s.hosts)} hosts × 10 metrics × ${s.hours} h at ${s.intervalSeconds} s = ${int(s.samples)} samples; TimescaleDB ${s.timescaledb ?? '?'}${s.shards > 1 ? `; ${s.shards} sample shards, the api over all of them` : ''}`,
    report.wide === undefined
      ? `query: ${s.query}, ${s.hours} h at step ${s.stepSeconds} s`
      : `queries: ${wideExpressions.length} aggregations over the fleet, each over the last 1 h at 15 s, 6 h at 60 s and as an instant query, the cache off`,
    `load: Prometheus (remote write) ${report.load.prometheusSeconds?.toFixed(1) ?? '-'} s, ours (sample store) ${report.load.oursSeconds?.toFixed(1) ?? '-'} s`,
  ];
  if (report.compression !== undefined) {
    const c = report.compression;
    lines.push(
      `compression as the shipped policy leaves it: ${c.compressedChunks} of ${c.chunks} raw chunks, ${(c.compressedShare * 100).toFixed(0)} % of the queried window`,
    );
  }
  if (report.check !== undefined) {
    lines.push(
      `same answer: ${report.check.differences.length === 0 ? 'yes' : 'NO'} (${report.check.series} series, ${int(report.check.points)} points compared)`,
    );
  }
  const row = (name: string, l: LatencySummary) =>
    `  ${name.padEnd(12)} ${ms(l.p50Ms).padStart(9)} ${ms(l.p95Ms).padStart(9)} ${ms(l.p99Ms).padStart(9)} ${ms(l.maxMs).padStart(9)}   (${l.count} queries)`;
  for (const run of report.runs) {
    lines.push(
      '',
      `our samples ${run.layout}${run.setupSeconds === undefined ? '' : ` (built in ${run.setupSeconds.toFixed(1)} s)`}:`,
      `  ${''.padEnd(12)} ${'p50 ms'.padStart(9)} ${'p95 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'max ms'.padStart(9)}`,
      row('ours', run.ours),
      row('Prometheus', run.prometheus),
      // The wide scenario's target is issue 57's (≤ 1 ×), the single query's issue 39's (≤ 2 ×).
      `  target p99 ≤ ${report.wide === undefined ? 2 : 1} × Prometheus': ${run.ours.p99Ms <= (report.wide === undefined ? 2 : 1) * run.prometheus.p99Ms ? 'met' : 'not met'} (${(run.ours.p99Ms / run.prometheus.p99Ms).toFixed(2)} ×; p50 ${(run.ours.p50Ms / run.prometheus.p50Ms).toFixed(2)} ×)`,
    );
  }
  if (report.wide !== undefined) {
    lines.push('', 'each query, p50 ms (ours against Prometheus):');
    for (const w of report.wide) {
      lines.push(
        `  ${w.window.padEnd(8)} ${ms(w.oursP50Ms).padStart(8)} ${ms(w.prometheusP50Ms).padStart(8)} ${(w.oursP50Ms / w.prometheusP50Ms).toFixed(2).padStart(6)} ×  ${w.same ? '' : 'DIFFERENT '}${w.query}`,
      );
    }
  }
  if (report.profileDir !== undefined) lines.push(`api CPU profile: ${report.profileDir}`);
  lines.push(...formatNotes(report));
  return lines.join('\n');
}

await runBench({
  name: 'promql',
  usage,
  defaults: {
    hosts: '1000',
    hours: '6',
    'interval-seconds': '15',
    'step-seconds': '60',
    metric: 'net_received_bytes_total',
    seed: '27',
    iterations: '200',
    warmups: '3',
    connections: '2',
    profile: 'no',
    window: 'worst',
    scenario: 'single',
    shards: '1',
  },
  parseOptions: (values): Options => {
    if (!['yes', 'no'].includes(values.profile)) throw new Error('--profile must be yes or no');
    if (values.window !== 'worst' && values.window !== 'now')
      throw new Error('--window must be worst or now');
    if (values.scenario !== 'single' && values.scenario !== 'wide')
      throw new Error('--scenario must be single or wide');
    const options: Options = {
      hosts: integerOption('hosts', values.hosts),
      hours: integerOption('hours', values.hours, 1, 24 * 7),
      intervalSeconds: integerOption('interval-seconds', values['interval-seconds'], 1, 3600),
      stepSeconds: integerOption('step-seconds', values['step-seconds'], 1, 86_400),
      metric: values.metric,
      seed: integerOption('seed', values.seed, 0),
      iterations: integerOption('iterations', values.iterations),
      warmups: integerOption('warmups', values.warmups, 0),
      connections: integerOption('connections', values.connections, 1, 16),
      profile: values.profile === 'yes',
      window: values.window,
      scenario: values.scenario,
      shards: integerOption('shards', values.shards, 1, 8),
    };
    if ((options.hours * 3600) % options.intervalSeconds !== 0)
      throw new Error('--interval-seconds must divide the history into whole points');
    return options;
  },
  createReport: ({ profile: _profile, ...settings }): PromqlBenchFields => ({
    settings: {
      ...settings,
      query: `sum by (region) (rate(${settings.metric}[5m]))`,
      samples: 0,
    },
    load: {},
    runs: [],
  }),
  start: async ({ report, cleanup, options }): Promise<PromqlTarget> => {
    const target = await startTimescaleDatabase({
      logDir: report.logDir,
      cleanup,
      prefix: 'bench_promql',
      maxConnections: options.connections + 1,
      applicationName: 'monitor-bench-promql',
    });
    const server = new URL(target.url);
    server.pathname = '/postgres';
    const shards = [];
    for (let i = 1; i < options.shards; i++) {
      const database = await createTestDatabase(server.toString(), `bench_promql_s${i}`);
      const db = createDatabase({ url: database.url, maxConnections: options.connections + 1 });
      cleanup.add(`shard s${i} pool`, () => db.close());
      shards.push({ url: database.url, db });
    }
    return { ...target, shards };
  },
  migrate: async (target, { report }) => {
    await migrateForQueries(target, report.settings);
    for (const shard of target.shards) {
      await migrateForQueries({ ...target, ...shard }, report.settings);
    }
  },
  seed,
  measure,
  format: formatReport,
});
