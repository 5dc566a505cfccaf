/**
 * `npm run bench:histograms`: what a native histogram costs stored, here and in Prometheus' own
 * TSDB, for the same data (issue 58, point 1; docs/benchmarks/histograms.md).
 *
 * 1. `--series` request-latency histograms (histogram-fleet.ts: schema 3, buckets appearing as
 *    they fill, a tenth of the series restarting once) scraped every 15 s for `--hours` hours,
 *    ending an hour ago.
 * 2. Ours: PostgreSQL with TimescaleDB (timescale-server.ts), migrated, the histograms written
 *    through the sample store as the writer writes them, compacted as the writer's maintenance
 *    compacts them (every 5 minutes of the data's time, then the rest, each followed by the VACUUM
 *    autovacuum would run). Reported: the chunks' bytes (`pg_column_size`, after PostgreSQL's
 *    compression) and the table's whole size (rows, index, TOAST, space left to reuse).
 * 3. Prometheus: the same histograms appended, in time order, to the tsdb package of Prometheus
 *    2.42 (`go/prometheus-tsdb-size`, run with `go run`), its head compacted into a block.
 *    Reported: the block's chunk files and its index.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { compactHistogramChunks, createSampleStore } from '@monitor/db';
import type { Database, HostSample } from '@monitor/db';
import { measureHistogramStorage, vacuumAnalyze } from '@monitor/db/bench';
import { integerOption } from './harness/command-line.js';
import { logProgress } from './harness/progress.js';
import type { ReportBase } from './harness/report.js';
import type { BenchContext } from './harness/run-bench.js';
import { runBench } from './harness/run-bench.js';
import { migrateInMode, startTimescaleDatabase } from './harness/timescale-database.js';
import type { HistogramSeries } from './histogram-fleet.js';
import { histogramFleet } from './histogram-fleet.js';

const hourMs = 3_600_000;
const intervalMs = 15_000;
const histogramTables = ['histogram_samples', 'histogram_chunks'];
/** Scrapes per write: about what one writer batch holds of a fleet this size. */
const scrapesPerBatch = 8;

type Options = { series: number; hours: number };

type Sizes = { chunkBytes: number; totalBytes: number };

type Report = {
  settings: Options & { timescaledb?: string; histograms?: number; buckets?: number };
  /** The chunks, and the newest histograms as written (the last 10 minutes) beside them. */
  ours?: Sizes & { rows: number; newest: { bytes: number; histograms: number } };
  prometheus?: { chunkBytes: number; indexBytes: number; blockBytes: number };
};

const usage = `Usage: npm run bench:histograms -- [options]
  --series N   histogram series (default 100)
  --hours N    hours of 15-second scrapes (default 12)
  --out FILE   JSON results (default bench-results/histograms-<iso date>.json)
Needs TimescaleDB for the machine's PostgreSQL and Go (for Prometheus' TSDB).`;

type Context = BenchContext<Options, Report>;
type Target = { db: Database };

async function start({ report, cleanup }: Context): Promise<Target> {
  const target = await startTimescaleDatabase({
    logDir: report.logDir,
    cleanup,
    prefix: 'bench_histograms',
    maxConnections: 4,
  });
  report.settings.timescaledb = target.version;
  return { db: target.db };
}

function seed(_target: Target, { options, report }: Context): Promise<HistogramSeries[]> {
  const count = (options.hours * hourMs) / intervalMs;
  const fleet = histogramFleet({
    series: options.series,
    count,
    startMs: Date.now() - hourMs - options.hours * hourMs,
    intervalMs,
  });
  report.settings.histograms = options.series * count;
  let buckets = 0;
  for (const { samples } of fleet) {
    buckets += samples[samples.length - 1]!.histogram.positiveBuckets.length;
  }
  report.settings.buckets = Math.round(buckets / fleet.length);
  return Promise.resolve(fleet);
}

