/**
 * `npm run bench:console`: the web console's services view over 10,000 services, in headless
 * Chromium (Debian's, driven by playwright-core), against `monitor all` (docs/benchmarks/console.md,
 * "Console").
 *
 * 1. PostgreSQL from testkit (or DATABASE_URL), a fresh database, `monitor migrate`, the console
 *    built (`npm run build -w @monitor/console`), `monitor all`.
 * 2. N services sent through POST /api/v1/ingest (1,000 payloads a request), tagged env, role
 *    and zone, ~3 % with a firing critical rule, ~5 % warning; waited for until listed.
 * 3. For each of `--runs` fresh browser contexts (cold cache, key already in sessionStorage):
 *    load /services and time, from navigation start, the first screen (map and first table rows
 *    drawn), then the whole list loaded; long tasks on the main thread meanwhile. Then, on the
 *    loaded page: a filter typed, the map regrouped by a tag, the table scrolled to its end.
 * Measured, not asserted: the figures are the report.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import type { Page } from 'playwright-core';
import { createSeededRandom } from '@monitor/testkit';
import type { BenchProcess } from './bench-process.js';
import { integerOption } from './harness/command-line.js';
import { logProgress } from './harness/progress.js';
import type { ReportBase } from './harness/report.js';
import type { BenchContext } from './harness/run-bench.js';
import { runBench } from './harness/run-bench.js';
import { startMonitorStack } from './monitor-stack.js';
import { formatMachine, formatNotes, int, ms } from './report-text.js';

const run = promisify(execFile);
const batchSize = 1_000;

type Options = { services: number; runs: number };

type LoadFigures = {
  /** From navigation start to the map and the first table rows drawn. */
  firstScreenMs: number;
  /** From navigation start to every service listed. */
  allLoadedMs: number;
  longTasks: number;
  longTasksTotalMs: number;
  longestTaskMs: number;
};

type InteractionFigures = { filterMs: number; regroupMs: number; scrollToEndMs: number };

type ConsoleBenchReport = {
  settings: Options & { chromium: string; origins: Record<string, string> };
  ingest: { seconds: number; services: number };
  loads: LoadFigures[];
  interactions: InteractionFigures[];
};

const usage = `Usage: npm run bench:console -- [options]
  --services N   services sent through /ingest (default 10000)
  --runs N       cold page loads measured (default 5)
  --out FILE     JSON results (default bench-results/console-<iso date>.json)
PostgreSQL comes from DATABASE_URL when set, else testkit starts it. Chromium: CHROMIUM_BIN, else
/usr/bin/chromium (Debian's package).`;

function chromiumPath(): string {
  const found = [
    process.env['CHROMIUM_BIN'],
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
  ].find((each) => each !== undefined && existsSync(each));
  if (found === undefined)
    throw new Error("no Chromium: install Debian's chromium or set CHROMIUM_BIN");
  return found;
}

/** `count` hosts, one sample each, tagged so grouping has 4, 8 and 3 groups. */
function payloads(count: number, now: Date): Record<string, unknown>[] {
  const random = createSeededRandom(20_261_123).next;
  const envs = ['prod', 'staging', 'dev', 'qa'];
  const roles = ['web', 'api', 'db', 'cache', 'queue', 'batch', 'search', 'edge'];
  const zones = ['a', 'b', 'c'];
  return Array.from({ length: count }, (_, index) => {
    const roll = random();
    return {
      host: `host-${String(index).padStart(5, '0')}`,
      timestamp: now.toISOString(),
      tags: {
        env: envs[index % envs.length],
        role: roles[Math.floor(random() * roles.length)],
        zone: zones[index % zones.length],
      },
      metrics: {
        // ~3 % above the critical rule's 95, ~5 % above the warning rule's 85.
        cpu_percent: roll < 0.03 ? 97 : roll < 0.08 ? 88 : Math.round(random() * 70),
        memory_percent: Math.round(random() * 80),
        load_1m: Math.round(random() * 400) / 100,
        disk_used_percent: Math.round(random() * 90),
      },
    };
  });
}

type Context = BenchContext<Options, ConsoleBenchReport>;
/** `monitor all` with the console built, and the key it was started with. */
type Target = { monitor: BenchProcess; key: string; headers: Record<string, string> };

