// @services postgres
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrometheus } from '@monitor/testkit';
import type { AgentProcess } from '@monitor/testkit';
import { createApiCall } from '@monitor/testkit/builders';
import { migratedDatabase } from '../../db/src/testing/clean-database.js';
import {
  differences,
  encode,
  normalize,
  oracleData,
  remoteWriteToPrometheus,
  startPrometheusApi,
  storeRemoteWrite,
} from './testing/prometheus-fixture.js';

const run = promisify(execFile);
const orgId = 'org_oracle';
const apiKey = 'oracle-key';

const handWritten = [
  'node_load1',
  'node_load1{region="eu"}',
  'node_load1{host!="h1"}',
  'node_load1{host=~"h[12]"}',
  'node_load1{host!~"h.*1"}',
  '{__name__=~"node_.*|temp_.*"}',
  'node_load1 offset 5m',
  'node_load1 offset -2m',
  // A modifier binds to the operand it follows, and closes nothing before it.
  'node_load1 offset 5m or temp_celsius offset 2m',
  'node_load1 + node_load1 offset 5m * 2',
  '-node_load1 offset 5m',
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
  // A classic histogram per host (h1's counters reset; h4's series end with staleness markers).
  'http_request_duration_seconds_bucket',
  'http_request_duration_seconds_bucket{le="+Inf"}',
  'histogram_quantile(0.9, sum by (le) (rate(http_request_duration_seconds_bucket[5m])))',
  'histogram_quantile(0.5, rate(http_request_duration_seconds_bucket[5m]))',
  'histogram_quantile(0.99, sum by (host, le) (rate(http_request_duration_seconds_bucket[5m])))',
  'histogram_quantile(0.75, sum by (region, le) (increase(http_request_duration_seconds_bucket[10m])))',
  'histogram_quantile(0.5, http_request_duration_seconds_bucket{host="h1"})',
  'rate(http_request_duration_seconds_sum[5m]) / rate(http_request_duration_seconds_count[5m])',
  'sum by (region) (rate(http_request_duration_seconds_sum[5m])) / sum by (region) (rate(http_request_duration_seconds_count[5m]))',
  'resets(http_request_duration_seconds_count[20m])',
  // Series labelled beyond their host's labels.
  'node_cpu_seconds_total',
  'count by (mode) (node_cpu_seconds_total)',
  'count by (host) (node_cpu_seconds_total)',
  'sum by (mode) (rate(node_cpu_seconds_total[5m]))',
  'sum without (cpu) (rate(node_cpu_seconds_total{mode!="idle"}[5m]))',
  'avg by (region, mode) (irate(node_cpu_seconds_total[2m]))',
  'node_cpu_seconds_total{cpu="1", mode="system"}',
  'node_cpu_seconds_total * on(host) group_left(region) node_load1',
  // Across and after staleness markers.
  'temp_celsius{host="h2"}',
  'temp_celsius{host="h2"} offset 1m',
  'last_over_time(temp_celsius{host="h2"}[10m])',
  'count_over_time(temp_celsius{host="h2"}[10m])',
  'present_over_time(temp_celsius[2m])',
  'absent(temp_celsius{host="h2"})',
  'timestamp(temp_celsius)',
  'last_over_time(node_cpu_seconds_total{mode="system"}[10m])',
  'count_over_time(node_cpu_seconds_total{cpu="1"}[5m])',
  'rate(node_cpu_seconds_total{host="h1",cpu="1"}[5m])',
  'last_over_time(http_request_duration_seconds_count[10m])',
  'count_over_time(http_request_duration_seconds_count[10m])',
  // Labelled as Prometheus labels what it scrapes (`instance`, `job`, no `host`): grouping,
  // joining and dropping those labels.
  'up',
  'up{instance=~"10.*"}',
  'sum without (instance, job) (up)',
  'sum without (instance) (up)',
  'count by (job) (up)',
  'sum by (job) (rate(process_cpu_seconds_total[5m]))',
  'sum without (instance, job) (rate(process_cpu_seconds_total[5m]))',
  'avg without (instance) (process_resident_memory_bytes)',
  'max by (job) (scrape_duration_seconds)',
  'process_resident_memory_bytes / ignoring (job, instance) group_left sum without (instance, job) (process_resident_memory_bytes)',
  'sum by (job) (up) / ignoring (job) group_left count(up)',
  'process_resident_memory_bytes * on(instance) group_left up',
  'rate(process_cpu_seconds_total[5m]) / on(instance) scrape_duration_seconds',
  'up{job="node"} unless on(instance) up == 0',
  'topk by (job) (1, process_resident_memory_bytes)',
  'sum by (host) (label_replace(up, "host", "$1", "instance", "(.*):.*"))',
  'count(up) by (job) - ignoring(job) group_left count(up == 1)',
  // NaN (a summary without observations) and ±Inf, as Prometheus stores and computes them.
  'prometheus_rpc_duration_seconds',
  'max_over_time(prometheus_rpc_duration_seconds[5m])',
  'min_over_time(prometheus_rpc_duration_seconds[5m])',
  'avg_over_time(prometheus_rpc_duration_seconds[5m])',
  'quantile_over_time(0.5, prometheus_rpc_duration_seconds[5m])',
  'changes(prometheus_rpc_duration_seconds[5m])',
  'sum by (quantile) (prometheus_rpc_duration_seconds)',
  'max(prometheus_rpc_duration_seconds)',
  'topk(1, prometheus_rpc_duration_seconds)',
  'sort_desc(prometheus_rpc_duration_seconds)',
  'prometheus_rpc_duration_seconds > 0.1',
  'prometheus_rpc_duration_seconds != bool prometheus_rpc_duration_seconds',
  'prometheus_bound_ratio',
  'prometheus_bound_ratio * 0',
  'abs(prometheus_bound_ratio)',
  'clamp_max(prometheus_bound_ratio, 0.5)',
  'max_over_time(prometheus_bound_ratio[2m])',
  'min_over_time(prometheus_bound_ratio[2m])',
  'sum_over_time(prometheus_bound_ratio[2m])',
  'avg_over_time(prometheus_bound_ratio[5m])',
  'stddev_over_time(prometheus_bound_ratio[5m])',
  'deriv(prometheus_bound_ratio[5m])',
  'prometheus_bound_ratio > 0.5',
  'avg(prometheus_bound_ratio)',
  'prometheus_inf_total',
  'rate(prometheus_inf_total[5m])',
  'increase(prometheus_inf_total[2m])',
  'delta(prometheus_inf_total[2m])',
  'resets(prometheus_inf_total[10m])',
];

