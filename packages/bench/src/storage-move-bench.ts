/**
 * `npm run bench:storage-move`: how long a running service takes to move a database of the
 * float8 layout (before migration 24) into the scaled one, per million samples, while it keeps
 * ingesting (issue 39, point 6; docs/benchmarks/storage.md, "Storage move").
 *
 * 1. PostgreSQL with TimescaleDB (timescale-server.ts), migrated up to migration 23 with a one
 *    day raw retention (so that the aggregates hold rows older than the refresh windows, which
 *    the move copies); `--series` series of `--points` samples 20 s apart ending now, written
 *    as that version wrote them (float8 `value`, one decimal); both aggregates refreshed whole,
 *    the raw chunks past the retention dropped (as its job would have) and every other raw
 *    chunk but the newest compressed, jobs paused. The figure per million is per raw sample
 *    left to move.
 * 2. `migrate` (timed: it no longer copies anything), one refresh as the jobs would run it.
 * 3. `runMaintenance` with one batch per run, back to back until nothing is pending (with a
 *    refresh of the aggregates, the jobs' work, whenever the move waits for one), while one
 *    sample store writes a point of every series every 100 ms of wall time (the new layout).
 *    The time of each step (raw rows, samples_1h, samples_1m) is when its row of
 *    `storage_moves` was seen finished.
 */
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { migrate, migrateBefore, refreshRollups, runMaintenance } from '@monitor/db';
import type { Database, HostSample } from '@monitor/db';
import {
  compressOlderChunks,
  countStoredRows,
  dropTimestampRawChunks,
  listFinishedStorageMoves,
  pausePolicyJobs,
  refreshAggregates,
  writeFloat8Layout,
} from '@monitor/db/bench';
import { integerOption } from './harness/command-line.js';
import { logProgress } from './harness/progress.js';
import type { ReportBase } from './harness/report.js';
import type { BenchContext } from './harness/run-bench.js';
import { runBench } from './harness/run-bench.js';
import { startTimescaleDatabase } from './harness/timescale-database.js';
import { writeMeanwhile } from './harness/writes-meanwhile.js';

const hourMs = 3_600_000;
const stepMs = 20_000;

type Options = { series: number; points: number };

type Report = {
  settings: Options & { timescaledb?: string };
  stored?: { rawSamples: number; minuteRows: number; hourRows: number };
  migrateMs?: number;
  /** Milliseconds from the move's start until each step was seen finished. */
  stepsDoneMs?: Record<string, number>;
  batches?: number;
  samplesIngestedDuringMove?: number;
  loadAverage?: { before: number; after: number };
};

const usage = `Usage: npm run bench:storage-move -- [options]
  --series N   series in the old layout (default 100)
  --points N   samples per series, 20 s apart (default 10000: 1,000,000 samples)
  --out FILE   JSON results (default bench-results/storage-move-<iso date>.json)
Needs TimescaleDB for the machine's PostgreSQL (tools/build-machine/timescaledb/install-from-source.sh).`;

/** Retention and compression as the move finds them: short, so the aggregates hold history. */
const policies = {
  rawRetentionDays: 1,
  rollup1mRetentionDays: 4,
  rollup1hRetentionDays: 8,
  compressAfterHours: 1,
};

type Target = { db: Database; now: Date };
type Context = BenchContext<Options, Report>;

async function start({ report, cleanup }: Context): Promise<Target> {
  const target = await startTimescaleDatabase({
    logDir: report.logDir,
    cleanup,
    prefix: 'bench_storage_move',
    maxConnections: 4,
  });
  report.settings.timescaledb = target.version;
  return { db: target.db, now: new Date() };
}

/** Up to the layout before migration 24: the move starts from its float8 rows. */
async function migrateToFloat8({ db, now }: Target): Promise<void> {
  logProgress('migrating up to the float8 layout');
  await migrateBefore(db, 24, { now, mode: 'timescale', ...policies });
  await pausePolicyJobs(db);
}

/** The old layout's history as the policies had left it: aggregated, the raw part dropped. */
async function seed({ db, now }: Target, { options, report }: Context): Promise<void> {
  logProgress(`writing ${options.series} × ${options.points} samples as it stored them`);
  await writeFloat8Layout(db, { ...options, startMs: now.getTime() - options.points * stepMs });
  await refreshAggregates(db, ['samples_1m', 'samples_1h'], now);
  // What the raw retention had dropped by then: only the aggregates hold the older history.
  await dropTimestampRawChunks(
    db,
    new Date(now.getTime() - policies.rawRetentionDays * 24 * hourMs),
  );
  await compressOlderChunks(db, 'samples', new Date(now.getTime() - hourMs));
  const stored = await countStoredRows(db);
  report.stored = { rawSamples: stored.raw, minuteRows: stored.minutes, hourRows: stored.hours };
}

