// @services postgres
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import express from 'express';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import snappy from 'snappy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrometheusRouter } from '@monitor/api';
import type { ApiKeyAuthenticator } from '@monitor/auth';
import { createSampleStore } from '@monitor/db';
import { createPrometheusSeriesSource } from '@monitor/db/series';
import { createLogger } from '@monitor/platform';
import { createPromqlEngine } from '@monitor/promql';
import { decodeRemoteWriteV1 } from '@monitor/protocols';
import { startPrometheus } from '@monitor/testkit';
import type { AgentProcess } from '@monitor/testkit';
import { migratedDatabase } from '../../db/src/testing/clean-database.js';

const run = promisify(execFile);
const orgId = 'org_oracle';
const apiKey = 'oracle-key';

/** prompb's WriteRequest, as Prometheus senders fill it. */
const writeRequest = protobuf.Root.fromJSON({
  nested: {
    WriteRequest: { fields: { timeseries: { rule: 'repeated', type: 'TimeSeries', id: 1 } } },
    TimeSeries: {
      fields: {
        labels: { rule: 'repeated', type: 'Label', id: 1 },
        samples: { rule: 'repeated', type: 'Sample', id: 2 },
      },
    },
    Label: { fields: { name: { type: 'string', id: 1 }, value: { type: 'string', id: 2 } } },
    Sample: { fields: { value: { type: 'double', id: 1 }, timestamp: { type: 'int64', id: 2 } } },
  },
}).lookupType('WriteRequest');

type SeriesData = { labels: Record<string, string>; samples: [number, number][] };

/** A deterministic random walk (no Math.random: the oracle's data is the same on every run). */
function seeded(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

/**
 * 4 hosts in 2 regions, 4 metrics each, 50 minutes at 15 s: gauges, counters with resets, a
 * host with a 10-minute gap (longer than the lookback), jittered sample times. Every label is
 * a per-host one (host, region, env, job): see the report on per-series labels.
 */
function oracleData(startMs: number): SeriesData[] {
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
      temp.push([t, 20 + hi + Math.round(Math.sin(i / 10) * 500) / 100]);
    });
    out.push({ labels: { __name__: 'node_load1', ...labels }, samples: load1 });
    out.push({ labels: { __name__: 'http_requests_total', ...labels }, samples: req });
    out.push({ labels: { __name__: 'net_bytes_total', ...labels }, samples: bytesTotal });
    out.push({ labels: { __name__: 'temp_celsius', ...labels }, samples: temp });
  }
  return out;
}

function encode(series: SeriesData[]): Buffer {
  const timeseries = series.map((s) => ({
    labels: Object.entries(s.labels)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, value]) => ({ name, value })),
    samples: s.samples.map(([timestamp, value]) => ({ value, timestamp })),
  }));
  return snappy.compressSync(Buffer.from(writeRequest.encode({ timeseries }).finish()));
}

type Normalized = Map<string, [number, string][]>;

