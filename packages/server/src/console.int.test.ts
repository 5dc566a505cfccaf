// @services postgres
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import axe from 'axe-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Database } from '@monitor/db';
import type { NativeHistogram } from '@monitor/schemas';
import { createApiKeyStore, createDatabase, createOrgStore, refreshRollups } from '@monitor/db';
import { createTestDatabase } from '@monitor/testkit';
import type { TestDatabase } from '@monitor/testkit';
import { buildAlertRuleCreateRequest, createApiCall, waitFor } from '@monitor/testkit/builders';
import { serviceUrl } from '@monitor/testkit/vitest';
import { buildConsole, launchChromium } from './testing/console-browser.js';
import { postIngest } from './testing/ingest-client.js';
import { encode } from './testing/prometheus-fixture.js';
import type { SeriesData } from './testing/prometheus-fixture.js';
import type { RoleProcess } from './testing/role-process.js';
import { startRoleProcess } from './testing/role-process.js';

/**
 * The web console in a real browser (Debian's Chromium through playwright-core) against the
 * real service (`monitor all` on PostgreSQL) holding data sent through /api/v1/ingest. The
 * screenshots of the main views land in docs/screenshots/ for the README.
 */
const key = `mon_test_${randomBytes(16).toString('hex')}`;
const screenshotsDir = fileURLToPath(new URL('../../../docs/screenshots/', import.meta.url));
const minuteMs = 60_000;
const historyMinutes = 110;

let database: TestDatabase;
let db: Database;
let monitor: RoleProcess;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Every URL the page requested, and every console message it logged or error it threw. */
const requested: string[] = [];
const logged: string[] = [];
const ids: Record<string, string> = {};

type Json = Record<string, unknown>;

/** expect.poll with room for a busy 2-core machine (its default gives up after 1 s). */
const poll: typeof expect.poll = (probe, options) =>
  expect.poll(probe, {
    timeout: 15_000,
    interval: 100,
    ...(typeof options === 'string' ? { message: options } : options),
  });

const api = createApiCall({ baseUrl: () => `${monitor.baseUrl}/api/v1`, key });

const hosts = [
  { host: 'web-1', tags: { env: 'prod', role: 'web' }, lastMinutesAgo: 0 },
  { host: 'web-2', tags: { env: 'prod', role: 'web' }, lastMinutesAgo: 0 },
  { host: 'db-1', tags: { env: 'prod', role: 'db' }, lastMinutesAgo: 0 },
  { host: 'batch-1', tags: { env: 'staging', role: 'batch' }, lastMinutesAgo: 20 },
];

/** A minute-by-minute history of each host, its newest sample with containers and processes. */
function history(now: number): Json[] {
  const payloads: Json[] = [];
  hosts.forEach(({ host, tags, lastMinutesAgo }, index) => {
    for (let minute = historyMinutes; minute >= lastMinutesAgo; minute -= 1) {
      const phase = (minute + index * 17) / 9;
      payloads.push({
        host,
        tags,
        timestamp: new Date(now - minute * minuteMs).toISOString(),
        metrics: {
          cpu_percent: Number((40 + 25 * Math.sin(phase) + index * 3).toFixed(2)),
          memory_percent: Number((55 + 10 * Math.cos(phase / 2)).toFixed(2)),
          load_1m: Number((1 + Math.abs(Math.sin(phase / 3)) * 2).toFixed(3)),
        },
        ...(minute === lastMinutesAgo
          ? {
              docker_containers: [
                {
                  name: `${host}-app`,
                  image: 'example/app:1.4.2',
                  status: 'running',
                  cpu_percent: 12.5,
                  memory_usage: 268_435_456,
                },
                {
                  name: `${host}-sidecar`,
                  image: 'example/proxy:2.0',
                  status: 'running',
                  cpu_percent: 1.2,
                  memory_usage: 33_554_432,
                },
              ],
              processes: [
                { name: 'node', pid: 4100 + index, cpu_percent: 31.5, memory_rss: 512_000_000 },
                { name: 'postgres', pid: 880 + index, cpu_percent: 4.25, memory_rss: 128_000_000 },
                { name: 'sshd', pid: 612, cpu_percent: 0, memory_rss: 6_000_000 },
              ],
            }
          : {}),
      });
    }
  });
  return payloads;
}

