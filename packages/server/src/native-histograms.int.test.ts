// @services postgres
import { randomBytes } from 'node:crypto';
import { OTLPMetricExporter as OtlpProtoExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationType,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import snappy from 'snappy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '@monitor/db';
import { createDatabase, defaultOrganizationId, readHistograms } from '@monitor/db';
import type { NativeHistogram, TimedHistogram } from '@monitor/schemas';
import type { NativeHistogramExporter, TestDatabase } from '@monitor/testkit';
import {
  createTestDatabase,
  startCollector,
  startNativeHistogramExporter,
  startPrometheus,
} from '@monitor/testkit';
import { waitFor } from '@monitor/testkit/builders';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { RoleProcess } from './testing/role-process.js';
import { startRoleProcess } from './testing/role-process.js';
import { readTypes } from './testing/remote-read-client.js';

/**
 * Native histograms as a Prometheus user sends them: a program instrumented with the Prometheus
 * Go client library observes on its own; a real Prometheus 2.42 with
 * `--enable-feature=native-histograms` scrapes it every second, keeps what it scraped, and
 * remote-writes it here. What we stored must be what Prometheus holds: every histogram at every
 * timestamp, its count, sum and every bucket, as its query API shows them. And the OpenTelemetry
 * metrics SDK's base-2 exponential histograms, sent through OTLP straight and through the
 * OpenTelemetry Collector, are stored as Prometheus' OTLP translation converts them.
 */
const key = `mon_test_${randomBytes(16).toString('hex')}`;
let database: TestDatabase;
let db: Database;
let monitor: RoleProcess;
let exporter: NativeHistogramExporter | undefined;
let prometheus: Awaited<ReturnType<typeof startPrometheus>> | undefined;
let collector: Awaited<ReturnType<typeof startCollector>> | undefined;

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
    exemplars: true,
    scrapeTargets: [{ job: 'shop', address: exporter.address }],
    remoteWrite: { url: `${monitor.baseUrl}/api/v1/write`, bearerToken: key },
  });
});

afterAll(async () => {
  await collector?.stop();
  await prometheus?.stop();
  await exporter?.stop();
  await monitor?.stop();
  await db?.close();
  await database?.drop();
});

let stopped: Promise<number> | undefined;

/**
 * Ten scrapes, then the program stops and Prometheus' scrapes fail: both sides then hold the
 * same, for good. Answers a time after the last scrape.
 */
function scrapedAndStopped(): Promise<number> {
  stopped ??= (async () => {
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
    return Date.now() + 1_000;
  })();
  return stopped;
}

type QueryAnswer = { status: string; data?: { resultType: string; result: unknown } };

/** A query's answer, its series in the order of their labels (Prometheus sorts only matrices). */
async function answerOf(base: string, path: string, params: Record<string, string>) {
  const response = await fetch(`${base}${path}?${new URLSearchParams(params).toString()}`, {
    headers: { Authorization: `Bearer ${key}` },
  });
  const body = (await response.json()) as QueryAnswer;
  const result = body.data?.result;
  if (Array.isArray(result)) {
    const keyOf = (series: { metric: Record<string, string> }) =>
      JSON.stringify(Object.entries(series.metric).sort());
    result.sort((a: { metric: Record<string, string> }, b: { metric: Record<string, string> }) =>
      keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0,
    );
  }
  return body;
}

