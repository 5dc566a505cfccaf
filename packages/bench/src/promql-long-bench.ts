/**
 * `npm run bench:promql-long`: 90 days of a fleet's history read back from the hourly tier
 * (issue 57, point 4: "a 90-day query_range at a 1 h step over 1,000 series answers in < 1 s p99
 * on the bench database"; docs/benchmarks/promql.md).
 *
 * 1. PostgreSQL 15 with TimescaleDB (timescale-server.ts), `migrate` in TimescaleDB mode, the
 *    policies' jobs paused.
 * 2. `--series` hosts with one gauge `load` each, their hourly tier filled for `--days` as the
 *    writer's maintenance stores it (a row per series and hour: 240 samples at 15 s, values at
 *    two decimals, the last sample 7.5 s before the hour's end), generated in SQL rather than
 *    from raw samples (90 days of 15-second samples would take the machine days to load);
 *    every chunk compressed as the daily compression leaves it, then `vacuum analyze`.
 * 3. `monitor api` over it, its query cache off, and each query at a 1-hour step over the whole
 *    history with `max_source_resolution=1h`, asked `--iterations` times in turn after
 *    `--warmups`: p50/p95/p99 from the client's side, HTTP included.
 */
import { performance } from 'node:perf_hooks';
import { createApiKeyStore, createOrgStore, createSampleStore } from '@monitor/db';
import { vacuumAnalyze } from '@monitor/db/bench';
import { buildHostSample } from '@monitor/testkit/builders';
import { getFreePort } from '@monitor/testkit';
import { startHttpProcess } from './bench-process.js';
import { integerOption } from './harness/command-line.js';
import { logProgress } from './harness/progress.js';
import type { ReportBase } from './harness/report.js';
import { runBench } from './harness/run-bench.js';
import type { TimescaleDatabase } from './harness/timescale-database.js';
import { migrateForQueries, startTimescaleDatabase } from './harness/timescale-database.js';
import type { LatencySummary } from './latency-summary.js';
import { summarizeLatencies } from './latency-summary.js';
import { monitorCommand } from './monitor-stack.js';
import { rangeQuery } from './promql-answers.js';
import { formatMachine, formatNotes, int, ms } from './report-text.js';

const hourMs = 3_600_000;
const dayMs = 24 * hourMs;

type Options = { series: number; days: number; iterations: number; warmups: number };

/** What a 90-day panel over a fleet asks: aggregations, one answer series each. */
const queries = [
  'avg(avg_over_time(load[1h]))',
  'max(max_over_time(load[1h]))',
  'sum(count_over_time(load[1h]))',
] as const;

type LongBenchFields = {
  settings: Options & { buckets: number; timescaledb?: string };
  seedSeconds?: number;
  runs: { query: string; points: number; latency: LatencySummary }[];
};

const usage = `Usage: npm run bench:promql-long -- [options]
  --series N        hosts, one series each (default 1000)
  --days N          history in the hourly tier (default 90)
  --iterations N    measured rounds of every query (default 30)
  --warmups N       unmeasured rounds first (default 2)
  --out FILE        JSON results (default bench-results/promql-long-<iso date>.json)
Needs TimescaleDB for the machine's PostgreSQL.`;

type Seeded = { key: string; fromMs: number; toMs: number };

async function seed(
  target: TimescaleDatabase,
  { options, report }: { options: Options; report: ReportBase & LongBenchFields },
): Promise<Seeded> {
  const { db } = target;
  const started = performance.now();
  const org = await createOrgStore(db).createOrganization('bench-promql-long');
  const { key } = await createApiKeyStore(db).createKey({
    orgId: org.id,
    name: 'bench',
    scopes: ['read'],
  });
  const toMs = Math.floor(Date.now() / hourMs) * hourMs;
  const fromMs = toMs - options.days * dayMs;
  // One raw sample per host makes its series; the history is in the tier.
  await createSampleStore(db).writeBatch({
    samples: Array.from({ length: options.series }, (_, h) =>
      buildHostSample({
        orgId: org.id,
        host: `host-${h}`,
        timeMs: toMs - 1000,
        metrics: { load: h },
      }),
    ),
  });
  logProgress(`storing ${int(report.settings.buckets)} hourly buckets`);
  await db.sql`
    with v as (
      select s.id, b, 100 + (s.id * 37 + b / ${hourMs} * 13) % 5000 as base
      from series s join services v on v.id = s.service_id,
        generate_series(${fromMs + hourMs}::bigint, ${toMs}::bigint, ${hourMs}::bigint) b
      where v.org_id = ${org.id} and s.metric = 'load'
    )
    insert into sample_tier_1h
      (series_id, bucket_ms, count, scale, sum, min, max, last, reset_sum, last_ms, stale_ms)
    select id, b, 240, 2, 240 * base, base - 50, base + 50, base, 0, b - 7500, null from v`;
  await db.sql`
    insert into tier_fills (tier, filled_from_ms, filled_to_ms) values ('1h', ${fromMs}, ${toMs})
    on conflict (tier) do update
    set filled_from_ms = excluded.filled_from_ms, filled_to_ms = excluded.filled_to_ms`;
  logProgress('compressing the tier, as its daily compression leaves it');
  await db.sql`select compress_chunk(c, true) from show_chunks('sample_tier_1h') c`;
  await vacuumAnalyze(db);
  report.seedSeconds = (performance.now() - started) / 1000;
  return { key, fromMs, toMs };
}