/** A deterministic uniform random number generator (mulberry32): the same screenshot each run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = Math.imul(state ^ (state >>> 15), state | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const latencyTicks = 240;
const latencyTickMs = 15_000;

/**
 * web-2's request latency as a client library exports it and Prometheus remote-writes it:
 * native histograms (schema 3, eight buckets per doubling) of a counter that grows every 15 s
 * over the hour up to `endMs` (the view's shortest range), by 150 requests from a log-normal
 * distribution around 80 ms that slows to 200 ms, and spreads, halfway. Labelled with web-2's
 * own tags, so its service keeps them (an agent's labels are its host's tags).
 */
function latencyHistograms(endMs: number): SeriesData {
  const random = seededRandom(58);
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const buckets = new Map<number, number>();
  let count = 0;
  let sum = 0;
  const histograms: [number, NativeHistogram][] = [];
  for (let tick = 0; tick < latencyTicks; tick += 1) {
    const [median, spread] = tick < latencyTicks / 2 ? [0.08, 0.45] : [0.2, 0.55];
    for (let request = 0; request < 150; request += 1) {
      const seconds = median * Math.exp(spread * normal());
      // Schema 3's bucket i holds (2^((i-1)/8), 2^(i/8)].
      const index = Math.ceil(Math.log2(seconds) * 8);
      buckets.set(index, (buckets.get(index) ?? 0) + 1);
      count += 1;
      sum += seconds;
    }
    const lowest = Math.min(...buckets.keys());
    const length = Math.max(...buckets.keys()) - lowest + 1;
    histograms.push([
      endMs - (latencyTicks - 1 - tick) * latencyTickMs,
      {
        integer: true,
        schema: 3,
        zeroThreshold: 2 ** -128,
        zeroCount: 0,
        count,
        sum,
        positiveSpans: [{ offset: lowest, length }],
        positiveBuckets: Array.from({ length }, (_, i) => buckets.get(lowest + i) ?? 0),
        negativeSpans: [],
        negativeBuckets: [],
        counterResetHint: 'unknown',
        customValues: [],
      },
    ]);
  }
  return {
    labels: { __name__: 'request_duration_seconds', host: 'web-2', ...hosts[1]!.tags },
    samples: [],
    histograms,
  };
}

/** Sends series to the service as Prometheus' remote-write 1.0 does. */
async function remoteWrite(series: SeriesData[]): Promise<void> {
  const answer = await fetch(`${monitor.baseUrl}/api/v1/write`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-protobuf',
      'Content-Encoding': 'snappy',
      'X-Prometheus-Remote-Write-Version': '0.1.0',
      Authorization: `Bearer ${key}`,
    },
    body: encode(series),
  });
  expect(answer.ok, await answer.text()).toBe(true);
}

/** An instant query of the Prometheus API: its vector's first value, if any. */
async function instantValue(query: string, timeMs: number): Promise<number | undefined> {
  const search = new URLSearchParams({ query, time: String(timeMs / 1000) });
  const answer = await fetch(`${monitor.baseUrl}/prometheus/api/v1/query?${search.toString()}`, {
    headers: { 'X-API-Key': key },
  });
  const { data } = (await answer.json()) as { data: { result: { value: [number, string] }[] } };
  const [first] = data.result;
  return first === undefined ? undefined : Number(first.value[1]);
}

async function ingest(body: unknown): Promise<void> {
  const result = await postIngest(monitor.baseUrl, body, { key });
  expect(result.status, JSON.stringify(result.body)).toBe(200);
}

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: `${screenshotsDir}${name}.png`, fullPage: true });
}

/** The view's heading, once the view drew it. */
async function heading(): Promise<string> {
  return (await page.locator('main h1').first().textContent()) ?? '';
}