describe('native histograms from a real Prometheus 2.42 and the Go client library', () => {
  it('are stored as Prometheus holds them: every timestamp, count, sum and bucket', async () => {
    const atMs = await scrapedAndStopped();
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
    // The latencies' exemplars (trace ids the client keeps per classic bucket), as Prometheus
    // keeps them for the native histogram's series and remote-writes them.
    const exemplars = async (base: string, headers: Record<string, string>) => {
      const params = new URLSearchParams({
        query: 'checkout_latency_seconds',
        start: '0',
        end: String(atMs / 1000),
      });
      const response = await fetch(`${base}/api/v1/query_exemplars?${params.toString()}`, {
        headers,
      });
      return (await response.json()) as { data: { exemplars: unknown[] }[] };
    };
    const theirs = await exemplars(prometheus!.url, {});
    expect(theirs.data.flatMap((series) => series.exemplars).length).toBeGreaterThan(0);
    const ours = await waitFor(
      async () => {
        const answer = await exemplars(`${monitor.baseUrl}/prometheus`, {
          Authorization: `Bearer ${key}`,
        });
        return JSON.stringify(answer) === JSON.stringify(theirs) ? answer : undefined;
      },
      30_000,
      'the same exemplars here',
      // Never equal: the last answer, so that the failure below shows the difference.
    ).catch(async () =>
      exemplars(`${monitor.baseUrl}/prometheus`, { Authorization: `Bearer ${key}` }),
    );
    expect(ours).toEqual(theirs);
  });

  it('are read by PromQL as Prometheus 2.42 reads them, to the last bit', async () => {
    const atMs = await scrapedAndStopped();
    const held = await prometheusHolds(atMs);
    const scrapes = held
      .find((series) => series.metric['route'] === '/pay')!
      .histograms!.map(([seconds]) => Math.round(seconds * 1000));
    const last = scrapes[scrapes.length - 1]!;
    // Both sides must hold every scrape before they are compared.
    await waitFor(
      async () => {
        const ours = await weHold(held[0]!.metric, atMs);
        const theirs = held[0]!.histograms!.length;
        return ours.length >= theirs ? true : undefined;
      },
      30_000,
      'every histogram stored',
    );
    const latency = 'checkout_latency_seconds';
    const instant = [
      `{__name__=~"${latency}|temperature_change_celsius"}[1h]`,
      latency,
      `rate(${latency}[5s])`,
      `increase(${latency}[10s])`,
      `sum(rate(${latency}[5s]))`,
      `sum by (route) (increase(${latency}[10s]))`,
      `histogram_quantile(0.9, rate(${latency}[5s]))`,
      `histogram_quantile(0.5, sum(rate(${latency}[10s])))`,
      `histogram_count(rate(${latency}[5s]))`,
      `histogram_sum(rate(${latency}[5s]))`,
      `histogram_fraction(0, 0.1, rate(${latency}[10s]))`,
      `histogram_quantile(0.99, ${latency}) > 0`,
      `avg(${latency})`,
      `${latency} * 2`,
      `${latency} + ${latency}`,
      'histogram_quantile(0.5, temperature_change_celsius)',
      'delta(temperature_change_celsius[10s])',
      'sum(temperature_change_celsius)',
      // Floats (Prometheus' `up`) beside histograms.
      `sum by (job) ({__name__=~"${latency}|up"})`,
      `sum by (__name__) ({__name__=~"${latency}|up"})`,
      `{__name__=~"${latency}|up"} + 1`,
      `histogram_count({__name__=~"${latency}|up"})`,
    ];
    const times = [last, last + 700, scrapes[Math.floor(scrapes.length / 2)]! - 300];
    for (const query of instant) {
      for (const timeMs of times) {
        const params = { query, time: String(timeMs / 1000) };
        const theirs = await answerOf(prometheus!.url, '/api/v1/query', params);
        expect(theirs.status, query).toBe('success');
        if (!query.startsWith('sum by (job)')) expect(theirs.data?.result, query).not.toEqual([]);
        const ours = await answerOf(`${monitor.baseUrl}/prometheus`, '/api/v1/query', params);
        expect(ours, `${query} at ${timeMs}`).toEqual(theirs);
      }
    }
    const ranged = [
      latency,
      `rate(${latency}[5s])`,
      `sum(rate(${latency}[5s]))`,
      `histogram_quantile(0.9, sum by (route) (rate(${latency}[5s])))`,
      'histogram_sum(temperature_change_celsius)',
    ];
    for (const query of ranged) {
      const params = {
        query,
        start: String(scrapes[2]! / 1000),
        end: String((last + 1_000) / 1000),
        step: '1.5',
      };
      const theirs = await answerOf(prometheus!.url, '/api/v1/query_range', params);
      expect(theirs.status, query).toBe('success');
      const ours = await answerOf(`${monitor.baseUrl}/prometheus`, '/api/v1/query_range', params);
      expect(ours, query).toEqual(theirs);
    }
  });

  // SAMPLES asked, and streamed chunks first with SAMPLES beside (as later Prometheus clients
  // ask): both answered with samples, the histograms among them.
  it.each([[[0]], [[1, 0]]])(
    'are answered to a remote read accepting %j, each as Prometheus holds it',
    async (acceptedResponseTypes) => {
      const atMs = await scrapedAndStopped();
      const held = await prometheusHolds(atMs);
      const type = readTypes.lookupType('ReadRequest');
      const request = type.fromObject({
        queries: [
          {
            startTimestampMs: atMs - 3_600_000,
            endTimestampMs: atMs,
            matchers: [{ type: 0, name: '__name__', value: 'checkout_latency_seconds' }],
          },
        ],
        acceptedResponseTypes,
      });
      const response = await fetch(`${monitor.baseUrl}/prometheus/api/v1/read`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${key}`,
          'Content-Type': 'application/x-protobuf',
          'Content-Encoding': 'snappy',
        },
        body: snappy.compressSync(Buffer.from(type.encode(request).finish())),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/x-protobuf');
      const answer = readTypes
        .lookupType('ReadResponse')
        .toObject(
          readTypes
            .lookupType('ReadResponse')
            .decode(snappy.uncompressSync(Buffer.from(await response.arrayBuffer())) as Buffer),
          { longs: Number, defaults: true },
        ) as {
        results: {
          timeseries: {
            labels: { name: string; value: string }[];
            histograms: {
              timestamp: number;
              countFloat: number;
              sum: number;
              zeroCountFloat: number;
              positiveCounts: number[];
            }[];
          }[];
        }[];
      };
      const sent = answer.results[0]!.timeseries;
      expect(sent).toHaveLength(2);
      for (const series of sent) {
        const route = series.labels.find((l) => l.name === 'route')?.value;
        const theirs = held.find((s) => s.metric['route'] === route)!.histograms!;
        // Every histogram, at its time, with its count and sum; its buckets add up to its count.
        expect(series.histograms.map((h) => [h.timestamp, h.countFloat, h.sum])).toEqual(
          theirs.map(([seconds, h]) => [
            Math.round(seconds * 1000),
            Number(h.count),
            Number(h.sum),
          ]),
        );
        for (const h of series.histograms) {
          const inBuckets = h.positiveCounts.reduce((sum, count) => sum + count, h.zeroCountFloat);
          expect(inBuckets).toBe(h.countFloat);
        }
      }
    },
  );

  /** What the SDK is given: values in many buckets, one of them twice, and a zero. */
  const recorded = [0, 0.003, 0.02, 0.02, 0.5, 1.7, 12, 30, 250, 3_000];
  /** Values so close that the SDK keeps its finest scale, 20: Prometheus' finest is 8. */
  const narrow = [1.5, 1.50001, 1.50002, 1.6];

  /**
   * Each recorded value's bucket at `schema`, counted: bucket i holds (2^((i-1)/2^schema),
   * 2^(i/2^schema)], as the SDK's scale and Prometheus' schema agree (none of these values lies
   * on a bound); zero in the zero bucket.
   */
  function expectedBuckets(values: readonly number[], schema: number): Map<number, number> {
    const buckets = new Map<number, number>();
    for (const value of values) {
      if (value === 0) continue;
      const index = Math.ceil(Math.log2(value) * 2 ** schema);
      buckets.set(index, (buckets.get(index) ?? 0) + 1);
    }
    return buckets;
  }

  function bucketsOf(histogram: NativeHistogram): Map<number, number> {
    const found = new Map<number, number>();
    let index = 0;
    let at = 0;
    for (const span of histogram.positiveSpans) {
      index += span.offset;
      for (let i = 0; i < span.length; i++, index++) {
        const count = histogram.positiveBuckets[at++]!;
        if (count > 0) found.set(index, count);
      }
    }
    return found;
  }

  it.each(['straight', 'through the OpenTelemetry Collector'] as const)(
    'the OpenTelemetry SDK’s exponential histograms, sent %s, are stored as Prometheus’ OTLP translation converts them',
    async (route) => {
      let url = `${monitor.baseUrl}/api/v1/otlp/v1/metrics`;
      let headers: Record<string, string> = { Authorization: `Bearer ${key}` };
      if (route !== 'straight') {
        collector ??= await startCollector({ endpoint: `${monitor.baseUrl}/api/v1/otlp`, key });
        url = `${collector.otlpHttpUrl}/v1/metrics`;
        headers = {};
      }
      const host = `otel-exponential-${route === 'straight' ? 'sdk' : 'collector'}`;
      const provider = new MeterProvider({
        resource: resourceFromAttributes({ 'host.name': host }),
        readers: [
          new PeriodicExportingMetricReader({
            exporter: new OtlpProtoExporter({
              url,
              headers,
              // Its only instruments are histograms.
              aggregationPreference: () => ({ type: AggregationType.EXPONENTIAL_HISTOGRAM }),
            }),
            exportIntervalMillis: 60_000,
          }),
        ],
      });
      const histogram = provider.getMeter('native-histograms-test').createHistogram('job.duration');
      for (const value of recorded) histogram.record(value, { queue: 'mail' });
      const close = provider.getMeter('native-histograms-test').createHistogram('job.narrow');
      for (const value of narrow) close.record(value);
      await provider.forceFlush();
      await provider.shutdown();

      const stored = await waitFor(
        async () => {
          const found = await weHold(
            { __name__: 'job.duration', 'host.name': host, queue: 'mail' },
            Date.now() + 60_000,
          );
          return found.length > 0 ? found : undefined;
        },
        30_000,
        `the exponential histogram of ${host}`,
      );
      // Exported at the flush and again at the shutdown: the same cumulative histogram, twice.
      const { histogram: kept } = stored[0]!;
      for (const each of stored) expect(each.histogram).toEqual(kept);
      expect(kept).toMatchObject({
        integer: true,
        zeroThreshold: 1e-128,
        zeroCount: 1,
        count: recorded.length,
        counterResetHint: 'unknown',
        negativeSpans: [],
      });
      expect(kept.sum).toBeCloseTo(
        recorded.reduce((sum, value) => sum + value, 0),
        9,
      );
      // The SDK's scale, the finest at which 160 buckets hold these values (2, for six orders
      // of magnitude): every value must be in its bucket at that schema.
      expect(kept.schema).toBeGreaterThanOrEqual(-4);
      expect(kept.schema).toBeLessThanOrEqual(8);
      expect(bucketsOf(kept)).toEqual(expectedBuckets(recorded, kept.schema));
      // The scale brought down to 8, buckets merged as Prometheus' translation merges them.
      const [closeKept] = await weHold(
        { __name__: 'job.narrow', 'host.name': host },
        Date.now() + 60_000,
      );
      expect(closeKept?.histogram).toMatchObject({ schema: 8, count: narrow.length });
      expect(bucketsOf(closeKept!.histogram)).toEqual(expectedBuckets(narrow, 8));
    },
  );
});
