/**
 * `npm run bench:dashboard`: dashboards refreshing while samples arrive, ours against
 * Prometheus 2.42 on the same samples in the same run (issue 57, point 3;
 * docs/benchmarks/promql.md, "Dashboards").
 *
 * 1. The storage bench's fleet (storage-fleet.ts): 200 hosts × 10 metrics at 15 s by default,
 *    with scrape jitter, over 25 hours of history (a day's window and the ranges its functions
 *    read before it) and the minutes the run lasts.
 * 2. The history goes to Prometheus by remote write and to ours through the writer's storage
 *    path (sample store, binary COPY) into TimescaleDB, compressed and consolidated as the
 *    shipped jobs would have it by now; `monitor api` runs over it, with its shipped defaults
 *    (the range query cache in process, PROMQL_CACHE_SETTLED_MS 10 minutes).
 * 3. Every `--refresh-seconds` for `--minutes`: the fleet's newest points (their scrape time
 *    reached) go to both and are acknowledged, then three dashboards of the same ten panels,
 *    over the last 1 h (15 s step), 6 h (30 s) and 24 h (2 min), each range aligned to its step
 *    as Grafana's Prometheus data source aligns it, ask every panel of both sides, alternately,
 *    one query at a time. Every pair of answers is compared (series, times, values within 1e-9
 *    relative); latencies are the client's, HTTP included.
 *
 * The first refresh opens the dashboards: nothing is cached yet. It is reported apart, and the
 * p99 that counts is the refreshes'.
 */
import { performance } from 'node:perf_hooks';
import { createApiKeyStore, createOrgStore, createSampleStore } from '@monitor/db';
import { vacuumAnalyze } from '@monitor/db/bench';
import { getFreePort, startPrometheus } from '@monitor/testkit';
import protobuf from 'protobufjs';
import snappy from 'snappy';
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
import { compareAnswers, compressAsThePoliciesWould, rangeQuery } from './promql-answers.js';
import { remoteWriteFleet } from './promql-prometheus-load.js';
import { formatMachine, formatNotes, int, ms } from './report-text.js';
import type { StorageFleet } from './storage-fleet.js';
import { createStorageFleet } from './storage-fleet.js';
import { hostSamples, loadFleet } from './storage-load.js';

type Options = {
  hosts: number;
  minutes: number;
  refreshSeconds: number;
  seed: number;
  connections: number;
};

/** The ten panels of each dashboard: what a host-fleet overview asks. */
const panels = [
  'sum by (region) (rate(net_received_bytes_total[5m]))',
  'sum by (region) (rate(net_sent_bytes_total[5m]))',
  'avg by (region) (cpu_percent)',
  'max by (region) (memory_percent)',
  'quantile by (region) (0.9, load_1m)',
  'count by (region) (disk_used_percent > 50)',
  'sum(rate(disk_written_bytes_total[5m])) / sum(rate(net_received_bytes_total[5m]))',
  'avg by (environment) (avg_over_time(memory_used_bytes[10m]))',
  'sum by (role) (increase(cpu_seconds_total[1h]))',
  'min by (region) (processes)',
] as const;

/** Each dashboard's window and step (Grafana's for a panel some 700 px wide). */
const dashboards = [
  { name: '1 h', rangeMs: 3_600_000, stepMs: 15_000 },
  { name: '6 h', rangeMs: 6 * 3_600_000, stepMs: 30_000 },
  { name: '24 h', rangeMs: 24 * 3_600_000, stepMs: 120_000 },
] as const;

/** The history before the run: the longest window and the longest range its panels read. */
const historyMs = 25 * 3_600_000;
const intervalMs = 15_000;

type Latencies = { ours: LatencySummary; prometheus: LatencySummary };

type DashboardBenchFields = {
  settings: Options & { samples: number; panels: readonly string[]; timescaledb?: string };
  load: { oursSeconds?: number; prometheusSeconds?: number };
  /** Refreshes run, and the pairs of answers compared. */
  refreshes?: number;
  check?: { answers: number; differing: number; differences: string[] };
  /** The first refresh: the dashboards opening, nothing cached. */
  opening?: Latencies;
  /** Every refresh after it, all dashboards, and each dashboard apart. */
  refreshed?: Latencies & { byDashboard: Record<string, Latencies> };
};

type DashboardBenchReport = ReportBase & DashboardBenchFields;

