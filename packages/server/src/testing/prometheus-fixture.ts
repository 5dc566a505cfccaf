import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import express from 'express';
import protobuf from 'protobufjs';
import snappy from 'snappy';
import { createPrometheusRouter } from '@monitor/api';
import type { ApiKeyAuthenticator } from '@monitor/auth';
import type { Database } from '@monitor/db';
import { partitionForKey } from '@monitor/bus';
import {
  createExemplarReader,
  createRuleGroupStateStore,
  createSampleStore,
  createShardedExemplarReader,
} from '@monitor/db';
import { createFloat64SlabPool, createSourceTiersReader } from '@monitor/db/series';
import { createLogger } from '@monitor/platform';
import { createPromqlEngine } from '@monitor/promql';
import { decodeRemoteWriteV1 } from '@monitor/protocols';
import type { NativeHistogram } from '@monitor/schemas';
import { sampleMessageKey } from '@monitor/schemas';
import { shardedSeriesSource } from '../sample-shards.js';

// The PromQL oracle's fixture, shared by the tests that compare us with Prometheus 2.42: its
// data, the remote-write body that carries it to both, our Prometheus API over a database, and
// the comparison of two answers.

/** Partitions of the samples topic the fixture's shards split, as a deployment's 6. */
const fixturePartitions = 6;

/**
 * Stores a remote-write body (`encode`'s) for `orgId` as the gateway and the writer would: every
 * point must be taken, and an agent's tags label its series. Over several databases (sample
 * shards), each host's samples go to the shard of its partition (`p % shards`), as a writer
 * stores them.
 */
export async function storeRemoteWrite(
  target: Database | readonly Database[],
  orgId: string,
  body: Buffer,
): Promise<void> {
  const decoded = decodeRemoteWriteV1(body, { nowMs: Date.now(), maxDecodedBytes: 64 << 20 });
  if (Object.keys(decoded.rejected).length > 0) {
    throw new Error(`the fixture's points were refused: ${JSON.stringify(decoded.rejected)}`);
  }
  const dbs = databasesOf(target);
  for (const [i, db] of dbs.entries()) {
    const samples = decoded.samples.filter((s) => fixtureShardOf(orgId, s.host, dbs.length) === i);
    if (samples.length === 0) continue;
    await createSampleStore(db).writeBatch({
      samples: samples.map((s) => ({
        ...s,
        orgId,
        tagsLabelSeries: true,
        containers: [],
        processes: [],
      })),
    });
  }
}

/** The index of the shard (of `shards`) holding the host's samples in the fixture. */
function fixtureShardOf(orgId: string, host: string, shards: number): number {
  return partitionForKey(sampleMessageKey({ org_id: orgId, host }), fixturePartitions) % shards;
}

function databasesOf(target: Database | readonly Database[]): readonly Database[] {
  return 'sql' in target ? [target] : target;
}

/**
 * Sends a remote-write body (`encode`'s) to a Prometheus' receiver (`--web.enable-remote-write-
 * receiver`) as its own remote-write would; rejects unless it answers 204, with its reason.
 */
export async function remoteWriteToPrometheus(prometheusUrl: string, body: Buffer): Promise<void> {
  const sent = await fetch(`${prometheusUrl}/api/v1/write`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-protobuf',
      'Content-Encoding': 'snappy',
      'X-Prometheus-Remote-Write-Version': '0.1.0',
    },
    body,
  });
  const reason = await sent.text();
  if (sent.status !== 204) throw new Error(`Prometheus answered ${sent.status}: ${reason}`);
}

/**
 * A series to write: its labels and [ms, value] samples. A NaN is a staleness marker, unless
 * `nanIsValue`: then it is Prometheus' NormalNaN, a value (a summary's quantile without
 * observations).
 */
export type SeriesData = {
  labels: Record<string, string>;
  samples: [number, number][];
  nanIsValue?: true;
  /** Native histograms, written as integer histograms (their counts whole), [ms, histogram]. */
  histograms?: [number, NativeHistogram][];
};

