// @services postgres
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '@monitor/db';
import { createDatabase, defaultOrganizationId, readHistograms } from '@monitor/db';
import type { NativeHistogram, TimedHistogram } from '@monitor/schemas';
import type { NativeHistogramExporter, TestDatabase } from '@monitor/testkit';
import {
  createTestDatabase,
  startNativeHistogramExporter,
  startPrometheus,
} from '@monitor/testkit';
import { waitFor } from '@monitor/testkit/builders';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { RoleProcess } from './testing/role-process.js';
import { startRoleProcess } from './testing/role-process.js';

/**
 * Native histograms as a Prometheus user sends them: a program instrumented with the Prometheus
 * Go client library observes on its own; a real Prometheus 2.42 with
 * `--enable-feature=native-histograms` scrapes it every second, keeps what it scraped, and
 * remote-writes it here. What we stored must be what Prometheus holds: every histogram at every
 * timestamp, its count, sum and every bucket, as its query API shows them.
 */
const key = `mon_test_${randomBytes(16).toString('hex')}`;
let database: TestDatabase;
let db: Database;
let monitor: RoleProcess;
let exporter: NativeHistogramExporter | undefined;
let prometheus: Awaited<ReturnType<typeof startPrometheus>> | undefined;

/** A bucket as Prometheus' JSON shows it: boundary rule, lower and upper bound, count. */
type JsonBucket = [number, string, string, string];
type JsonHistogram = { count: string; sum: string; buckets?: JsonBucket[] };
type PrometheusSeries = { metric: Record<string, string>; histograms?: [number, JsonHistogram][] };

/** Every raw histogram of the last hour that Prometheus holds, by series. */
async function prometheusHolds(atMs: number): Promise<PrometheusSeries[]> {
  const query = '{__name__=~"checkout_latency_seconds|temperature_change_celsius"}[1h]';
  const params = new URLSearchParams({ query, time: String(atMs / 1000) });
  const response = await fetch(`${prometheus?.url ?? ''}/api/v1/query?${params.toString()}`);
  const body = (await response.json()) as { data: { result: PrometheusSeries[] } };
  return body.data.result;
}

/** What we stored of the series with these labels (as remote-write labels them). */
async function weHold(labels: Record<string, string>, atMs: number): Promise<TimedHistogram[]> {
  const { __name__: metric, ...tags } = labels;
  const rows = await db.sql<{ id: string }[]>`
    select r.id::text as id from series r join services v on v.id = r.service_id
    where v.org_id = ${defaultOrganizationId} and r.metric = ${metric!}
      and r.labels = ${JSON.stringify(tags)}::text::jsonb
  `;
  if (rows.length !== 1) return [];
  const id = rows[0]!.id;
  return (await readHistograms(db, [id], atMs - 3_600_000, atMs)).get(id) ?? [];
}

/**
 * A stored histogram as Prometheus' JSON renders one (web/api/v1 marshalHistogram): count, sum,
 * and its non-empty buckets from the lowest (negative ones, the zero bucket, positive ones),
 * each bucket's bounds 2^((i-1)/2^schema) and 2^(i/2^schema), as numbers here: Prometheus takes
 * them from tables, so the last bits may differ from this formula's.
 */
function rendered(histogram: NativeHistogram) {
  const base = 2 ** (2 ** -histogram.schema);
  const buckets: number[][] = [];
  const walk = (spans: NativeHistogram['positiveSpans'], counts: number[]) => {
    const found: { index: number; count: number }[] = [];
    let index = 0;
    let at = 0;
    for (const span of spans) {
      index += span.offset;
      for (let i = 0; i < span.length; i++) found.push({ index: index++, count: counts[at++]! });
    }
    return found.filter((bucket) => bucket.count !== 0);
  };
  const threshold = histogram.zeroThreshold;
  for (const { index, count } of walk(
    histogram.negativeSpans,
    histogram.negativeBuckets,
  ).reverse()) {
    buckets.push([
      1,
      bound(-(base ** index)),
      bound(Math.min(-(base ** (index - 1)), -threshold)),
      count,
    ]);
  }
  if (histogram.zeroCount > 0) {
    buckets.push([3, bound(-threshold), bound(threshold), histogram.zeroCount]);
  }
  for (const { index, count } of walk(histogram.positiveSpans, histogram.positiveBuckets)) {
    buckets.push([0, bound(Math.max(base ** (index - 1), threshold)), bound(base ** index), count]);
  }
  return { count: histogram.count, sum: histogram.sum, buckets };
}

/** A bound to 12 significant digits: the formula's and the tables' agree that far. */
const bound = (value: number | string): number => Number(Number(value).toPrecision(12));

function parsed(histogram: JsonHistogram) {
  return {
    count: Number(histogram.count),
    sum: Number(histogram.sum),
    buckets: (histogram.buckets ?? []).map(([rule, lower, upper, count]) => [
      rule,
      bound(lower),
      bound(upper),
      Number(count),
    ]),
  };
}

beforeAll(async () => {
  exporter = await startNativeHistogramExporter();
  database = await createTestDatabase(serviceUrl('postgres'), 'native_histograms');
  db = createDatabase({ url: database.url, maxConnections: 2 });
  monitor = await startRoleProcess('all', {
    DATABASE_URL: database.url,
    MONITOR_BOOTSTRAP_API_KEY: key,
  });
  prometheus = await startPrometheus({
    nativeHistograms: true,
    scrapeTargets: [{ job: 'shop', address: exporter.address }],
    remoteWrite: { url: `${monitor.baseUrl}/api/v1/write`, bearerToken: key },
  });
});

afterAll(async () => {
  await prometheus?.stop();
  await exporter?.stop();
  await monitor?.stop();
  await db?.close();
  await database?.drop();
});

describe('native histograms from a real Prometheus 2.42 and the Go client library', () => {
  it('are stored as Prometheus holds them: every timestamp, count, sum and bucket', async () => {
    // Ten scrapes, then Prometheus stops scraping: both sides then hold the same, for good.
    await waitFor(
      async () => {
        const held = await prometheusHolds(Date.now());
        const pay = held.find((series) => series.metric['route'] === '/pay');
        return (pay?.histograms?.length ?? 0) >= 10 ? true : undefined;
      },
      90_000,
      'ten scrapes in Prometheus',
    );
    await exporter?.stop();
    const atMs = Date.now() + 1_000;
    const held = await prometheusHolds(atMs);
    expect(held.map((series) => series.metric['__name__']).sort()).toEqual([
      'checkout_latency_seconds',
      'checkout_latency_seconds',
      'temperature_change_celsius',
    ]);
    for (const series of held) {
      const theirs = (series.histograms ?? []).map(([seconds, histogram]) => ({
        timeMs: Math.round(seconds * 1000),
        ...parsed(histogram),
      }));
      const ours = await waitFor(
        async () => {
          const stored = await weHold(series.metric, atMs);
          return stored.length >= theirs.length ? stored : undefined;
        },
        30_000,
        `every histogram of ${JSON.stringify(series.metric)} stored`,
      );
      expect(ours.map(({ timeMs, histogram }) => ({ timeMs, ...rendered(histogram) }))).toEqual(
        theirs,
      );
    }
  });
});