const usage = `Usage: npm run bench:dashboard -- [options]
  --hosts N              hosts in the fleet (default 200), 10 metrics each, 5 regions
  --minutes N            how long the dashboards refresh (default 10)
  --refresh-seconds N    between refreshes, and between the fleet's new points (default 15)
  --seed N               the fleet's values (default 57)
  --connections N        our history load: sample stores writing side by side (default 2)
  --out FILE             JSON results (default bench-results/dashboard-<iso date>.json)
Needs TimescaleDB for the machine's PostgreSQL and Debian's prometheus (2.42).`;

type Seeded = {
  prometheus: Awaited<ReturnType<typeof startPrometheus>>;
  key: string;
  orgId: string;
  fleet: StorageFleet;
  /** The fleet's first point not loaded yet. */
  nextPoint: number;
};

async function seed(
  target: TimescaleDatabase,
  { options, report, cleanup }: BenchContext<Options, DashboardBenchFields>,
): Promise<Seeded> {
  const { db } = target;
  const nowMs = Math.floor(Date.now() / intervalMs) * intervalMs;
  const historyPoints = historyMs / intervalMs;
  // Points for the run too, and a refresh's worth more: each is sent once its time is reached.
  const livePoints = Math.ceil((options.minutes * 60_000) / intervalMs) + 8;
  const fleet = createStorageFleet({
    hostCount: options.hosts,
    pointsPerSeries: historyPoints + livePoints,
    intervalMs,
    startMs: nowMs - historyMs,
    seed: options.seed,
    jitterMs: 1500,
  });
  report.settings.samples = options.hosts * 10 * historyPoints;
  // The history alone: a fleet of the same values cut before now.
  const history: StorageFleet = {
    ...fleet,
    pointsPerSeries: historyPoints,
    values: cutValues(fleet, historyPoints),
  };

  const prometheus = await startPrometheus({ scrapeTargets: [], remoteWriteReceiver: true });
  cleanup.add('prometheus', () => prometheus.stop());
  logProgress(`remote-writing ${report.settings.samples} samples to Prometheus`);
  let started = performance.now();
  await remoteWriteFleet(prometheus.url, history, () => undefined);
  report.load.prometheusSeconds = (performance.now() - started) / 1000;

  const org = await createOrgStore(db).createOrganization('bench-dashboard');
  const { key } = await createApiKeyStore(db).createKey({
    orgId: org.id,
    name: 'bench',
    scopes: ['read'],
  });
  logProgress(`loading ${report.settings.samples} samples through the sample store`);
  started = performance.now();
  const loaded = await loadFleet(db, history, {
    orgId: org.id,
    connections: options.connections,
    pointsPerBatch: 4,
    progress: () => undefined,
  });
  if (loaded.samplesWritten !== report.settings.samples) {
    throw new Error(`stored ${loaded.samplesWritten} of ${report.settings.samples} samples`);
  }
  report.load.oursSeconds = (performance.now() - started) / 1000;
  await compressAsThePoliciesWould(db, nowMs - historyMs, nowMs);
  await vacuumAnalyze(db);
  return { prometheus, key, orgId: org.id, fleet, nextPoint: historyPoints };
}

/** The values of the fleet's first `points` points of every series. */
function cutValues(fleet: StorageFleet, points: number): Float64Array {
  const out = new Float64Array(fleet.seriesCount * points);
  for (let s = 0; s < fleet.seriesCount; s++) {
    out.set(
      fleet.values.subarray(s * fleet.pointsPerSeries, s * fleet.pointsPerSeries + points),
      s * points,
    );
  }
  return out;
}

/** One point of every series of the fleet as a remote-write request. */
function remoteWritePoint(fleet: StorageFleet, point: number): Buffer {
  const writer = protobuf.Writer.create();
  fleet.hosts.forEach((host, h) => {
    fleet.metrics.forEach((metric, m) => {
      writer.uint32((1 << 3) | 2).fork();
      const labels = Object.entries({ ...host.tags, host: host.name, __name__: metric.name }).sort(
        ([a], [b]) => (a < b ? -1 : a > b ? 1 : 0),
      );
      for (const [name, value] of labels) {
        writer.uint32(10).fork().uint32(10).string(name).uint32(18).string(value).ldelim();
      }
      const value = fleet.values[(h * fleet.metrics.length + m) * fleet.pointsPerSeries + point]!;
      writer.uint32(18).fork().uint32(9).double(value).uint32(16).int64(fleet.timeOf(point, h));
      writer.ldelim().ldelim();
    });
  });
  return snappy.compressSync(Buffer.from(writer.finish()));
}