async function storeOurs(db: Database, fleet: HistogramSeries[]): Promise<Report['ours']> {
  logProgress('writing the histograms through the sample store');
  const store = createSampleStore(db);
  const count = fleet[0]?.samples.length ?? 0;
  for (let first = 0; first < count; first += scrapesPerBatch) {
    const samples: HostSample[] = [];
    for (let i = first; i < Math.min(count, first + scrapesPerBatch); i++) {
      for (const { labels, samples: scrapes } of fleet) {
        const { __name__: metric, ...tags } = labels;
        const { timeMs, histogram } = scrapes[i]!;
        samples.push({
          orgId: 'org_bench',
          host: tags['instance']!.replace(/:\d+$/, ''),
          timeMs,
          metrics: {},
          tags,
          tagsLabelSeries: true,
          histograms: { [metric!]: histogram },
          containers: [],
          processes: [],
        });
      }
    }
    await store.writeBatch({ samples });
    // As the writer's maintenance compacts while the fleet writes, and autovacuum lets new rows
    // reuse the space of those it moved: every 5 minutes of the data's time (the writer's
    // maintenance runs every minute).
    const last = samples[samples.length - 1]!.timeMs;
    const period = 5 * 60_000;
    if (Math.floor(last / period) !== Math.floor((last - scrapesPerBatch * intervalMs) / period)) {
      await compactAll(db, new Date(last));
      await vacuumAnalyze(db, histogramTables);
    }
  }
  // The newest histograms as written, as a running service holds them (the last 10 minutes, and
  // what has not filled a chunk yet).
  const before = await measureHistogramStorage(db);
  logProgress('compacting the rest');
  await compactAll(db, new Date());
  await vacuumAnalyze(db, histogramTables);
  const after = await measureHistogramStorage(db);
  logProgress(`histogram storage: ${JSON.stringify(after)}`);
  return {
    chunkBytes: after.chunkBytes,
    totalBytes: after.tableBytes,
    rows: after.chunkRows,
    newest: { bytes: before.newestBytes, histograms: before.newestHistograms },
  };
}

async function compactAll(db: Database, now: Date): Promise<void> {
  while ((await compactHistogramChunks(db, { now })).histograms > 0);
}

/** Prometheus 2.42's TSDB given the same histograms: its block's sizes. */
async function storePrometheus(fleet: HistogramSeries[]): Promise<Report['prometheus']> {
  logProgress("appending the histograms to Prometheus' TSDB (go run)");
  const dir = fileURLToPath(new URL('../go/prometheus-tsdb-size/', import.meta.url));
  const child = spawn('go', ['run', '.'], { cwd: dir, stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (data: Buffer) => (output += data.toString()));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  child.stdin.end(JSON.stringify(fleet));
  const code = await exited;
  if (code !== 0) throw new Error(`go run exited with ${code}`);
  return JSON.parse(output) as Report['prometheus'];
}

async function measure(target: Target, { report }: Context, fleet: HistogramSeries[]) {
  report.ours = await storeOurs(target.db, fleet);
  report.prometheus = await storePrometheus(fleet);
}

function formatReport(report: ReportBase & Report): string {
  const histograms = report.settings.histograms ?? 0;
  const per = (bytes: number | undefined) =>
    bytes === undefined || histograms === 0 ? 'n/a' : `${(bytes / histograms).toFixed(2)} B`;
  return [
    `bench:histograms — ${report.date}, ${histograms} histograms: ${report.settings.series} ` +
      `series × ${report.settings.hours} h at 15 s, ~${report.settings.buckets ?? '?'} buckets ` +
      `each at the end (TimescaleDB ${report.settings.timescaledb ?? '?'})`,
    `ours: chunks ${per(report.ours?.chunkBytes)} per histogram, table with rows, index and ` +
      `TOAST ${per(report.ours?.totalBytes)} (${report.ours?.rows ?? '?'} rows); before the last compaction, ` +
      `the newest ${report.ours?.newest.histograms ?? '?'} as written took ` +
      `${report.ours?.newest.bytes ?? '?'} bytes`,
    `Prometheus 2.42 TSDB block: chunks ${per(report.prometheus?.chunkBytes)} per histogram, ` +
      `index ${per(report.prometheus?.indexBytes)}, whole block ${per(report.prometheus?.blockBytes)}`,
  ].join('\n');
}

await runBench<'series' | 'hours', Options, Report, Target, HistogramSeries[]>({
  name: 'histograms',
  usage,
  defaults: { series: '100', hours: '12' },
  parseOptions: (values) => ({
    series: integerOption('series', values.series, 1, 10_000),
    hours: integerOption('hours', values.hours, 1, 40),
  }),
  createReport: (options) => ({ settings: { ...options } }),
  start,
  migrate: (target) => migrateInMode(target.db, 'timescale'),
  seed,
  measure,
  format: formatReport,
});