function normalize(data: { resultType: string; result: unknown }): Normalized | string {
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
function differences(want: Normalized | string, got: Normalized | string): string[] {
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

const handWritten = [
  'node_load1',
  'node_load1{region="eu"}',
  'node_load1{host!="h1"}',
  'node_load1{host=~"h[12]"}',
  'node_load1{host!~"h.*1"}',
  '{__name__=~"node_.*|temp_.*"}',
  'node_load1 offset 5m',
  'node_load1 offset -2m',
  'rate(http_requests_total[5m])',
  'rate(http_requests_total[1m])',
  'irate(http_requests_total[5m])',
  'increase(http_requests_total[10m])',
  'increase(net_bytes_total[3m])',
  'delta(temp_celsius[5m])',
  'idelta(temp_celsius[2m])',
  'deriv(node_load1[5m])',
  'resets(http_requests_total[20m])',
  'changes(node_load1[10m])',
  'avg_over_time(node_load1[5m])',
  'min_over_time(node_load1[5m])',
  'max_over_time(node_load1[7m])',
  'sum_over_time(temp_celsius[5m])',
  'count_over_time(temp_celsius[10m])',
  'quantile_over_time(0.9, node_load1[10m])',
  'quantile_over_time(0.25, temp_celsius[5m])',
  'stddev_over_time(node_load1[10m])',
  'stdvar_over_time(temp_celsius[10m])',
  'last_over_time(node_load1[10m])',
  'present_over_time(node_load1[2m])',
  'absent_over_time(node_load1{host="h3"}[2m])',
  'absent_over_time(nonexistent[5m])',
  'sum(node_load1)',
  'sum by (region) (rate(http_requests_total[5m]))',
  'sum without (host) (node_load1)',
  'avg by (env) (temp_celsius)',
  'min by (region) (node_load1)',
  'max(node_load1) by (region)',
  'count by (region) (node_load1)',
  'stddev(temp_celsius)',
  'stdvar by (region) (node_load1)',
  'topk(2, node_load1)',
  'bottomk(1, temp_celsius)',
  'topk by (region) (1, rate(http_requests_total[5m]))',
  'quantile(0.5, node_load1)',
  'quantile by (region) (0.9, temp_celsius)',
  'count_values("load", round(node_load1))',
  'group by (region) (node_load1)',
  'node_load1 + temp_celsius',
  'node_load1 * on(host) group_left(env) temp_celsius',
  'node_load1 / ignoring(__name__) temp_celsius',
  'temp_celsius - on(host) node_load1',
  'sum by (region) (node_load1) / on(region) group_right sum by (region, host) (temp_celsius)',
  'node_load1 > 2',
  'node_load1 > bool 2',
  '2 < node_load1',
  'node_load1 == bool node_load1',
  'node_load1 and node_load1{region="eu"}',
  'node_load1 or temp_celsius',
  'node_load1 unless on(host) node_load1{env="dev"}',
  'node_load1 % 1',
  'node_load1 ^ 2',
  '-node_load1',
  'abs(-temp_celsius)',
  'ceil(node_load1)',
  'floor(node_load1)',
  'round(node_load1, 0.5)',
  'clamp(node_load1, 1, 3)',
  'clamp_min(node_load1, 2)',
  'clamp_max(node_load1, 2)',
  'sqrt(node_load1)',
  'exp(node_load1)',
  'ln(temp_celsius)',
  'log2(temp_celsius)',
  'log10(temp_celsius)',
  'timestamp(node_load1)',
  'time()',
  'vector(1)',
  'scalar(sum(node_load1))',
  'node_load1 * scalar(count(node_load1))',
  'absent(nonexistent{job="x"})',
  'absent(node_load1)',
  'label_replace(node_load1, "dc", "$1-x", "region", "(.*)")',
  'label_join(node_load1, "id", "/", "region", "host")',
  'sort(node_load1)',
  'sort_desc(temp_celsius)',
  'predict_linear(node_load1[10m], 600)',
  'holt_winters(node_load1[10m], 0.5, 0.5)',
  'node_load1 @ end()',
  'rate(http_requests_total[5m] @ start())',
  'sum(rate(net_bytes_total[5m])) by (env)',
  '1 + 2 * 3',
  '(node_load1)',
  'day_of_month()',
  'sgn(node_load1 - 2)',
];

const metrics = ['node_load1', 'temp_celsius', 'http_requests_total', 'net_bytes_total'];

/** PromQL generated from a small grammar, seeded, so that each run compares the same ones. */
function generatedExpressions(count: number): string[] {
  const selector = fc
    .tuple(
      fc.constantFrom(...metrics),
      fc.constantFrom('', '{region="eu"}', '{host!="h2"}', '{host=~"h[134]"}', '{env!~"de.*"}'),
    )
    .map(([m, s]) => `${m}${s}`);
  const range = fc.constantFrom('1m', '2m', '5m', '10m');
  const rangeFn = fc.constantFrom(
    'rate',
    'irate',
    'increase',
    'delta',
    'deriv',
    'avg_over_time',
    'max_over_time',
    'min_over_time',
    'sum_over_time',
    'count_over_time',
    'changes',
    'resets',
    'last_over_time',
  );
  const leaf = fc.oneof(
    selector,
    fc.tuple(rangeFn, selector, range).map(([f, s, r]) => `${f}(${s}[${r}])`),
  );
  const expr = fc.letrec((tie) => ({
    e: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc
        .tuple(
          fc.constantFrom('sum', 'avg', 'max', 'min', 'count'),
          fc.constantFrom('', ' by (region)', ' without (host)'),
          tie('e'),
        )
        .map(([op, g, e]) => `${op}${g} (${e as string})`),
      fc
        .tuple(
          tie('e'),
          fc.constantFrom('+', '-', '*', '/', '>', '< bool'),
          fc.constantFrom('2', '0.5'),
        )
        .map(([e, op, n]) => `(${e as string}) ${op} ${n}`),
      fc
        .tuple(fc.constantFrom('abs', 'ceil', 'sqrt'), tie('e'))
        .map(([f, e]) => `${f}(${e as string})`),
    ),
  })).e;
  return fc.sample(expr, { numRuns: count, seed: 27 }).map(String);
}

describe('PromQL against Prometheus 2.42 (the oracle)', () => {
  let prometheus: AgentProcess & { url: string };
  let disposeDb: () => Promise<void>;
  let ourUrl: string;
  let closeServer: () => Promise<void>;
  const startMs = Math.floor(Date.now() / 60_000) * 60_000 - 55 * 60_000;
  const endMs = startMs + 50 * 60_000;
  let compared = 0;
  /** Comparisons where Prometheus answered with data: the oracle must not be vacuous. */
  let nonEmpty = 0;

  beforeAll(async () => {
    prometheus = await startPrometheus({ scrapeTargets: [], remoteWriteReceiver: true });
    const data = oracleData(startMs);
    const body = encode(data);
    const sent = await fetch(`${prometheus.url}/api/v1/write`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-protobuf',
        'Content-Encoding': 'snappy',
        'X-Prometheus-Remote-Write-Version': '0.1.0',
      },
      body,
    });
    expect(sent.status).toBe(204);
    const { db, dispose } = await migratedDatabase('postgres', 'oracle');
    disposeDb = dispose;
    const decoded = decodeRemoteWriteV1(body, { nowMs: Date.now(), maxDecodedBytes: 64 << 20 });
    expect(decoded.rejected).toEqual({});
    await createSampleStore(db).writeBatch({
      samples: decoded.samples.map((s) => ({ ...s, orgId, containers: [], processes: [] })),
    });
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
    const app = express();
    app.use(
      createPrometheusRouter({
        authenticator,
        logger: createLogger({ level: 'silent' }),
        sourceFor: (org) => createPrometheusSeriesSource(db, org),
        engineFor: (org) =>
          createPromqlEngine({ source: createPrometheusSeriesSource(db, org), ...options }),
        limits: { maxRangeMs: 366 * 86_400_000, maxSeries: 100_000 },
        nowMs: Date.now,
      }),
    );
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ourUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/prometheus`;
    closeServer = () => new Promise((resolve) => server.close(() => resolve()));
  });

  afterAll(async () => {
    await closeServer?.();
    await prometheus?.stop();
    await disposeDb?.();
  });

  async function prometheusAnswer(path: string, params: Record<string, string>) {
    const response = await fetch(
      `${prometheus.url}/api/v1/${path}?${new URLSearchParams(params).toString()}`,
    );
    return (await response.json()) as {
      status: string;
      data: { resultType: string; result: unknown };
      errorType?: string;
    };
  }

  async function ourAnswer(path: string, params: Record<string, string>) {
    const response = await fetch(
      `${ourUrl}/api/v1/${path}?${new URLSearchParams(params).toString()}`,
      {
        headers: { Authorization: `Bearer ${apiKey}` },
      },
    );
    return (await response.json()) as {
      status: string;
      data: { resultType: string; result: unknown };
      errorType?: string;
    };
  }

  async function compare(
    path: string,
    expr: string,
    params: Record<string, string>,
  ): Promise<string[]> {
    const [want, got] = await Promise.all([
      prometheusAnswer(path, { query: expr, ...params }),
      ourAnswer(path, { query: expr, ...params }),
    ]);
    compared++;
    if (want.status !== 'success' || got.status !== 'success') {
      return want.status === got.status && want.errorType === got.errorType
        ? []
        : [
            `${expr} ${JSON.stringify(params)}: prometheus ${want.status} ${want.errorType ?? ''}, ours ${got.status} ${got.errorType ?? ''}`,
          ];
    }
    const wanted = normalize(want.data);
    if (typeof wanted === 'string' || wanted.size > 0) nonEmpty++;
    return differences(wanted, normalize(got.data)).map(
      (d) => `${expr} ${JSON.stringify(params)}: ${d}`,
    );
  }

  const instantTimes = () =>
    [startMs + 20 * 60_000 + 7_000, startMs + 26 * 60_000, endMs - 1_000].map((t) =>
      String(t / 1000),
    );

  it('answers the hand-written expressions as Prometheus does, instant and range', async () => {
    const problems: string[] = [];
    for (const expr of handWritten) {
      for (const time of instantTimes()) problems.push(...(await compare('query', expr, { time })));
      for (const step of ['15', '60', '37']) {
        problems.push(
          ...(await compare('query_range', expr, {
            start: String((startMs + 5 * 60_000) / 1000),
            end: String(endMs / 1000),
            step,
          })),
        );
      }
    }
    expect(problems.slice(0, 30)).toEqual([]);
  });

  it('answers generated expressions as Prometheus does', async () => {
    const problems: string[] = [];
    for (const expr of generatedExpressions(80)) {
      problems.push(...(await compare('query', expr, { time: String((endMs - 3_000) / 1000) })));
      problems.push(
        ...(await compare('query_range', expr, {
          start: String(startMs / 1000),
          end: String(endMs / 1000),
          step: '45',
        })),
      );
    }
    expect(problems.slice(0, 30)).toEqual([]);
    expect(compared).toBeGreaterThanOrEqual(150);
    expect(nonEmpty).toBeGreaterThan(compared * 0.8);
  });

  it('answers promtool as a client', async () => {
    const promtool = (...args: string[]) =>
      run('promtool', ['query', ...args], { env: { ...process.env } }).then((r) => r.stdout);
    // promtool has no header option in 2.42: it reaches us through a URL with basic auth.
    const url = ourUrl.replace('http://', `http://user:${apiKey}@`);
    const time = String((endMs - 1_000) / 1000);
    expect(await promtool('instant', '--time', time, url, 'sum by (region) (node_load1)')).toMatch(
      /region="eu"/,
    );
    expect(
      await promtool(
        'range',
        '--start',
        String(startMs / 1000),
        '--end',
        String(endMs / 1000),
        '--step',
        '60s',
        url,
        'node_load1{host="h1"}',
      ),
    ).toMatch(/host="h1"/);
    expect(await promtool('series', '--match', 'node_load1', url)).toMatch(/h4/);
    expect(await promtool('labels', url, 'region')).toMatch(/eu[\s\S]*us/);
  });
});