async function start({ report, cleanup, processes }: Context): Promise<Target> {
  const key = `mon_bench_${randomBytes(16).toString('hex')}`;
  const stack = await startMonitorStack({
    services: ['postgres'],
    cleanup,
    logDir: report.logDir,
    databasePrefix: 'bench_console',
    env: {
      MONITOR_BOOTSTRAP_API_KEY: key,
      INGEST_RATE_LIMIT_PER_MINUTE: '1000000000',
      SERVICE_STALE_AFTER_SECONDS: '86400',
    },
  });
  report.settings.origins = stack.serviceOrigins;
  logProgress('building the console');
  await run('npm', ['run', 'build', '--workspace', '@monitor/console'], { cwd: process.cwd() });
  logProgress('starting monitor all');
  const monitor = await stack.startRole('all');
  processes.push(monitor);
  const headers = { 'content-type': 'application/json', 'x-api-key': key };
  return { monitor, key, headers };
}

/** Two alert rules and the fleet's services, ingested through the API (timed). */
async function seed({ monitor, headers }: Target, { options, report }: Context): Promise<void> {
  for (const rule of [
    { name: 'cpu critical', threshold: 95, severity: 'critical' },
    { name: 'cpu warning', threshold: 85, severity: 'warning' },
  ]) {
    const response = await fetch(`${monitor.baseUrl}/api/v1/alerts/rules`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ ...rule, metric: 'cpu_percent', condition: 'greater_than' }),
    });
    if (response.status !== 201) throw new Error(`rule: HTTP ${response.status}`);
  }

  logProgress(`ingesting ${options.services} services`);
  const ingestStart = performance.now();
  const all = payloads(options.services, new Date());
  for (let at = 0; at < all.length; at += batchSize) {
    const response = await fetch(`${monitor.baseUrl}/api/v1/ingest`, {
      method: 'POST',
      headers,
      body: JSON.stringify(all.slice(at, at + batchSize)),
    });
    if (response.status !== 200) throw new Error(`ingest: HTTP ${response.status}`);
  }
  for (;;) {
    const response = await fetch(`${monitor.baseUrl}/api/v1/services?limit=1`, { headers });
    const body = (await response.json()) as { pagination: { total: number } };
    if (body.pagination.total >= options.services) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  report.ingest = {
    seconds: (performance.now() - ingestStart) / 1000,
    services: options.services,
  };
  logProgress(`listed after ${report.ingest.seconds.toFixed(1)} s`);
}

