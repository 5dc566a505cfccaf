/**
 * `npm run bench:shard-move`: how long moving a partition to another sample shard takes
 * (issue 59, item 4; docs/operations.md, "Adding a shard while ingest runs"), step by step as
 * `monitor shards move` runs them, and how long the partition's storing pauses.
 *
 * 1. PostgreSQL with TimescaleDB (timescale-server.ts) with two migrated databases, the old
 *    shard and the new; jobs paused. The old shard gets `--hosts` hosts of `--metrics`
 *    metrics, `--points` samples each, 15 s apart and ending now, through the writer's own
 *    store; every chunk but the newest hour's compressed.
 * 2. The history copied (`copyShardServices`, phase `history`) while one store goes on writing
 *    a sample of every host every 100 ms into the old shard, half of them an hour and a half
 *    late (as a backlog delivers them); the catch-up (the pause) once the writes stopped, then
 *    the old copy dropped. Every sample must be on the new shard once, none left on the old.
 */
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import {
  copyShardServices,
  createDatabase,
  createSampleStore,
  dropShardServices,
  listShardServices,
  migrate,
} from '@monitor/db';
import type { Database, HostSample } from '@monitor/db';
import { compressOlderChunks, countSamples, pausePolicyJobs } from '@monitor/db/bench';
import { createTestDatabase } from '@monitor/testkit';
import { integerOption } from './harness/command-line.js';
import { logProgress } from './harness/progress.js';
import type { ReportBase } from './harness/report.js';
import type { BenchContext } from './harness/run-bench.js';
import { runBench } from './harness/run-bench.js';
import { startTimescaleDatabase } from './harness/timescale-database.js';
import { writeMeanwhile } from './harness/writes-meanwhile.js';

const hourMs = 3_600_000;
const stepMs = 15_000;
const owner = { groupId: 'writer', topic: 'bench-shard-move' };

type Options = { hosts: number; metrics: number; points: number };

type Report = {
  settings: Options & { timescaledb?: string };
  samplesBefore?: number;
  historyMs?: number;
  samplesWrittenDuringHistory?: number;
  catchUpMs?: number;
  dropMs?: number;
  copied?: { history: number; catchUp: number };
  samplesAfter?: { source: number; target: number };
  loadAverage?: { before: number; after: number };
};

const usage = `Usage: npm run bench:shard-move -- [options]
  --hosts N     hosts of the moving partition (default 200)
  --metrics N   metrics per host (default 10)
  --points N    samples per series, 15 s apart (default 5000: 10,000,000 samples)
  --out FILE    JSON results (default bench-results/shard-move-<iso date>.json)
Needs TimescaleDB for the machine's PostgreSQL (tools/build-machine/timescaledb/install-from-source.sh).`;

type Target = { source: Database; target: Database };
type Context = BenchContext<Options, Report>;

async function start({ report, cleanup }: Context): Promise<Target> {
  const source = await startTimescaleDatabase({
    logDir: report.logDir,
    cleanup,
    prefix: 'bench_shard_move_from',
    maxConnections: 4,
  });
  report.settings.timescaledb = source.version;
  const serverUrl = new URL(source.url);
  serverUrl.pathname = '/postgres';
  const created = await createTestDatabase(serverUrl.toString(), 'bench_shard_move_to');
  cleanup.add('new shard database', () => created.drop());
  const target = createDatabase({ url: created.url, maxConnections: 4 });
  cleanup.add('new shard pool', () => target.close());
  return { source: source.db, target };
}

async function migrateBoth({ source, target }: Target): Promise<void> {
  logProgress('migrating both shards');
  for (const db of [source, target]) {
    await migrate(db);
    await pausePolicyJobs(db);
  }
}

function hostSample(host: number, metrics: number, timeMs: number, value: number): HostSample {
  return {
    orgId: 'org_move',
    host: `host-${host}`,
    timeMs,
    metrics: Object.fromEntries(
      Array.from({ length: metrics }, (_, i) => [`metric_${i + 1}`, value]),
    ),
    tags: {},
    containers: [],
    processes: [],
  };
}