/** Sends the fleet's points whose every scrape time has passed to both, acknowledged. */
async function sendDuePoints(
  store: ReturnType<typeof createSampleStore>,
  seeded: Seeded,
  prometheusUrl: string,
): Promise<void> {
  const { fleet } = seeded;
  // A point is due once its latest jittered scrape (1.5 s past the grid) has happened.
  while (fleet.timeOf(seeded.nextPoint) + 1500 <= Date.now()) {
    const point = seeded.nextPoint++;
    const samples = hostSamples(fleet, {
      orgId: seeded.orgId,
      firstHost: 0,
      endHost: fleet.hosts.length,
      firstPoint: point,
      endPoint: point + 1,
    });
    const [response] = await Promise.all([
      fetch(`${prometheusUrl}/api/v1/write`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-protobuf',
          'Content-Encoding': 'snappy',
          'X-Prometheus-Remote-Write-Version': '0.1.0',
        },
        body: remoteWritePoint(fleet, point),
      }),
      store.writeBatch({ samples }),
    ]);
    if (response.status !== 204) {
      throw new Error(`Prometheus answered ${response.status}: ${await response.text()}`);
    }
  }
}

async function measure(
  target: TimescaleDatabase,
  { options, report, cleanup, processes }: BenchContext<Options, DashboardBenchFields>,
  seeded: Seeded,
): Promise<void> {
  const port = await getFreePort();
  const command = monitorCommand('source', ['api']);
  const api = await startHttpProcess({
    name: 'api',
    ...command,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '',
      PORT: String(port),
      DATABASE_URL: target.url,
      LOG_LEVEL: 'warn',
    },
    logDir: report.logDir,
    port,
    readyPath: '/healthz',
  });
  cleanup.add('api', () => api.stop());
  processes.push(api);

  const store = createSampleStore(target.db);
  const ours: number[][] = dashboards.map(() => []);
  const theirs: number[][] = dashboards.map(() => []);
  const opening = { ours: [] as number[], theirs: [] as number[] };
  const check = { answers: 0, differing: 0, differences: [] as string[] };
  const refreshes = Math.floor((options.minutes * 60) / options.refreshSeconds);
  const firstRefreshMs = Date.now();
  for (let refresh = 0; refresh < refreshes; refresh++) {
    const dueMs = firstRefreshMs + refresh * options.refreshSeconds * 1000;
    if (Date.now() < dueMs) await new Promise((resolve) => setTimeout(resolve, dueMs - Date.now()));
    await sendDuePoints(store, seeded, seeded.prometheus.url);
    const nowMs = Date.now();
    for (const [d, dashboard] of dashboards.entries()) {
      // Grafana aligns the range to the step.
      const endMs = Math.floor(nowMs / dashboard.stepMs) * dashboard.stepMs;
      const params = (query: string) => ({
        query,
        start: String((endMs - dashboard.rangeMs) / 1000),
        end: String(endMs / 1000),
        step: String(dashboard.stepMs / 1000),
      });
      for (const panel of panels) {
        let t = performance.now();
        const want = await rangeQuery(
          `${seeded.prometheus.url}/api/v1/query_range`,
          {},
          params(panel),
        );
        const theirsMs = performance.now() - t;
        t = performance.now();
        const got = await rangeQuery(
          `${api.baseUrl}/prometheus/api/v1/query_range`,
          { 'X-API-Key': seeded.key },
          params(panel),
        );
        const oursMs = performance.now() - t;
        if (refresh === 0) {
          opening.ours.push(oursMs);
          opening.theirs.push(theirsMs);
        } else {
          ours[d]!.push(oursMs);
          theirs[d]!.push(theirsMs);
        }
        const compared = compareAnswers(want, got);
        check.answers++;
        if (compared.series === 0)
          check.differences.push(`${panel} (${dashboard.name}): no series`);
        if (compared.differences.length > 0) {
          check.differing++;
          if (check.differences.length < 10) {
            check.differences.push(`${panel} (${dashboard.name}): ${compared.differences[0]}`);
          }
        }
      }
    }
    if (refresh % 4 === 0) logProgress(`  refresh ${refresh + 1} of ${refreshes}`);
  }
  report.refreshes = refreshes;
  report.check = check;
  const summarize = (o: number[], t: number[]): Latencies => ({
    ours: summarizeLatencies(Float64Array.from(o)),
    prometheus: summarizeLatencies(Float64Array.from(t)),
  });
  report.opening = summarize(opening.ours, opening.theirs);
  report.refreshed = {
    ...summarize(ours.flat(), theirs.flat()),
    byDashboard: Object.fromEntries(
      dashboards.map((dashboard, d) => [dashboard.name, summarize(ours[d]!, theirs[d]!)]),
    ),
  };
  if (check.differing > 0) report.notes.push(`${check.differing} answers differ`);
  const metrics = await (await fetch(`${api.baseUrl}/metrics`)).text();
  for (const line of metrics.split('\n')) {
    if (line.startsWith('monitor_promql_cache_')) report.notes.push(`api: ${line}`);
  }
  await api.stop();
}