const metrics = [
  'node_load1',
  'temp_celsius',
  'http_requests_total',
  'net_bytes_total',
  'node_cpu_seconds_total',
  'http_request_duration_seconds_bucket',
];

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

// Once on one database, once on three sample shards read as the api reads them (each host on
// its partition's shard, the series merged): the answers must not tell them apart.
describe.each([1, 3])('PromQL against Prometheus 2.42 (the oracle), %i database(s)', (count) => {
  let prometheus: AgentProcess & { url: string };
  const disposers: (() => Promise<void>)[] = [];
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
    await remoteWriteToPrometheus(prometheus.url, body);
    const dbs = [];
    for (let i = 0; i < count; i++) {
      const { db, dispose } = await migratedDatabase('postgres', `oracle_${count}_${i}`);
      disposers.push(dispose);
      dbs.push(db);
    }
    await storeRemoteWrite(dbs, orgId, body);
    if (count > 1) {
      // The fleet's hosts are on more than one shard, so the merge is what is compared.
      const holding = [];
      for (const db of dbs) {
        const [row] = await db.sql<{ n: string }[]>`select count(*) as n from samples`;
        if (Number(row?.n) > 0) holding.push(db);
      }
      expect(holding.length).toBeGreaterThan(1);
    }
    const api = await startPrometheusApi(dbs, orgId, apiKey);
    ourUrl = api.url;
    closeServer = api.close;
  });

  afterAll(async () => {
    await closeServer?.();
    await prometheus?.stop();
    for (const dispose of disposers) await dispose();
  });

  type Answer = {
    status: string;
    data: { resultType: string; result: unknown };
    errorType?: string;
  };
  const prometheusApi = createApiCall({ baseUrl: () => prometheus.url });
  const ourApi = createApiCall({ baseUrl: () => ourUrl });
  const queryPath = (path: string, params: Record<string, string>) =>
    `/api/v1/${path}?${new URLSearchParams(params).toString()}`;

  async function prometheusAnswer(path: string, params: Record<string, string>) {
    return (await prometheusApi<Answer>(queryPath(path, params))).body;
  }

  async function ourAnswer(path: string, params: Record<string, string>) {
    return (await ourApi<Answer>(queryPath(path, params), { bearer: apiKey })).body;
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

  it('writes values text for text as Prometheus does: vectors and matrices with exponents where it uses them', async () => {
    const at = { time: String((endMs - 1_000) / 1000) };
    const range = { start: String((endMs - 60_000) / 1000), end: String(endMs / 1000), step: '30' };
    for (const [path, query, params] of [
      ['query', 'vector(1e-7)', at],
      ['query', 'vector(-3e-9) or vector(2e21)', at],
      ['query', 'node_load1 * 1e-9', at],
      ['query', 'node_load1 * 1e25', at],
      // A scalar never: Prometheus writes its value in full.
      ['query', '1e-7', at],
      ['query', 'scalar(vector(2e21))', at],
      ['query_range', 'node_load1 * 1e-12', range],
      ['query_range', 'vector(-1e21)', range],
    ] as const) {
      const [want, got] = await Promise.all([
        prometheusAnswer(path, { query, ...params }),
        ourAnswer(path, { query, ...params }),
      ]);
      expect({ query, data: got.data }).toEqual({ query, data: want.data });
    }
  });

  it('answers as Prometheus does with many queries at once (their slabs pass from one to the next)', async () => {
    const problems: string[] = [];
    const params = {
      start: String((startMs + 5 * 60_000) / 1000),
      end: String(endMs / 1000),
      step: '15',
    };
    for (let i = 0; i < handWritten.length; i += 8) {
      const answers = await Promise.all(
        handWritten.slice(i, i + 8).map((expr) => compare('query_range', expr, params)),
      );
      problems.push(...answers.flat());
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

  it('lists series, label names and label values as Prometheus does', async () => {
    const range = { start: String(startMs / 1000), end: String(endMs / 1000) };
    const lists: [string, Record<string, string>][] = [
      ['series', { 'match[]': 'up' }],
      ['series', { 'match[]': '{job="prometheus"}' }],
      ['series', { 'match[]': 'node_load1{host="h1"}' }],
      ['labels', {}],
      ['labels', { 'match[]': 'process_cpu_seconds_total' }],
      ['label/instance/values', {}],
      ['label/job/values', {}],
      ['label/host/values', {}],
      ['label/host/values', { 'match[]': 'up' }],
      ['label/__name__/values', {}],
    ];
    for (const [path, params] of lists) {
      const [want, got] = await Promise.all([
        prometheusAnswer(path, { ...range, ...params }),
        ourAnswer(path, { ...range, ...params }),
      ]);
      expect(want.status).toBe('success');
      const sorted = (data: unknown) =>
        (data as unknown[]).map((entry) => JSON.stringify(entry)).sort();
      expect({ path, params, data: sorted(got.data) }).toEqual({
        path,
        params,
        data: sorted(want.data),
      });
    }
  });

  it('formats every hand-written expression as Prometheus does (format_query)', async () => {
    const problems: string[] = [];
    // Beyond those: durations, @, strings with escapes, literals, long nested nodes.
    const printed = [
      'node_load1 offset 90m',
      'rate(http_requests_total[1h30m] offset -2m)',
      'node_load1 @ 1700000000.5',
      'label_replace(node_load1, "dc", "a\\\\b\\"c\\n", "region", "(.*)")',
      '0x10 + 1e-7 - 2e21',
      'node_load1{host=~"h.*", region!~"e\\\\.u", env!=""}',
      'topk(3, sum by (region, env, host, job, le, mode, cpu) (rate(node_cpu_seconds_total{mode!="idle", cpu=~"0|1"}[5m])))',
      '-(sum by (region) (rate(http_requests_total[5m])) + on (region) group_right sum by (region) (rate(net_bytes_total[5m])) * 2)',
      'sum(rate(node_cpu_seconds_total[5m])) by (mode) > bool on (mode) avg without (cpu, host, region, env, job) (rate(node_cpu_seconds_total[5m]))',
    ];
    for (const expr of [...handWritten, ...generatedExpressions(80), ...printed]) {
      const [want, got] = await Promise.all([
        prometheusAnswer('format_query', { query: expr }),
        ourAnswer('format_query', { query: expr }),
      ]);
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        problems.push(`${expr}: ${JSON.stringify(want)} vs ${JSON.stringify(got)}`);
      }
    }
    expect(problems.slice(0, 20)).toEqual([]);
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