await runBench({
  name: 'promql-long',
  usage,
  defaults: { series: '1000', days: '90', iterations: '30', warmups: '2' },
  parseOptions: (values): Options => ({
    series: integerOption('series', values.series),
    days: integerOption('days', values.days, 1, 800),
    iterations: integerOption('iterations', values.iterations),
    warmups: integerOption('warmups', values.warmups, 0),
  }),
  createReport: (options): LongBenchFields => ({
    settings: { ...options, buckets: options.series * options.days * 24 },
    runs: [],
  }),
  start: ({ report, cleanup }) =>
    startTimescaleDatabase({
      logDir: report.logDir,
      cleanup,
      prefix: 'bench_promql_long',
      maxConnections: 2,
      applicationName: 'monitor-bench-promql-long',
    }),
  migrate: (target, { report }) => migrateForQueries(target, report.settings),
  seed,
  async measure(target, { options, report, cleanup, processes }, { key, fromMs, toMs }) {
    const port = await getFreePort();
    const api = await startHttpProcess({
      name: 'api',
      ...monitorCommand('source', ['api']),
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: process.env['HOME'] ?? '',
        PORT: String(port),
        DATABASE_URL: target.url,
        LOG_LEVEL: 'warn',
        // The engine and the tier are measured, not the cache.
        PROMQL_CACHE_MAX_BYTES: '0',
      },
      logDir: report.logDir,
      port,
      readyPath: '/healthz',
    });
    cleanup.add('api', () => api.stop());
    processes.push(api);
    const ask = (query: string) =>
      rangeQuery(
        `${api.baseUrl}/prometheus/api/v1/query_range`,
        { 'X-API-Key': key },
        {
          query,
          start: String((fromMs + hourMs) / 1000),
          end: String(toMs / 1000),
          step: '3600',
          max_source_resolution: '1h',
        },
      );
    const points = new Map<string, number>();
    for (const query of queries) {
      const answer = await ask(query);
      const result = (answer.data?.result ?? []) as { values?: unknown[] }[];
      points.set(query, result[0]?.values?.length ?? 0);
      if (result.length !== 1) throw new Error(`${query} answered ${result.length} series`);
    }
    for (let i = 0; i < options.warmups; i++) for (const query of queries) await ask(query);
    logProgress(`measuring ${options.iterations} rounds of ${queries.length} queries`);
    const took = new Map(queries.map((query) => [query, new Float64Array(options.iterations)]));
    for (let i = 0; i < options.iterations; i++) {
      for (const query of queries) {
        const t = performance.now();
        await ask(query);
        took.get(query)![i] = performance.now() - t;
      }
    }
    for (const query of queries) {
      report.runs.push({
        query,
        points: points.get(query) ?? 0,
        latency: summarizeLatencies(took.get(query)!),
      });
    }
    await api.stop();
  },
  format(report) {
    const { settings } = report;
    const lines = [
      `PromQL over ${settings.days} days of the hourly tier: ${int(settings.series)} series, ` +
        `${int(settings.buckets)} buckets, step 1 h, max_source_resolution=1h`,
      formatMachine(report.machine),
      `seeded in ${report.seedSeconds?.toFixed(1) ?? '?'} s; ${settings.iterations} rounds after ${settings.warmups} warm-ups`,
      '',
      'p50 / p95 / p99 ms, HTTP included:',
    ];
    for (const run of report.runs) {
      lines.push(
        `  ${ms(run.latency.p50Ms).padStart(7)} ${ms(run.latency.p95Ms).padStart(7)} ${ms(run.latency.p99Ms).padStart(7)}  ${run.query} (${run.points} points)`,
      );
    }
    const worst = Math.max(...report.runs.map((run) => run.latency.p99Ms));
    lines.push(
      `  target p99 < 1,000 ms: ${worst < 1000 ? 'met' : 'not met'} (worst ${ms(worst)} ms)`,
    );
    lines.push(...formatNotes(report));
    return lines.join('\n');
  },
});