function formatReport(report: DashboardBenchReport): string {
  const s = report.settings;
  const lines = [
    `Dashboards refreshing against Prometheus 2.42, ${report.date}`,
    formatMachine(report.machine),
    `${int(s.hosts)} hosts × 10 metrics at 15 s (jitter ±1.5 s), 25 h of history = ${int(s.samples)} samples, new points every 15 s; TimescaleDB ${s.timescaledb ?? '?'}`,
    `3 dashboards (1 h at 15 s, 6 h at 30 s, 24 h at 2 min) × ${panels.length} panels, refreshed every ${s.refreshSeconds} s for ${s.minutes} min (${report.refreshes ?? 0} refreshes)`,
    `load: Prometheus (remote write) ${report.load.prometheusSeconds?.toFixed(1) ?? '-'} s, ours (sample store) ${report.load.oursSeconds?.toFixed(1) ?? '-'} s`,
  ];
  if (report.check !== undefined) {
    lines.push(
      `same answers: ${report.check.differing === 0 ? 'yes' : 'NO'} (${report.check.answers} pairs compared, ${report.check.differing} differ)`,
      ...report.check.differences.map((d) => `  ${d}`),
    );
  }
  const header = `  ${''.padEnd(22)} ${'p50 ms'.padStart(9)} ${'p95 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'max ms'.padStart(9)}`;
  const row = (name: string, l: LatencySummary) =>
    `  ${name.padEnd(22)} ${ms(l.p50Ms).padStart(9)} ${ms(l.p95Ms).padStart(9)} ${ms(l.p99Ms).padStart(9)} ${ms(l.maxMs).padStart(9)}   (${l.count} queries)`;
  const pair = (label: string, l: Latencies) => [
    row(`ours, ${label}`, l.ours),
    row(`Prometheus, ${label}`, l.prometheus),
  ];
  if (report.refreshed !== undefined) {
    const r = report.refreshed;
    lines.push('', header, ...pair('refreshes', r));
    for (const [name, l] of Object.entries(r.byDashboard)) lines.push(...pair(name, l));
    lines.push(
      `  target p99 ≤ 0.5 × Prometheus': ${r.ours.p99Ms <= 0.5 * r.prometheus.p99Ms ? 'met' : 'not met'} (${(r.ours.p99Ms / r.prometheus.p99Ms).toFixed(2)} ×)`,
    );
  }
  if (report.opening !== undefined) {
    lines.push(
      '',
      'the dashboards opening (first refresh, nothing cached):',
      ...pair('opening', report.opening),
    );
  }
  lines.push(...formatNotes(report));
  return lines.join('\n');
}

await runBench({
  name: 'dashboard',
  usage,
  defaults: {
    hosts: '200',
    minutes: '10',
    'refresh-seconds': '15',
    seed: '57',
    connections: '2',
  },
  parseOptions: (values): Options => ({
    hosts: integerOption('hosts', values.hosts),
    minutes: integerOption('minutes', values.minutes, 1, 120),
    refreshSeconds: integerOption('refresh-seconds', values['refresh-seconds'], 1, 600),
    seed: integerOption('seed', values.seed, 0),
    connections: integerOption('connections', values.connections, 1, 16),
  }),
  createReport: (settings): DashboardBenchFields => ({
    settings: { ...settings, samples: 0, panels },
    load: {},
  }),
  start: ({ report, cleanup, options }) =>
    startTimescaleDatabase({
      logDir: report.logDir,
      cleanup,
      prefix: 'bench_dashboard',
      maxConnections: options.connections + 2,
      applicationName: 'monitor-bench-dashboard',
    }),
  migrate: (target, { report }) => migrateForQueries(target, report.settings),
  seed,
  measure,
  format: formatReport,
});