async function seed({ source }: Target, { options, report }: Context): Promise<void> {
  const { hosts, metrics, points } = options;
  logProgress(`writing ${hosts} hosts × ${metrics} metrics × ${points} samples`);
  const store = createSampleStore(source);
  const endMs = Math.floor(Date.now() / stepMs) * stepMs - hourMs;
  const perBatch = Math.max(1, Math.floor(5_000 / hosts));
  for (let point = 0; point < points; point += perBatch) {
    const samples: HostSample[] = [];
    for (let p = point; p < Math.min(points, point + perBatch); p++) {
      const timeMs = endMs - (points - 1 - p) * stepMs;
      for (let h = 0; h < hosts; h++) samples.push(hostSample(h, metrics, timeMs, (p * 7) % 1000));
    }
    await store.writeBatch({ samples });
  }
  await compressOlderChunks(source, 'samples', new Date(Date.now() - hourMs));
  report.samplesBefore = await countSamples(source);
}

async function measure({ source, target }: Target, { options, report }: Context): Promise<void> {
  const loadBefore = loadavg()[0] ?? 0;
  const ids = (await listShardServices(source)).map((service) => service.id);
  logProgress('copying the history while the partition is still written');
  const writes = writeMeanwhile(source, lateAndRecent(options));
  let started = performance.now();
  const history = await copyShardServices(source, target, ids, {
    phase: 'history',
    recentMs: hourMs,
  });
  report.historyMs = Math.round(performance.now() - started);
  report.samplesWrittenDuringHistory = await writes.stop();

  logProgress('catching up (the partition paused), then dropping the old copy');
  started = performance.now();
  const caughtUp = await copyShardServices(source, target, ids, {
    phase: 'catch-up',
    since: history.cut,
    offsets: { ...owner, partition: 0, nextOffset: 1 },
  });
  report.catchUpMs = Math.round(performance.now() - started);
  report.copied = { history: history.rows.samples ?? 0, catchUp: caughtUp.rows.samples ?? 0 };
  const sourceSamples = await countSamples(source);
  started = performance.now();
  await dropShardServices(source, ids, { keepServices: false });
  report.dropMs = Math.round(performance.now() - started);
  report.samplesAfter = { source: sourceSamples, target: await countSamples(target) };
  report.loadAverage = { before: loadBefore, after: loadavg()[0] ?? 0 };
  if (report.samplesAfter.target !== sourceSamples || (await countSamples(source)) !== 0) {
    throw new Error(`samples not moved whole: ${JSON.stringify(report.samplesAfter)}`);
  }
}

/**
 * A sample of every host each round (every 100 ms), every other round 90 minutes late (before
 * the catch-up's hour: it comes back as a late write).
 */
function lateAndRecent(options: Options): (round: number) => HostSample[] {
  return (round) => {
    const timeMs = Date.now() - (round % 2 === 0 ? 0 : 1.5 * hourMs) + (round % 1000);
    return Array.from({ length: options.hosts }, (_, h) =>
      hostSample(h, options.metrics, timeMs, round),
    );
  };
}

function formatReport(report: ReportBase & Report): string {
  const seconds = (ms: number | undefined) => (ms === undefined ? 'n/a' : `${ms / 1000} s`);
  return [
    `shard move, ${report.samplesBefore ?? 0} samples of ${report.settings.hosts} hosts × ` +
      `${report.settings.metrics} metrics (TimescaleDB ${report.settings.timescaledb ?? '?'})`,
    `history copied in ${seconds(report.historyMs)} (${report.copied?.history ?? 0} samples), ` +
      `${report.samplesWrittenDuringHistory ?? 0} written meanwhile`,
    `catch-up (the pause) ${seconds(report.catchUpMs)} (${report.copied?.catchUp ?? 0} samples)`,
    `old copy dropped in ${seconds(report.dropMs)}`,
    `samples: ${report.samplesAfter?.source ?? 0} on the old shard before the drop, ` +
      `${report.samplesAfter?.target ?? 0} on the new`,
    `load average: ${report.loadAverage?.before ?? '?'} before, ${report.loadAverage?.after ?? '?'} after`,
  ].join('\n');
}

await runBench<'hosts' | 'metrics' | 'points', Options, Report, Target>({
  name: 'shard-move',
  usage,
  defaults: { hosts: '200', metrics: '10', points: '5000' },
  parseOptions: (values) => ({
    hosts: integerOption('hosts', values.hosts, 1, 100_000),
    metrics: integerOption('metrics', values.metrics, 1, 1_000),
    points: integerOption('points', values.points, 2, 10_000_000),
  }),
  createReport: (options) => ({ settings: { ...options } }),
  start,
  migrate: migrateBoth,
  seed,
  measure,
  format: formatReport,
});
