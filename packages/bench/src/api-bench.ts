/**
 * `npm run bench:api`: the query API's listing and detail endpoints over a realistic services
 * table (docs/benchmarks/api.md).
 *
 * 1. PostgreSQL from testkit (or DATABASE_URL), a fresh database, `monitor migrate`.
 * 2. Two organizations: the measured one with 10,000 services and another with a few thousand
 *    (so the organization filter has rows to skip), written straight into the database with
 *    tags, metrics, a snapshot each, some stale, ~2 % with an active alert; then `analyze`.
 * 3. `monitor api` as its own process; each query is checked once (totals and page sizes must
 *    match the seed), then driven at a fixed concurrency: requests/s and latency.
 * 4. `explain (analyze, buffers)` of the list query at the deepest page.
 */
import { performance } from 'node:perf_hooks';
import { createApiKeyStore, createOrgStore } from '@monitor/db';
import { countAlertsAndSnapshots, vacuumAnalyze } from '@monitor/db/bench';
import type { ApiBenchReport, QueryFigures } from './api-report.js';
import { formatApiReport } from './api-report.js';
import { integerOption } from './harness/command-line.js';
import { logProgress } from './harness/progress.js';
import type { ReportBase } from './harness/report.js';
import type { BenchContext } from './harness/run-bench.js';
import { runBench } from './harness/run-bench.js';
import { runLoad, summarizeLoad } from './load-client.js';
import type { MonitorStack } from './monitor-stack.js';
import { startMonitorStack } from './monitor-stack.js';
import { cpuSnapshot, cpuUsedBetween } from './proc-stats.js';
import type { PlannedService } from './service-seed.js';
import { createSeededRandom } from '@monitor/testkit';
import { countPlanned, insertPlannedServices, planServices } from './service-seed.js';
import { explainServicesPage } from './services-page-explain.js';

const pageLimit = 100;
/** Long enough that no fresh seeded service turns stale during a run of any sensible length. */
const staleAfterSeconds = 3_600;
const mainSeed = 20_261_122;
const otherSeed = 4_242;

/** The command line's options: what the report's settings record, less the fixed ones. */
type Options = Omit<ApiBenchReport['settings'], 'staleAfterSeconds' | 'origins'>;

const usage = `Usage: npm run bench:api -- [options]
  --services N            services in the measured organization (default 10000)
  --other-services N      services in a second organization (default 3000)
  --concurrency N         requests in flight (default 16)
  --duration-seconds N    measured time per query (default 10)
  --warm-up-seconds N     unmeasured load before each query (default 2)
  --out FILE              JSON results (default bench-results/api-<iso date>.json)
PostgreSQL comes from DATABASE_URL when set, else testkit starts it.`;

type Context = BenchContext<Options, Omit<ApiBenchReport, keyof ReportBase>>;
type Seeded = { mainOrgId: string; plan: PlannedService[]; key: string };

/** PostgreSQL, a fresh database migrated by `monitor migrate`; the api role starts later. */
async function start({ report, cleanup }: Context): Promise<MonitorStack> {
  const stack = await startMonitorStack({
    services: ['postgres'],
    cleanup,
    logDir: report.logDir,
    databasePrefix: 'bench_api',
    env: { SERVICE_STALE_AFTER_SECONDS: String(staleAfterSeconds) },
  });
  report.settings.origins = stack.serviceOrigins;
  return stack;
}

/** The api role under load, query by query. */
async function measure(
  stack: MonitorStack,
  { options, report, processes }: Context,
  { mainOrgId, plan, key }: Seeded,
): Promise<void> {
  const now = new Date();

  logProgress('starting the api role');
  const api = await stack.startRole('api');
  processes.push(api);
  const headers = { 'x-api-key': key };
  const counts = countPlanned(plan);

  const list = (query: string) => `/api/v1/services?limit=${pageLimit}&${query}`;
  // The detail query walks the services in a shuffled order, so no one row stays hot.
  const detailOrder = shuffle(plan, mainSeed);
  const queries: { name: string; path: (n: number) => string; expected: Expectation }[] = [
    ...[0, 5_000, 9_900]
      .filter((offset) => offset < options.services)
      .map((offset) => ({
        name: `list offset ${offset}`,
        path: () => list(`offset=${offset}`),
        expected: { total: counts.total, offset },
      })),
    {
      name: 'list status=critical',
      path: () => list('offset=0&status=critical'),
      expected: { total: counts.byStatus.critical, offset: 0 },
    },
    {
      name: 'list tag.environment=prod',
      path: () => list('offset=0&tag.environment=prod'),
      expected: { total: counts.byEnvironment['prod'] ?? 0, offset: 0 },
    },
    {
      name: 'detail /services/:id',
      path: (n) => `/api/v1/services/${detailOrder[n % detailOrder.length]?.id ?? ''}`,
      expected: { services: detailOrder },
    },
  ];

  for (const query of queries) {
    await checkAnswer(api.baseUrl, headers, query.path(0), query.expected);
    if (options.warmUpSeconds > 0) {
      await runLoad({
        baseUrl: api.baseUrl,
        path: query.path,
        headers,
        concurrency: options.concurrency,
        durationMs: options.warmUpSeconds * 1000,
      });
    }
    logProgress(`measuring ${query.name} for ${options.durationSeconds} s`);
    const cpuBefore = cpuSnapshot([api]);
    const load = await runLoad({
      baseUrl: api.baseUrl,
      path: query.path,
      headers,
      concurrency: options.concurrency,
      durationMs: options.durationSeconds * 1000,
    });
    const cpu = cpuUsedBetween(cpuBefore, cpuSnapshot([api]));
    const apiCpuSeconds = cpu.seconds[api.name];
    const figures: QueryFigures = {
      name: query.name,
      examplePath: query.path(0),
      ...('total' in query.expected ? { expectedTotal: query.expected.total } : {}),
      concurrency: options.concurrency,
      durationSeconds: Math.round(load.seconds * 1000) / 1000,
      ...summarizeLoad(load),
      meanBodyBytes: load.ok > 0 ? load.okBodyBytes / load.ok : 0,
    };
    if (apiCpuSeconds !== undefined && load.ok > 0)
      figures.apiCpuMsPerRequest = (apiCpuSeconds * 1000) / load.ok;
    figures.machineBusyPercent = cpu.machineBusyPercent;
    report.queries.push(figures);
    logProgress(
      `${query.name}: ${Math.round(figures.requestsPerSecond)} requests/s, ` +
        `p50 ${figures.latency.p50Ms} ms, p99 ${figures.latency.p99Ms} ms`,
    );
  }

  const deepest = Math.min(9_900, options.services - pageLimit);
  report.explain = await explainServicesPage(stack.db, {
    orgId: mainOrgId,
    limit: pageLimit,
    offset: deepest,
    now,
    staleAfterSeconds,
  });
}