/** The migration to the current layout, then the move, batch by batch, while ingesting. */
async function measure({ db, now }: Target, { options, report }: Context): Promise<void> {
  logProgress('migrating');
  const loadBefore = loadavg()[0] ?? 0;
  let started = performance.now();
  await migrate(db, { now, ...policies });
  report.migrateMs = Math.round(performance.now() - started);
  await pausePolicyJobs(db);
  await refreshRollups(db, { now });

  logProgress('moving while ingesting');
  const ingest = ingestMeanwhile(db, options.series);
  const stepsDoneMs: Record<string, number> = {};
  let batches = 0;
  let idleRuns = 0;
  started = performance.now();
  try {
    for (;;) {
      const { moved } = await runMaintenance(db, new Date(), {
        alertRetentionDays: 90,
        rawRetentionDays: policies.rawRetentionDays,
        storageMoveBatchesPerRun: 1,
      });
      batches += moved.batches;
      const done = await listFinishedStorageMoves(db);
      for (const step of done) stepsDoneMs[step] ??= Math.round(performance.now() - started);
      if (moved.pending === 0) break;
      if (moved.batches === 0) {
        // An aggregate's copied rows wait for a refresh to move its watermark past them: the
        // refresh jobs' work (paused here), done as soon as the move waits for it.
        if (++idleRuns > 3) throw new Error('the move made no progress after refreshes');
        await refreshRollups(db, { now: new Date() });
      } else {
        idleRuns = 0;
      }
    }
  } finally {
    report.samplesIngestedDuringMove = await ingest.stop();
  }
  report.stepsDoneMs = stepsDoneMs;
  report.batches = batches;
  report.loadAverage = { before: loadBefore, after: loadavg()[0] ?? 0 };
}

/** A point of every series, each round (every 100 ms). */
function ingestMeanwhile(db: Database, series: number): { stop(): Promise<number> } {
  return writeMeanwhile(db, (round): HostSample[] => [
    {
      orgId: 'org_move',
      host: 'move-host',
      timeMs: Date.now(),
      metrics: Object.fromEntries(
        Array.from({ length: series }, (_, i) => [
          `metric_${i + 1}`,
          ((round * series) % 1000) / 10,
        ]),
      ),
      tags: {},
      containers: [],
      processes: [],
    },
  ]);
}

function formatReport(report: ReportBase & Report): string {
  const raw = report.stored?.rawSamples ?? 0;
  const perMillion = (ms: number | undefined) =>
    ms === undefined || raw === 0 ? 'n/a' : `${((ms / 1000) * (1e6 / raw)).toFixed(1)} s`;
  const total = Math.max(0, ...Object.values(report.stepsDoneMs ?? {}));
  return [
    `storage move, ${raw} raw samples, ${report.stored?.minuteRows ?? 0} minute rows, ` +
      `${report.stored?.hourRows ?? 0} hour rows (TimescaleDB ${report.settings.timescaledb ?? '?'})`,
    `migrate: ${report.migrateMs ?? 'n/a'} ms`,
    `steps done after (ms): ${JSON.stringify(report.stepsDoneMs ?? {})}, ${report.batches ?? 0} batches`,
    `whole move: ${total} ms, ${perMillion(total)} per million raw samples`,
    `ingested meanwhile: ${report.samplesIngestedDuringMove ?? 0} samples`,
    `load average: ${report.loadAverage?.before ?? '?'} before, ${report.loadAverage?.after ?? '?'} after`,
  ].join('\n');
}

await runBench<'series' | 'points', Options, Report, Target>({
  name: 'storage-move',
  usage,
  defaults: { series: '100', points: '10000' },
  parseOptions: (values) => ({
    series: integerOption('series', values.series, 1, 10_000),
    points: integerOption('points', values.points, 2, 10_000_000),
  }),
  createReport: (options) => ({ settings: { ...options } }),
  start,
  migrate: migrateToFloat8,
  seed,
  measure,
  format: formatReport,
});