/** One prompb.Histogram with integer counts, its buckets as deltas, as Prometheus sends it. */
function writeIntegerHistogram(writer: protobuf.Writer, timeMs: number, h: NativeHistogram) {
  const spans = (field: number, list: NativeHistogram['positiveSpans']) => {
    for (const span of list) {
      writer
        .uint32((field << 3) | 2)
        .fork()
        .uint32(1 << 3)
        .sint32(span.offset)
        .uint32(2 << 3)
        .uint32(span.length)
        .ldelim();
    }
  };
  const deltas = (field: number, counts: number[]) => {
    if (counts.length === 0) return;
    writer.uint32((field << 3) | 2).fork();
    let previous = 0;
    for (const count of counts) {
      writer.sint64(count - previous);
      previous = count;
    }
    writer.ldelim();
  };
  writer.uint32((4 << 3) | 2).fork(); // TimeSeries.histograms
  writer.uint32(1 << 3).uint64(h.count); // count_int
  writer.uint32((3 << 3) | 1).double(h.sum);
  writer.uint32(4 << 3).sint32(h.schema);
  writer.uint32((5 << 3) | 1).double(h.zeroThreshold);
  writer.uint32(6 << 3).uint64(h.zeroCount); // zero_count_int
  spans(8, h.negativeSpans);
  deltas(9, h.negativeBuckets);
  spans(11, h.positiveSpans);
  deltas(12, h.positiveBuckets);
  writer.uint32(15 << 3).int64(timeMs);
  writer.ldelim();
}