/** Page loads and interactions in Chromium, run by run. */
async function measure(
  { monitor, key }: Target,
  { options, report, cleanup }: Context,
): Promise<void> {
  const browser = await chromium.launch({
    executablePath: report.settings.chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  cleanup.add('chromium', () => browser.close());
  for (let index = 0; index < options.runs; index += 1) {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    // The key as the sign-in form leaves it, and a long-task observer from the first script on.
    await context.addInitScript(`
      sessionStorage.setItem('monitor.api_key', ${JSON.stringify(key)});
      window.__longTasks = [];
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) window.__longTasks.push(entry.duration);
      }).observe({ type: 'longtask', buffered: true });
    `);
    const page = await context.newPage();
    await page.goto(`${monitor.baseUrl}/services`, { waitUntil: 'commit' });
    const firstScreenMs = await frameWhen(
      page,
      `document.querySelector('.group') !== null &&
       document.querySelectorAll('.service-table tbody tr:not(.spacer)').length > 0`,
    );
    const allLoadedMs = await frameWhen(
      page,
      `document.querySelector('.view-head [role=status]')?.textContent?.startsWith(${JSON.stringify(
        `${options.services.toLocaleString('en-US')} services`,
      )})`,
      120_000,
    );
    const tasks = await page.evaluate<number[]>('window.__longTasks');
    const load: LoadFigures = {
      firstScreenMs,
      allLoadedMs,
      longTasks: tasks.length,
      longTasksTotalMs: tasks.reduce((a, b) => a + b, 0),
      longestTaskMs: Math.max(0, ...tasks),
    };
    report.loads.push(load);
    report.interactions.push(await interact(page, report.notes));
    logProgress(
      `run ${index + 1}: first screen ${ms(load.firstScreenMs)} ms, all ${ms(load.allLoadedMs)} ms`,
    );
    await context.close();
  }
}

/**
 * The page's `performance.now()` at the first animation frame where `condition` (a JavaScript
 * expression) holds. Evaluated through the DevTools protocol: the console's CSP forbids the
 * string evaluation `waitForFunction` does inside the page.
 */
async function frameWhen(page: Page, condition: string, timeoutMs = 60_000): Promise<number> {
  return page.evaluate<number>(`new Promise((resolve, reject) => {
    const deadline = performance.now() + ${timeoutMs};
    const check = () => {
      if (${condition}) resolve(performance.now());
      else if (performance.now() > deadline)
        reject(new Error('timed out: ' + ${JSON.stringify(condition)}));
      else requestAnimationFrame(check);
    };
    check();
  })`);
}

/** Time from an input to the frame that shows its result, on the fully loaded page. */
async function interact(page: Page, notes: string[]): Promise<InteractionFigures> {
  const timed = async (act: () => Promise<void>, done: string): Promise<number> => {
    const start = await page.evaluate<number>('performance.now()');
    await act();
    const end = await frameWhen(page, done);
    return end - start;
  };
  const filterMs = await timed(
    () => page.getByLabel('Filter').fill('role=db zone=b'),
    `document.querySelector('.service-table [role=status]')?.textContent !== ${JSON.stringify(
      '',
    )} && [...document.querySelectorAll('.service-table tbody tr:not(.spacer) td.tags')].every((cell) => cell.textContent.includes('role=db'))`,
  );
  await page.getByLabel('Filter').fill('');
  const regroupMs = await timed(async () => {
    await page.getByLabel('Group by tag').selectOption('role');
  }, `document.querySelectorAll('.group').length >= 8`);
  // Eight roles, so eight groups; a ninth holds services listed without a `role` tag.
  const untagged = await page.evaluate<string[]>(
    `[...document.querySelectorAll('.group figcaption')].map((each) => each.textContent).filter((text) => text.startsWith('no role'))`,
  );
  if (untagged.length > 0)
    notes.push(`regrouped by role, a group of services without the tag: ${untagged.join('; ')}`);
  const scrollToEndMs = await timed(
    () =>
      page.evaluate(`(() => {
        const scroller = document.querySelector('.table-scroll');
        scroller.scrollTop = scroller.scrollHeight;
      })()`),
    `[...document.querySelectorAll('.service-table tbody tr:not(.spacer)')].length > 0 &&
     Number([...document.querySelectorAll('.service-table tbody tr:not(.spacer)')].at(-1).getAttribute('aria-rowindex')) ===
     Number(document.querySelector('.service-table table').getAttribute('aria-rowcount'))`,
  );
  return { filterMs, regroupMs, scrollToEndMs };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

function formatReport(report: ReportBase & ConsoleBenchReport): string {
  const { loads, interactions } = report;
  const column = (name: string, values: number[], format: (value: number) => string = ms) =>
    `  ${name.padEnd(34)} median ${format(median(values)).padStart(8)}  min ${format(Math.min(...values)).padStart(8)}  max ${format(Math.max(...values)).padStart(8)}`;
  const lines = [
    `Console: the services view over ${int(report.settings.services)} services, ${loads.length} cold loads`,
    formatMachine(report.machine),
    `Chromium ${report.settings.chromium}; ingest of the services ${report.ingest.seconds.toFixed(1)} s`,
    '',
    'Load (ms from navigation start)',
  ];
  if (loads.length > 0) {
    lines.push(
      column(
        'first screen (map + first rows)',
        loads.map((each) => each.firstScreenMs),
      ),
      column(
        'every service listed',
        loads.map((each) => each.allLoadedMs),
      ),
      column(
        'long tasks (count)',
        loads.map((each) => each.longTasks),
        int,
      ),
      column(
        'long tasks (total ms)',
        loads.map((each) => each.longTasksTotalMs),
      ),
      column(
        'longest task (ms)',
        loads.map((each) => each.longestTaskMs),
      ),
      '',
      'On the loaded page (ms from input to the frame showing it)',
      column(
        'filter typed',
        interactions.map((each) => each.filterMs),
      ),
      column(
        'map regrouped by a tag',
        interactions.map((each) => each.regroupMs),
      ),
      column(
        'table scrolled to its end',
        interactions.map((each) => each.scrollToEndMs),
      ),
    );
  }
  return [...lines, ...formatNotes(report), ''].join('\n');
}

await runBench({
  name: 'console',
  usage,
  defaults: { services: '10000', runs: '5' },
  parseOptions: (values): Options => ({
    services: integerOption('services', values.services, 1, 100_000),
    runs: integerOption('runs', values.runs, 1, 50),
  }),
  createReport: (options) => ({
    settings: { ...options, chromium: chromiumPath(), origins: {} },
    ingest: { seconds: 0, services: 0 },
    loads: [],
    interactions: [],
  }),
  start,
  seed,
  measure,
  format: formatReport,
});