beforeAll(async () => {
  await Promise.all([buildConsole(), mkdir(screenshotsDir, { recursive: true })]);
  database = await createTestDatabase(serviceUrl('postgres'), 'console');
  db = createDatabase({ url: database.url, maxConnections: 2 });
  monitor = await startRoleProcess('all', {
    DATABASE_URL: database.url,
    MONITOR_BOOTSTRAP_API_KEY: key,
  });

  const now = Date.now();
  const payloads = history(now);
  for (let at = 0; at < payloads.length; at += 500) await ingest(payloads.slice(at, at + 500));
  const expectedSamples = payloads.length * 3;
  await waitFor(
    async () => {
      const [row] = await db.sql<{ count: number }[]>`select count(*)::int as count from samples`;
      return (row?.count ?? 0) >= expectedSamples ? true : undefined;
    },
    60_000,
    'every sample written',
  );
  await refreshRollups(db, { now: new Date() });

  // Rules, then the samples that make them fire: web-2 critical, db-1 warning.
  const cpu = await api<{ id: string }>('/alerts/rules', {
    method: 'POST',
    body: buildAlertRuleCreateRequest({ name: 'CPU saturated', scope: { env: 'prod' } }),
  });
  expect(cpu.status).toBe(201);
  const memory = await api<{ id: string }>('/alerts/rules', {
    method: 'POST',
    body: buildAlertRuleCreateRequest({
      name: 'Memory high',
      metric: 'memory_percent',
      threshold: 80,
      severity: 'warning',
    }),
  });
  expect(memory.status).toBe(201);
  await ingest([
    {
      host: 'web-2',
      tags: hosts[1]!.tags,
      metrics: { cpu_percent: 97.5, memory_percent: 61, load_1m: 3.2 },
    },
    {
      host: 'db-1',
      tags: hosts[2]!.tags,
      metrics: { cpu_percent: 35, memory_percent: 86.25, load_1m: 1.4 },
    },
  ]);
  await waitFor(
    async () => {
      const { status, body } = await api<{ alerts: { investigation_id: string | null }[] }>(
        '/alerts',
      );
      expect(status, JSON.stringify(body)).toBe(200);
      return body.alerts.length === 2 &&
        body.alerts.every((alert) => alert.investigation_id !== null)
        ? true
        : undefined;
    },
    60_000,
    'two active alerts with their investigations',
  );
  await waitFor(
    async () => {
      const { body } = await api<{ investigations: { status: string }[] }>('/investigations');
      return body.investigations.every((each) => each.status === 'completed') ? true : undefined;
    },
    90_000,
    'the investigations completed',
  );
  const { body: services } = await api<{ services: { id: string; name: string }[] }>('/services');
  for (const service of services.services) ids[service.name] = service.id;

  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  page = await context.newPage();
  page.on('request', (request) => requested.push(request.url()));
  page.on('console', (message) => logged.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => logged.push(`pageerror: ${error.message}`));
});

afterAll(async () => {
  await browser?.close();
  await monitor?.stop();
  await db?.close();
  await database?.drop();
});

