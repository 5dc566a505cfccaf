// @services postgres
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@monitor/testkit';
import { createTestDatabase, startPrometheus } from '@monitor/testkit';
import { createApiCall, waitFor } from '@monitor/testkit/builders';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { RoleProcess } from './testing/role-process.js';
import { startRoleProcess } from './testing/role-process.js';

/**
 * Exemplars as a Prometheus user sends them: a real Prometheus 2.42 with its exemplar storage
 * scrapes an OpenMetrics exposition whose exemplars change from scrape to scrape, keeps them,
 * and remote-writes them here (`send_exemplars: true`). `query_exemplars` must then answer here
 * exactly as it answers there, for the same expressions and ranges.
 */
const key = `mon_test_${randomBytes(16).toString('hex')}`;
let database: TestDatabase;
let monitor: RoleProcess;
let prometheus: Awaited<ReturnType<typeof startPrometheus>> | undefined;
let target: Server;

/** Scrapes that expose new exemplars; later ones expose the last text again (no-ops for both). */
const changingScrapes = 6;
let scrapes = 0;
let lastExposition = '';

/**
 * The exposition of one scrape: a counter of two series and a histogram, each with an exemplar
 * (trace and span ids, times with milliseconds and jitter, as client libraries write them).
 */
function exposition(): string {
  if (scrapes >= changingScrapes) return lastExposition;
  scrapes += 1;
  const round = scrapes;
  const nowMs = Date.now();
  const time = (offsetMs: number) => ((nowMs - offsetMs) / 1000).toFixed(3);
  const trace = (series: string) => `${series}${round}`.padEnd(32, '0');
  lastExposition = [
    '# TYPE checkout_requests counter',
    `checkout_requests_total{route="/pay"} ${10 + round} # {trace_id="${trace('a')}"} ${0.25 * round} ${time(37)}`,
    `checkout_requests_total{route="/cart"} ${3 + round} # {trace_id="${trace('b')}",span_id="${round}f"} 1 ${time(11)}`,
    '# TYPE checkout_latency_seconds histogram',
    `checkout_latency_seconds_bucket{le="0.1"} ${round} # {trace_id="${trace('c')}"} ${round}e-7 ${time(5)}`,
    `checkout_latency_seconds_bucket{le="+Inf"} ${2 * round}`,
    `checkout_latency_seconds_sum ${0.3 * round}`,
    `checkout_latency_seconds_count ${2 * round}`,
    '# EOF',
    '',
  ].join('\n');
  return lastExposition;
}

type ExemplarAnswer = { status: number; body: unknown };

const ours = createApiCall({ baseUrl: () => monitor.baseUrl, key });

async function both(query: string, range: Record<string, string>) {
  const params = new URLSearchParams({ query, ...range }).toString();
  const path = `query_exemplars?${params}`;
  const [mine, theirs] = await Promise.all([
    ours<unknown>(`/prometheus/api/v1/${path}`),
    fetch(`${prometheus?.url ?? ''}/api/v1/${path}`).then(
      async (response): Promise<ExemplarAnswer> => ({
        status: response.status,
        body: response.status === 204 ? undefined : await response.json(),
      }),
    ),
  ]);
  return { ours: { status: mine.status, body: mine.body }, prometheus: theirs };
}

/** How many exemplars an answer holds. */
function exemplarCount(body: unknown): number {
  const data = (body as { data?: { exemplars: unknown[] }[] } | undefined)?.data ?? [];
  return data.reduce((total, series) => total + series.exemplars.length, 0);
}

beforeAll(async () => {
  target = createServer((_req, res) => {
    res.setHeader('Content-Type', 'application/openmetrics-text; version=1.0.0; charset=utf-8');
    res.end(exposition());
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  database = await createTestDatabase(serviceUrl('postgres'), 'exemplars');
  monitor = await startRoleProcess('all', {
    DATABASE_URL: database.url,
    MONITOR_BOOTSTRAP_API_KEY: key,
  });
  prometheus = await startPrometheus({
    exemplars: true,
    scrapeTargets: [
      { job: 'shop', address: `127.0.0.1:${(target.address() as AddressInfo).port}` },
    ],
    remoteWrite: { url: `${monitor.baseUrl}/api/v1/write`, bearerToken: key },
  });
});

afterAll(async () => {
  await prometheus?.stop();
  await monitor?.stop();
  await database?.drop();
  await new Promise((resolve) => target?.close(resolve));
});

describe('query_exemplars against Prometheus 2.42 with exemplar storage', () => {
  const all = { start: '0', end: String(Date.now() / 1000 + 3600) };

  it('answers every expression and range as Prometheus does, once both hold what it scraped', async () => {
    // Both sides hold all of them: three series, one exemplar per changing scrape each.
    await waitFor(
      async () => {
        const answers = await both('{__name__=~"checkout_.+"}', all);
        const counts = [exemplarCount(answers.ours.body), exemplarCount(answers.prometheus.body)];
        return counts[0] === 3 * changingScrapes && counts[1] === counts[0] ? counts : undefined;
      },
      90_000,
      'every exemplar on both sides',
    );
    const answer = await both('checkout_requests_total', all);
    const series = (answer.prometheus.body as { data: { exemplars: { timestamp: number }[] }[] })
      .data;
    const times = series.flatMap((each) => each.exemplars.map((e) => e.timestamp)).sort();
    // A range that cuts through the exemplars, on their own times (inclusive at both ends).
    const cut = { start: String(times[2]), end: String(times[times.length - 3]) };
    for (const [query, range] of [
      ['checkout_requests_total', all],
      ['checkout_requests_total{route="/cart"}', all],
      ['{__name__=~"checkout_.+"}', all],
      ['{__name__=~"checkout_.+"}', cut],
      [
        'rate(checkout_requests_total[5m]) / on(job) group_left checkout_latency_seconds_count',
        all,
      ],
      ['checkout_latency_seconds_bucket{le="0.1"}', cut],
      ['checkout_requests_total{route="/none"}', all],
      ['1 + 1', all],
    ] as const) {
      const { ours: mine, prometheus: theirs } = await both(query, range);
      expect({ query, range, ...mine }).toEqual({ query, range, ...theirs });
    }
  });
});