/** A deterministic random walk (no Math.random: the oracle's data is the same on every run). */
function seeded(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

/**
 * 4 hosts in 2 regions, 50 minutes at 15 s: gauges, counters with resets, a host with a
 * 10-minute gap (longer than the lookback), jittered sample times; per host a classic histogram
 * (`*_bucket` by `le` up to `+Inf`, `_sum`, `_count`; h1's counters reset) and CPU counters
 * labelled `cpu` and `mode` beyond the host's labels; staleness markers (NaN here) in the middle
 * of h2's `temp_celsius` (it resumes four minutes later), at the end of one of h1's CPU series
 * and of h4's whole histogram (its target gone).
 */
export function oracleData(startMs: number): SeriesData[] {
  const out: SeriesData[] = [];
  const hosts = [
    { host: 'h1', region: 'eu', env: 'prod' },
    { host: 'h2', region: 'eu', env: 'dev' },
    { host: 'h3', region: 'us', env: 'prod' },
    { host: 'h4', region: 'us', env: 'prod' },
  ];
  const random = seeded(42);
  for (const [hi, h] of hosts.entries()) {
    const labels = { ...h, job: 'node' };
    const times = Array.from(
      { length: 200 },
      (_, i) => startMs + i * 15_000 + (hi === 3 ? Math.floor(random() * 5_000) : 0),
    );
    const gap = (t: number) => hi === 2 && t >= startMs + 20 * 60_000 && t < startMs + 30 * 60_000;
    let load = 1 + hi;
    let requests = 0;
    let bytes = 1000 * hi;
    const load1: [number, number][] = [];
    const req: [number, number][] = [];
    const bytesTotal: [number, number][] = [];
    const temp: [number, number][] = [];
    times.forEach((t, i) => {
      load = Math.max(0, load + (random() - 0.5));
      requests = i % 70 === 69 ? Math.floor(random() * 10) : requests + Math.floor(random() * 20);
      bytes = i === 120 && hi === 1 ? 5 : bytes + Math.round(random() * 1e4) / 4;
      if (gap(t)) return;
      load1.push([t, Math.round(load * 1000) / 1000]);
      req.push([t, requests]);
      bytesTotal.push([t, bytes]);
      // h2's temperature goes stale at 19:30 and comes back at 23:30.
      if (hi === 1 && i === 78) temp.push([t, Number.NaN]);
      else if (!(hi === 1 && i > 78 && i < 94)) {
        temp.push([t, 20 + hi + Math.round(Math.sin(i / 10) * 500) / 100]);
      }
    });
    out.push({ labels: { __name__: 'node_load1', ...labels }, samples: load1 });
    out.push({ labels: { __name__: 'http_requests_total', ...labels }, samples: req });
    out.push({ labels: { __name__: 'net_bytes_total', ...labels }, samples: bytesTotal });
    out.push({ labels: { __name__: 'temp_celsius', ...labels }, samples: temp });
    out.push(...histogramData(labels, times, hi, gap));
    out.push(...cpuData(labels, times, hi, gap));
  }
  out.push(...scrapedData(startMs));
  return out;
}

/**
 * Series labelled as a stock Prometheus labels what it scrapes: `instance` and `job`, no `host`.
 * Two node exporters and Prometheus itself, 50 minutes at 15 s, each target at its own offset in
 * the interval plus a few milliseconds of jitter per scrape (as Prometheus' own timestamps
 * have); `up`, a gauge, a counter and the scrape's duration. 10.0.0.2 is down (up 0, no other
 * series) from 30:00 to 34:00.
 */
function scrapedData(startMs: number): SeriesData[] {
  const random = seeded(3000);
  const targets = [
    { instance: '10.0.0.1:9100', job: 'node', offsetMs: 1_234 },
    { instance: '10.0.0.2:9100', job: 'node', offsetMs: 7_020 },
    { instance: 'localhost:9090', job: 'prometheus', offsetMs: 11_500 },
  ];
  const out: SeriesData[] = [];
  for (const [ti, { offsetMs, ...labels }] of targets.entries()) {
    const up: [number, number][] = [];
    const memory: [number, number][] = [];
    const cpu: [number, number][] = [];
    const duration: [number, number][] = [];
    let memoryBytes = 40e6 * (ti + 1);
    let cpuSeconds = 10 * ti;
    for (let i = 0; i < 200; i++) {
      const t = startMs + offsetMs + i * 15_000 + Math.floor(random() * 25);
      const down = ti === 1 && i >= 120 && i < 136;
      memoryBytes = Math.max(1e6, memoryBytes + Math.round((random() - 0.5) * 1e6));
      cpuSeconds = Math.round((cpuSeconds + random() * 0.4) * 1000) / 1000;
      up.push([t, down ? 0 : 1]);
      if (down) continue;
      memory.push([t, memoryBytes]);
      cpu.push([t, cpuSeconds]);
      duration.push([t, Math.round(random() * 50) / 1000]);
    }
    out.push({ labels: { __name__: 'up', ...labels }, samples: up });
    out.push({ labels: { __name__: 'process_resident_memory_bytes', ...labels }, samples: memory });
    out.push({ labels: { __name__: 'process_cpu_seconds_total', ...labels }, samples: cpu });
    out.push({ labels: { __name__: 'scrape_duration_seconds', ...labels }, samples: duration });
  }
  out.push(...nonFiniteData(startMs));
  return out;
}

/**
 * Values Prometheus stores that are not finite, on Prometheus itself (`job="prometheus"`):
 * a summary's quantiles, NaN while it has no observations (10:00 to 20:00); a ratio that is
 * now and then +Inf or −Inf (a division by zero); a counter that reaches +Inf at 37:30.
 */
function nonFiniteData(startMs: number): SeriesData[] {
  const random = seeded(4000);
  const labels = { instance: 'localhost:9090', job: 'prometheus' };
  const times = Array.from(
    { length: 200 },
    (_, i) => startMs + 11_500 + i * 15_000 + Math.floor(random() * 25),
  );
  const quantile = (q: string, scale: number): SeriesData => ({
    labels: { __name__: 'prometheus_rpc_duration_seconds', ...labels, quantile: q },
    samples: times.map((t, i) => [
      t,
      i >= 40 && i < 80 ? Number.NaN : Math.round(random() * scale * 1000) / 1000,
    ]),
    nanIsValue: true,
  });
  let total = 0;
  return [
    quantile('0.5', 0.2),
    quantile('0.99', 2),
    {
      labels: { __name__: 'prometheus_bound_ratio', ...labels },
      samples: times.map((t, i) => [
        t,
        i % 7 === 3
          ? Number.POSITIVE_INFINITY
          : i % 11 === 5
            ? Number.NEGATIVE_INFINITY
            : Math.round(random() * 100) / 100,
      ]),
    },
    {
      labels: { __name__: 'prometheus_inf_total', ...labels },
      samples: times.map((t, i) => {
        total += Math.round(random() * 10);
        return [t, i >= 150 ? Number.POSITIVE_INFINITY : total];
      }),
    },
  ];
}

const histogramBounds = [0.05, 0.1, 0.25, 0.5, 1];

/**
 * A classic histogram of request durations: cumulative `_bucket` counters by `le` (`+Inf`
 * included), `_sum` and `_count`. h1's process restarts at 32:30 (every counter resets); h4's
 * target goes away at 46:15 (a staleness marker on each of its series, then nothing).
 */
function histogramData(
  labels: Record<string, string>,
  times: readonly number[],
  hi: number,
  gap: (t: number) => boolean,
): SeriesData[] {
  const random = seeded(1000 + hi);
  const name = 'http_request_duration_seconds';
  const les = [...histogramBounds.map(String), '+Inf'];
  const buckets = les.map(() => [] as [number, number][]);
  const sums: [number, number][] = [];
  const counts: [number, number][] = [];
  const cumulative = les.map(() => 0);
  let sum = 0;
  let count = 0;
  times.forEach((t, i) => {
    if (hi === 0 && i === 130) {
      cumulative.fill(0);
      sum = 0;
      count = 0;
    }
    const observations = Math.floor(random() * 8) + (hi === 2 ? 0 : 1);
    for (let k = 0; k < observations; k++) {
      const seconds = Math.round(random() * 1200 * (1 + hi / 4)) / 1000;
      les.forEach((_, b) => {
        if (b === histogramBounds.length || seconds <= histogramBounds[b]!) {
          cumulative[b] = cumulative[b]! + 1;
        }
      });
      sum = Math.round((sum + seconds) * 1000) / 1000;
      count += 1;
    }
    if (gap(t) || (hi === 3 && i > 185)) return;
    const stale = hi === 3 && i === 185;
    les.forEach((_, b) => buckets[b]!.push([t, stale ? Number.NaN : cumulative[b]!]));
    sums.push([t, stale ? Number.NaN : sum]);
    counts.push([t, stale ? Number.NaN : count]);
  });
  return [
    ...les.map((le, b) => ({
      labels: { __name__: `${name}_bucket`, ...labels, le },
      samples: buckets[b]!,
    })),
    { labels: { __name__: `${name}_sum`, ...labels }, samples: sums },
    { labels: { __name__: `${name}_count`, ...labels }, samples: counts },
  ];
}

/**
 * CPU seconds per `cpu` and `mode`, as node_exporter labels them: several series of one host
 * and metric at every time. h2's counters reset at 25:00; h1's system time of cpu 1 ends there
 * with a staleness marker.
 */
function cpuData(
  labels: Record<string, string>,
  times: readonly number[],
  hi: number,
  gap: (t: number) => boolean,
): SeriesData[] {
  const random = seeded(2000 + hi);
  const out: SeriesData[] = [];
  for (const cpu of ['0', '1']) {
    for (const [m, mode] of ['idle', 'user', 'system'].entries()) {
      let seconds = 100 * (m + 1) + hi;
      const samples: [number, number][] = [];
      const ends = hi === 0 && cpu === '1' && mode === 'system';
      times.forEach((t, i) => {
        seconds = hi === 1 && i === 100 ? 0.5 : seconds + Math.round(random() * 150) / 10 / (m + 1);
        if (gap(t) || (ends && i > 100)) return;
        samples.push([t, ends && i === 100 ? Number.NaN : seconds]);
      });
      out.push({ labels: { __name__: 'node_cpu_seconds_total', ...labels, cpu, mode }, samples });
    }
  }
  return out;
}

/**
 * The remote-write body (prompb.WriteRequest, snappy) of `series`, labels sorted, native
 * histograms after the samples. A NaN sample
 * goes out as Prometheus' staleness marker, or as its NormalNaN when the series says
 * `nanIsValue`: the bits are written here, since a NaN kept in a JavaScript array loses its
 * payload.
 */
export function encode(series: SeriesData[]): Buffer {
  const writer = protobuf.Writer.create();
  for (const s of series) {
    writer.uint32((1 << 3) | 2).fork(); // WriteRequest.timeseries
    for (const [name, value] of Object.entries(s.labels).sort(([a], [b]) => (a < b ? -1 : 1))) {
      writer
        .uint32((1 << 3) | 2)
        .fork()
        .uint32(10)
        .string(name)
        .uint32(18)
        .string(value)
        .ldelim();
    }
    for (const [timestamp, value] of s.samples) {
      writer
        .uint32((2 << 3) | 2)
        .fork()
        .uint32((1 << 3) | 1);
      if (Number.isNaN(value) && s.nanIsValue === true) writer.fixed32(1).fixed32(0x7ff80000);
      else if (Number.isNaN(value)) writer.fixed32(2).fixed32(0x7ff00000);
      else writer.double(value);
      writer
        .uint32(2 << 3)
        .int64(timestamp)
        .ldelim();
    }
    for (const [timeMs, histogram] of s.histograms ?? []) {
      writeIntegerHistogram(writer, timeMs, histogram);
    }
    writer.ldelim();
  }
  return snappy.compressSync(Buffer.from(writer.finish()));
}

type Normalized = Map<string, [number, string][]>;

export function normalize(data: { resultType: string; result: unknown }): Normalized | string {
  const out: Normalized = new Map();
  const key = (metric: Record<string, string>) => JSON.stringify(Object.entries(metric).sort());
  switch (data.resultType) {
    case 'vector':
      for (const s of data.result as {
        metric: Record<string, string>;
        value: [number, string];
      }[]) {
        out.set(key(s.metric), [s.value]);
      }
      return out;
    case 'matrix':
      for (const s of data.result as {
        metric: Record<string, string>;
        values: [number, string][];
      }[]) {
        out.set(key(s.metric), s.values);
      }
      return out;
    case 'scalar':
      out.set('scalar', [data.result as [number, string]]);
      return out;
    default:
      return JSON.stringify(data.result);
  }
}

function closeEnough(a: string, b: string): boolean {
  if (a === b) return true;
  const x = Number(a);
  const y = Number(b);
  if (Number.isNaN(x) || Number.isNaN(y)) return false;
  return Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
}

/** Differences between two answers: label sets exactly, times exactly, values within 1e-9 relative. */
export function differences(want: Normalized | string, got: Normalized | string): string[] {
  if (typeof want === 'string' || typeof got === 'string') {
    return want === got ? [] : ['a string answer differs, or only one side is a string'];
  }
  const out: string[] = [];
  for (const k of new Set([...want.keys(), ...got.keys()])) {
    const w = want.get(k);
    const g = got.get(k);
    if (w === undefined || g === undefined) {
      out.push(`${k} only in ${w === undefined ? 'ours' : 'prometheus'}`);
      continue;
    }
    if (w.length !== g.length) {
      out.push(`${k}: ${w.length} points vs ${g.length}`);
      continue;
    }
    w.forEach(([t, v], i) => {
      const [gt, gv] = g[i]!;
      if (t !== gt || !closeEnough(v, gv)) out.push(`${k} @${t}: ${v} vs ${gt} ${gv}`);
    });
  }
  return out;
}

/**
 * Our Prometheus API (`/prometheus`) over `target` (a database, or sample shards read as the
 * api reads them, merged), for `orgId`, behind one read key; `maxSamples` is the remote read
 * limit (50 M unless given).
 */
export async function startPrometheusApi(
  target: Database | readonly Database[],
  orgId: string,
  apiKey: string,
  maxSamples = 50_000_000,
): Promise<{ url: string; close: () => Promise<void> }> {
  const options = {
    lookbackDeltaMs: 300_000,
    maxSamples: 50_000_000,
    timeoutMs: 30_000,
    maxSeries: 100_000,
    maxPointsPerSeries: 11_000,
  };
  const authenticator: ApiKeyAuthenticator = {
    authenticate: (key) =>
      Promise.resolve(
        key === apiKey ? { keyId: 'key_oracle', orgId, scopes: ['read' as const] } : undefined,
      ),
  };
  const sampleSlabs = createFloat64SlabPool({ maxIdleSlabs: 64 });
  const dbs = databasesOf(target);
  const shards = dbs.map((db, i) => ({ name: `s${i}`, db, reads: db }));
  const app = express();
  app.use(
    createPrometheusRouter({
      authenticator,
      logger: createLogger({ level: 'silent' }),
      sourceFor: (org, partial) => shardedSeriesSource(shards, org, { partial }),
      // With the api's pool of slabs, as deployed: what one query read then serves the next.
      engineFor: (org, _timeoutMs, partial) => {
        const slabs = sampleSlabs.lease();
        const source = shardedSeriesSource(shards, org, { slabs, partial });
        return {
          engine: createPromqlEngine({ source, ...options }),
          release: () => slabs.release(),
        };
      },
      limits: {
        maxRangeMs: 366 * 86_400_000,
        maxSeries: 100_000,
        maxSamples,
        maxExemplars: 100_000,
        timeoutMs: 30_000,
      },
      nowMs: Date.now,
      sourceTiers: createSourceTiersReader(dbs, { refreshMs: 60_000, nowMs: Date.now }),
      exemplars: createShardedExemplarReader(dbs.map((db) => createExemplarReader(db))),
      ruleGroups: createRuleGroupStateStore(dbs[0] as Database),
      defaultRuleIntervalMs: 60_000,
    }),
  );
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/prometheus`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