describe('the web console in Chromium', () => {
  it('loads at / without a key, under the strict CSP, and asks for the key in a password field', async () => {
    const response = await page.goto(`${monitor.baseUrl}/`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("default-src 'self'");
    const input = page.locator('form input[name="api_key"]');
    await poll(() => input.getAttribute('type')).toBe('password');
    expect(await page.locator('input').count()).toBe(1);
    expect(await page.getByLabel('API key').count()).toBe(1);
  });

  it('says so when the key is refused (401), and keeps nothing', async () => {
    await page.locator('input[name="api_key"]').fill('mon_wrong_key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await poll(() => page.getByRole('alert').first().textContent()).toContain('refused (401)');
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    expect(await page.locator('input[name="api_key"]').count()).toBe(1);
  });

  it('signs in and shows the host map (one tile per service, coloured by status) and the table', async () => {
    await page.locator('input[name="api_key"]').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await poll(() => page.locator('.tile').count()).toBe(4);
    const status = async (name: string) =>
      page.locator(`.tile[aria-label^="${name},"]`).getAttribute('class');
    expect(await status('web-2')).toContain('status-critical');
    expect(await status('db-1')).toContain('status-warning');
    expect(await status('web-1')).toContain('status-healthy');
    expect(await status('batch-1')).toContain('status-stale');
    await poll(() => page.locator('.service-table tbody tr:not(.spacer)').count()).toBe(4);
  });

  it('groups the map by the tag picked, kept in the URL', async () => {
    await page.getByLabel('Group by tag').selectOption('role');
    await poll(() => page.locator('.group').count()).toBe(3);
    expect(new URL(page.url()).searchParams.get('group')).toBe('role');
    const captions = await page.locator('.group figcaption strong').allTextContents();
    expect(captions).toEqual(['role=web', 'role=batch', 'role=db']);
    await screenshot('services');
  });

  it('sorts and filters the table', async () => {
    const names = () =>
      page.locator('.service-table tbody tr:not(.spacer) td:first-child').allTextContents();
    expect(await names()).toEqual(['batch-1', 'db-1', 'web-1', 'web-2']);
    await page.getByRole('button', { name: /^Status/ }).click();
    await poll(names).toEqual(['web-2', 'db-1', 'batch-1', 'web-1']);
    await page.getByLabel('Filter').fill('role=web');
    await poll(names).toEqual(['web-2', 'web-1']);
    await page.getByLabel('Filter').fill('');
    await poll(names).toHaveLength(4);
  });

  it('refreshes on its own: a new host appears, and the map it joins is updated in place', async () => {
    // A mark on a DOM node the refresh must keep: re-rendering the whole page would drop it.
    await page.evaluate(`document.querySelector('.group').dataset.mark = 'kept'`);
    await ingest({
      host: 'web-3',
      tags: { env: 'prod', role: 'web' },
      metrics: { cpu_percent: 12 },
    });
    await poll(() => page.locator('.tile[aria-label^="web-3,"]').count(), { timeout: 30_000 }).toBe(
      1,
    );
    expect(await page.evaluate<string>(`document.querySelector('.group').dataset.mark`)).toBe(
      'kept',
    );
    expect(await page.locator('.group').first().locator('.tile').count()).toBe(3);
  });

  it('opens a service: latest metrics, a chart per metric drawn by uPlot, containers, processes, alerts', async () => {
    await page.locator('.tile[aria-label^="web-2,"]').click();
    await page.waitForURL(`**/services/${ids['web-2']}`);
    await poll(heading).toContain('web-2');
    await poll(() => page.locator('.chart canvas').count()).toBe(3);
    expect(await page.locator('#active-alerts-title + ul li').textContent()).toContain(
      'CPU saturated',
    );
    expect(await page.locator('section[aria-labelledby="containers-title"] tbody tr').count()).toBe(
      2,
    );
    expect(await page.locator('section[aria-labelledby="processes-title"] tbody tr').count()).toBe(
      3,
    );
    await poll(() => bluePixels('cpu_percent')).toBeGreaterThan(50);
    await screenshot('service');
  });

  it('changes the range (the right step for it) and keeps it, and the sign-in, across a reload', async () => {
    await page.getByRole('radio', { name: '6h' }).check();
    await page.waitForURL(/range=6h/);
    await poll(() => page.locator('.chart figcaption').first().textContent()).toContain('1m step');
    await page.getByRole('radio', { name: '7d' }).check();
    await page.waitForURL(/range=7d/);
    await poll(() => page.locator('.chart figcaption').first().textContent()).toContain('1h step');
    await page.reload();
    await poll(heading).toContain('web-2');
    expect(await page.getByRole('radio', { name: '7d' }).isChecked()).toBe(true);
    expect(requested.some((url) => url.includes('/metrics?') && url.includes('step=1h'))).toBe(
      true,
    );
  });

  it("runs PromQL under the host's charts: a range query of /prometheus, its series drawn by uPlot", async () => {
    await page.getByRole('radio', { name: '1h' }).check();
    const box = page.getByLabel('PromQL', { exact: true });
    expect(await box.inputValue()).toBe('{host="web-2"}');
    await box.fill('avg by (host) (cpu_percent{env="prod"})');
    // The prod hosts: web-1, web-2, db-1, and web-3 from the refresh test. The query runs again
    // until web-3's sample is in its range (a run at the very moment can miss it).
    await poll(async () => {
      await page.getByRole('button', { name: 'Run' }).click();
      return await page.locator('.promql figcaption').textContent();
    }).toBe('4 series, 15 s step');
    await poll(() => page.locator('.promql canvas').count()).toBe(1);
    const legend = (await page.locator('.promql .u-legend').textContent()) ?? '';
    for (const host of ['web-1', 'web-2', 'web-3', 'db-1']) {
      expect(legend).toContain(`{host="${host}"}`);
    }
    expect(legend).not.toContain('batch-1');
    expect(requested.some((url) => url.includes('/prometheus/api/v1/query_range?'))).toBe(true);
    await screenshot('service-promql');
  });

  it('draws native histograms in the PromQL box: a heatmap of the buckets under p50, p90, p99', async () => {
    const endMs = Date.now();
    await remoteWrite([latencyHistograms(endMs)]);
    // Stored in order: the first histogram and the last one there means all of them are.
    const firstMs = endMs - (latencyTicks - 1) * latencyTickMs;
    for (const [atMs, count] of [
      [firstMs, 150],
      [endMs, 150 * latencyTicks],
    ] as const) {
      await waitFor(
        async () =>
          (await instantValue('histogram_count(request_duration_seconds)', atMs)) === count
            ? true
            : undefined,
        30_000,
        `the histogram at ${new Date(atMs).toISOString()} stored`,
      );
    }
    const box = page.getByLabel('PromQL', { exact: true });
    const legend = () => page.locator('.promql .histogram-chart .u-legend').innerText();
    const run = async (expr: string) => {
      await box.fill(expr);
      await page.getByRole('button', { name: 'Run' }).click();
    };

    // The host's selector, as the box comes: its floats as lines, its histograms as a heatmap.
    await run('{host="web-2"}');
    await poll(() => page.locator('.promql > figcaption').textContent()).toBe(
      '4 series, 15 s step: 3 of floats, 1 of native histograms',
    );
    await poll(() => page.locator('.promql canvas').count()).toBe(2);
    expect(await page.locator('.promql > .chart-canvas .u-legend').innerText()).toContain(
      'cpu_percent{',
    );

    // The histograms' selector: the counters as they grow, the series named.
    await run('request_duration_seconds{host="web-2"}');
    await poll(() => page.locator('.promql > figcaption').textContent()).toBe(
      '1 series, 15 s step: 1 of native histograms',
    );
    const labels = 'env="prod", host="web-2", role="web"';
    await poll(legend).toContain(`p50 request_duration_seconds{${labels}}`);
    for (const q of ['p90', 'p99']) {
      expect(await legend()).toContain(`${q} request_duration_seconds{${labels}}`);
    }
    // The white casings under the lines are series of their own, kept out of the legend.
    expect(await legend()).not.toContain('casing');

    // Their rate, as a latency panel shows it: the name dropped, the distribution per minute.
    await run('rate(request_duration_seconds{host="web-2"}[1m])');
    await poll(legend).toContain(`p99 {${labels}}`);
    // No float series: the histogram's chart alone, its colour scale beside it.
    expect(await page.locator('.promql canvas').count()).toBe(1);
    expect(await page.locator('.promql .heatmap-scale-bar').count()).toBe(1);
    await poll(async () => (await heatmapPixels()).cells, {
      message: 'the heatmap cells',
    }).toBeGreaterThan(20_000);
    expect((await heatmapPixels()).p50, 'the p50 line').toBeGreaterThan(300);

    // What the pointer reads: p50 near 80 ms in the first half hour, near 200 ms after.
    const p50At = async (fraction: number) => {
      const over = await page.locator('.promql .histogram-chart .u-over').boundingBox();
      expect(over).not.toBeNull();
      const pointed = page.locator('.promql .heatmap-pointed');
      // Off the chart first: the reading empties, so the next one is not the last one's.
      await page.mouse.move(0, 0);
      await poll(() => pointed.textContent()).toBe('');
      await page.mouse.move(over!.x + over!.width * fraction, over!.y + over!.height * 0.4);
      await poll(() => pointed.textContent()).toMatch(/p50 [\d.]+/);
      return Number(/p50 ([\d.]+)/.exec((await pointed.textContent()) ?? '')?.[1]);
    };
    const before = await p50At(0.25);
    expect(before).toBeGreaterThan(0.06);
    expect(before).toBeLessThan(0.11);
    const after = await p50At(0.85);
    expect(after).toBeGreaterThan(0.15);
    expect(after).toBeLessThan(0.26);
    expect(await page.locator('.promql .heatmap-pointed').textContent()).toMatch(
      /p90 [\d.]+ · p99 [\d.]+ · bucket \(/,
    );
    expect(await axeViolations('.promql')).toEqual([]);
    await screenshot('service-promql-histogram');
  });

  it('serves every view at its own URL: a deep link reloads into it', async () => {
    const views: [string, string][] = [
      ['/alerts', 'Alerts'],
      ['/rules', 'Rules'],
      ['/rules/new', 'New rule'],
      ['/investigations', 'Investigations'],
      ['/silences', 'Silences'],
      [`/services/${ids['db-1']}`, 'db-1'],
      ['/services?group=env', 'Services'],
    ];
    for (const [path, title] of views) {
      await page.goto(`${monitor.baseUrl}${path}`);
      await poll(heading, { message: path }).toContain(title);
    }
    await poll(() => page.locator('.group').count()).toBe(2);
  });

  it('lists the alerts with filters', async () => {
    await page.goto(`${monitor.baseUrl}/alerts`);
    await poll(() => page.locator('main tbody tr').count()).toBe(2);
    await page.getByLabel('Severity').selectOption('critical');
    await page.waitForURL(/severity=critical/);
    await poll(() => page.locator('main tbody tr').count()).toBe(1);
    expect(await page.locator('main tbody tr').textContent()).toContain('CPU saturated');
    await screenshot('alerts');
  });

  it('shows an investigation: findings, evidence and the timeline', async () => {
    await page.locator('main tbody tr a', { hasText: 'open' }).click();
    await page.waitForURL(/\/investigations\/inv_/);
    await poll(() => page.locator('.findings > li').count()).toBeGreaterThan(0);
    expect(await page.locator('.timeline > li').count()).toBeGreaterThan(0);
    await page.locator('.findings details summary').first().click();
    expect(await page.locator('.findings details pre').first().textContent()).toMatch(/\S/);
    await screenshot('investigation');
  });

  it('acknowledges one alert and silences another from the alerts view', async () => {
    await page.goto(`${monitor.baseUrl}/alerts`);
    const cpuRow = page.locator('main tbody tr', { hasText: 'CPU saturated' });
    await cpuRow.getByRole('button', { name: 'Acknowledge' }).click();
    await page.getByLabel('Comment').fill('looking into it');
    await page.getByRole('button', { name: 'Confirm acknowledgement' }).click();
    await poll(() => cpuRow.textContent()).toContain('acknowledged');
    const memoryRow = page.locator('main tbody tr', { hasText: 'Memory high' });
    await memoryRow.getByRole('button', { name: 'Silence' }).click();
    await page.getByLabel('For').selectOption('4');
    await page.getByRole('button', { name: 'Create silence' }).click();
    await poll(() => memoryRow.textContent()).toContain('silenced');

    const { body } = await api<{
      alerts: { rule_name: string; acknowledgement_comment: string | null; silenced: boolean }[];
    }>('/alerts');
    const byRule = Object.fromEntries(body.alerts.map((alert) => [alert.rule_name, alert]));
    expect(byRule['CPU saturated']).toMatchObject({ acknowledgement_comment: 'looking into it' });
    expect(byRule['Memory high']).toMatchObject({ silenced: true });

    await page.getByLabel('Acknowledged').selectOption('true');
    await page.waitForURL(/acknowledged=true/);
    await poll(() => page.locator('main tbody tr').count()).toBe(1);
  });

  it('lists the silence, refuses one without matchers on its form, and expires it', async () => {
    await page.goto(`${monitor.baseUrl}/silences`);
    const rows = page.locator('main table tbody tr');
    await poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain(`service_id=${ids['db-1']}`);
    await page.getByLabel('Comment').fill('nothing matched');
    await page.getByRole('button', { name: 'Create silence' }).click();
    await poll(() => page.locator('main [role=alert]').count()).toBeGreaterThan(0);
    await rows
      .first()
      .getByRole('button', { name: /^Expire silence/ })
      .click();
    await poll(() => page.locator('main').textContent()).toContain('No silences.');
    const { body } = await api<{ silences: { state: string }[] }>('/silences?state=expired');
    expect(body.silences.map((silence) => silence.state)).toEqual(['expired']);
  });

  it('creates a recurring maintenance window, the bad time zone shown on its field first', async () => {
    await page.getByLabel('Host').fill('web-1');
    await page.getByLabel(/^RRULE/).fill('FREQ=DAILY;BYHOUR=2;BYMINUTE=0');
    await page.getByLabel('Window (minutes)').fill('60');
    await page.getByLabel('Time zone (IANA)').fill('Mars/Olympus_Mons');
    await page.getByLabel('Comment').fill('nightly backup');
    await page.getByRole('button', { name: 'Create silence' }).click();
    await poll(() => page.locator('#silence-timezone-error').count()).toBe(1);
    expect(await page.locator('#silence-timezone').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Time zone (IANA)').fill('Europe/Paris');
    await page.getByRole('button', { name: 'Create silence' }).click();
    await poll(() => page.locator('main table tbody tr').first().textContent()).toContain(
      'FREQ=DAILY;BYHOUR=2;BYMINUTE=0 (60 min, Europe/Paris)',
    );
    await screenshot('silences');
  });

  it("shows the API's 422 next to the field it names, then creates the rule", async () => {
    await page.goto(`${monitor.baseUrl}/rules/new`);
    await page.getByLabel('Name', { exact: true }).fill('Load too high');
    await page.getByLabel('Metric').fill('load_1m');
    await page.getByLabel('Threshold', { exact: true }).fill('4');
    await page.getByLabel('Duration (minutes)').fill('5000');
    await page.getByRole('button', { name: 'Create rule' }).click();
    const error = page.locator('#rule-duration_minutes-error');
    await poll(() => error.textContent()).toContain('1440');
    expect(await page.locator('#rule-duration_minutes').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#rule-duration_minutes').getAttribute('aria-describedby')).toContain(
      'rule-duration_minutes-error',
    );
    expect(await page.locator('.field-error').count()).toBe(1);
    await screenshot('rule-422');
    await page.getByLabel('Duration (minutes)').fill('10');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.waitForURL(/\/rules\/rul_/);
    await poll(() => page.getByRole('status').first().textContent()).toContain('Rule created');
    const { body } = await api<{ rules: { name: string; duration_minutes: number }[] }>(
      '/alerts/rules',
    );
    expect(body.rules.find((rule) => rule.name === 'Load too high')?.duration_minutes).toBe(10);
  });

  it('edits the rule: a recovery threshold on the breaching side is refused on its field, then saved', async () => {
    const ruleUrl = page.url();
    await page.reload();
    await poll(() => page.getByLabel('Threshold', { exact: true }).inputValue()).toBe('4');
    await page.getByLabel('Recovery threshold').fill('10');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await poll(() => page.locator('#rule-recovery_threshold-error').count()).toBe(1);
    expect(await page.locator('.field-error').count()).toBe(1);
    await page.getByLabel('Recovery threshold').fill('3');
    await page.getByLabel('Renotify every (minutes)').fill('30');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await poll(() => page.getByRole('status').first().textContent()).toContain('Rule saved');
    expect(page.url()).toBe(ruleUrl);
    const id = new URL(ruleUrl).pathname.split('/').at(-1)!;
    const { body } = await api<{
      recovery_threshold: number;
      renotify_minutes: number;
      duration_minutes: number;
    }>(`/alerts/rules/${id}`);
    expect(body).toMatchObject({
      recovery_threshold: 3,
      renotify_minutes: 30,
      duration_minutes: 10,
    });
  });

  it('moves through the sections by keyboard', async () => {
    await page.goto(`${monitor.baseUrl}/services`);
    await poll(heading).toContain('Services');
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement?.textContent')).toBe(
      'Skip to content',
    );
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement?.textContent')).toBe('Alerts');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/alerts$/);
    await poll(() => page.evaluate<string>('document.activeElement?.tagName')).toBe('H1');
  });

  it("passes axe-core's WCAG A/AA checks on every main view", async () => {
    for (const path of [
      '/services',
      `/services/${ids['web-1']}`,
      '/alerts',
      '/rules/new',
      '/investigations',
      '/silences',
    ]) {
      await page.goto(`${monitor.baseUrl}${path}`);
      await page.waitForSelector('main h1');
      await page.waitForLoadState('networkidle');
      expect(await axeViolations('html'), path).toEqual([]);
    }
  });

  it('never puts the key in a URL, a cookie or localStorage; only sessionStorage holds it', async () => {
    expect(requested.length).toBeGreaterThan(20);
    expect(requested.filter((url) => url.includes(key))).toEqual([]);
    expect(await context.cookies()).toEqual([]);
    expect(await page.evaluate<string>('JSON.stringify(localStorage)')).not.toContain(key);
    expect(await page.evaluate<number>('localStorage.length')).toBe(0);
    expect(await page.evaluate<string[]>('Object.values(sessionStorage)')).toEqual([key]);
    expect(requested.every((url) => url.startsWith(monitor.baseUrl))).toBe(true);
  });

  it('draws no CSP violation and logs no error but the answers the tests asked for (a 401, four 422s)', () => {
    const errors = logged.filter((line) => /Content Security Policy|^(page)?error/i.test(line));
    expect(errors).toEqual([
      'error: Failed to load resource: the server responded with a status of 401 (Unauthorized)',
      'error: Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)',
      'error: Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)',
      'error: Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)',
      'error: Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)',
    ]);
  });

  it('signs out: the key is gone and the sign-in form is back', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await poll(() => page.locator('input[name="api_key"]').count()).toBe(1);
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    await page.reload();
    expect(await page.locator('input[name="api_key"]').count()).toBe(1);
  });

  it('says a key lacks the write scope (403) when it tries to save a rule', async () => {
    const org = await createOrgStore(db).createOrganization(
      `readonly-${randomBytes(4).toString('hex')}`,
    );
    const { key: readOnly } = await createApiKeyStore(db).createKey({
      orgId: org.id,
      name: 'viewer',
      scopes: ['read'],
    });
    await page.goto(`${monitor.baseUrl}/rules/new`);
    await page.locator('input[name="api_key"]').fill(readOnly);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Name', { exact: true }).fill('x');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await poll(() => page.getByRole('alert').first().textContent()).toContain('403');
  });
});

/** axe-core's WCAG A/AA violations within `selector`, each its rule and the nodes it found. */
async function axeViolations(selector: string): Promise<string[]> {
  await page.evaluate(axe.source);
  return page.evaluate<string[]>(`
    axe.run(${JSON.stringify(selector)}, { runOnly: ['wcag2a', 'wcag2aa'] }).then((result) =>
      result.violations.map((each) => each.id + ': ' + JSON.stringify(each.nodes.map((node) => node.target))),
    )
  `);
}

/**
 * Pixels of the PromQL box's heatmap: its cells (the oranges of heatmapColour) and its p50
 * line (#1d4ed8).
 */
async function heatmapPixels(): Promise<{ cells: number; p50: number }> {
  return page.evaluate<{ cells: number; p50: number }>(`(() => {
    const canvas = document.querySelector('.promql .histogram-chart canvas');
    if (!canvas) return { cells: 0, p50: 0 };
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const near = (value, target) => Math.abs(value - target) < 24;
    let cells = 0;
    let p50 = 0;
    for (let at = 0; at < data.length; at += 4) {
      const [r, g, b, a] = [data[at], data[at + 1], data[at + 2], data[at + 3]];
      if (a < 200) continue;
      if (r > 120 && r - b > 40 && r >= g && g >= b) cells += 1;
      if (near(r, 0x1d) && near(g, 0x4e) && near(b, 0xd8)) p50 += 1;
    }
    return { cells, p50 };
  })()`);
}

/** Pixels of the avg series' colour (#2563eb) on the chart of `metric`: the line uPlot drew. */
async function bluePixels(metric: string): Promise<number> {
  return page.evaluate<number>(`(() => {
    const figure = [...document.querySelectorAll('.chart')].find(
      (each) => each.querySelector('figcaption strong')?.textContent === ${JSON.stringify(metric)},
    );
    const canvas = figure?.querySelector('canvas');
    if (!canvas) return 0;
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let count = 0;
    for (let at = 0; at < data.length; at += 4) {
      const near = (value, target) => Math.abs(value - target) < 24;
      if (data[at + 3] > 200 && near(data[at], 0x25) && near(data[at + 1], 0x63) && near(data[at + 2], 0xeb)) count += 1;
    }
    return count;
  })()`);
}