/** Organizations, a read key, and the services of both organizations. */
async function seed(
  stack: MonitorStack,
  options: Options,
  report: ApiBenchReport,
): Promise<Seeded> {
  const { db } = stack;
  const orgs = createOrgStore(db);
  const [mainOrg, otherOrg] = [
    await orgs.createOrganization('bench-main'),
    await orgs.createOrganization('bench-other'),
  ];
  const { key } = await createApiKeyStore(db).createKey({
    orgId: mainOrg.id,
    name: 'bench',
    scopes: ['read'],
  });
  const seedStartedAt = performance.now();
  const planOptions = {
    nowMs: Date.now(),
    staleAfterMs: staleAfterSeconds * 1000,
    staleShare: 0.1,
    activeAlertShare: 0.02,
  };
  const plan = planServices({ ...planOptions, count: options.services, seed: mainSeed });
  logProgress(`seeding ${options.services} + ${options.otherOrgServices} services`);
  await insertPlannedServices(db, mainOrg.id, plan, mainSeed);
  if (options.otherOrgServices > 0) {
    const otherPlan = planServices({
      ...planOptions,
      count: options.otherOrgServices,
      seed: otherSeed,
    });
    await insertPlannedServices(db, otherOrg.id, otherPlan, otherSeed);
  }
  // A production table has statistics; a freshly filled one has none until autovacuum runs.
  await vacuumAnalyze(db, ['services', 'snapshots', 'alerts']);
  const rows = await countAlertsAndSnapshots(db);
  const counts = countPlanned(plan);
  report.seeded = {
    byStatus: counts.byStatus,
    byEnvironment: counts.byEnvironment,
    alertRows: rows.alerts,
    snapshotRows: rows.snapshots,
    seedSeconds: (performance.now() - seedStartedAt) / 1000,
  };
  return { mainOrgId: mainOrg.id, plan, key };
}

type Expectation = { total: number; offset: number } | { services: readonly PlannedService[] };

/** A benchmark of wrong answers measures nothing: the first answer must match the seed. */
async function checkAnswer(
  baseUrl: string,
  headers: Record<string, string>,
  path: string,
  expected: Expectation,
): Promise<void> {
  const response = await fetch(new URL(path, baseUrl), { headers });
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(`GET ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as {
    id?: string;
    status?: string;
    services?: unknown[];
    pagination?: { total?: number };
  };
  if ('total' in expected) {
    const pageSize = Math.max(0, Math.min(pageLimit, expected.total - expected.offset));
    if (body.pagination?.total !== expected.total || body.services?.length !== pageSize) {
      throw new Error(
        `GET ${path}: total ${body.pagination?.total} and ${body.services?.length} services, ` +
          `expected ${expected.total} and ${pageSize}`,
      );
    }
    return;
  }
  const service = expected.services.find((s) => path.endsWith(`/${s.id}`));
  if (service === undefined || body.id !== service.id || body.status !== service.status) {
    throw new Error(
      `GET ${path}: ${body.id} ${body.status}, expected ${service?.id} ${service?.status}`,
    );
  }
}

/** A copy of `items` in a seeded random order (Fisher–Yates). */
function shuffle<T>(items: readonly T[], seed: number): T[] {
  const copy = [...items];
  const random = createSeededRandom(seed).next;
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

await runBench({
  name: 'api',
  usage,
  defaults: {
    services: '10000',
    'other-services': '3000',
    concurrency: '16',
    'duration-seconds': '10',
    'warm-up-seconds': '2',
  },
  parseOptions: (values): Options => ({
    // The deepest page measured is offset 9,900: fewer services would measure an empty page.
    services: integerOption('services', values.services, pageLimit),
    otherOrgServices: integerOption('other-services', values['other-services'], 0),
    concurrency: integerOption('concurrency', values.concurrency),
    durationSeconds: integerOption('duration-seconds', values['duration-seconds']),
    warmUpSeconds: integerOption('warm-up-seconds', values['warm-up-seconds'], 0),
  }),
  createReport: (options) => ({
    settings: { ...options, staleAfterSeconds, origins: {} },
    queries: [],
  }),
  start,
  seed: (stack, { options, report }) => seed(stack, options, report),
  measure,
  format: formatApiReport,
});
