// @services postgres
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTLPMetricExporter as OtlpHttpExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as OtlpProtoExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { InfluxDB as InfluxV2, Point } from '@influxdata/influxdb-client';
import { InfluxDB as InfluxV1 } from 'influx';
import type { AgentProcess, TestDatabase } from '@monitor/testkit';
import {
  createTestDatabase,
  startCollectd,
  startNodeExporter,
  startPrometheus,
  startCollector,
  startTelegraf,
} from '@monitor/testkit';
import { buildAlertRuleCreateRequest, createApiCall, waitFor } from '@monitor/testkit/builders';
import { serviceUrl } from '@monitor/testkit/vitest';
import { encode } from './testing/prometheus-fixture.js';
import type { RoleProcess } from './testing/role-process.js';
import { startRoleProcess } from './testing/role-process.js';

/**
 * The agent protocols with the real senders: Prometheus 2.42 scraping the node exporter and
 * remote-writing, collectd's write_http, the OpenTelemetry metrics SDK's OTLP exporters and the
 * Influx clients. Their samples must land as /ingest's do: a service per host, listed with its
 * metrics, evaluated by the rules.
 */
const key = `mon_test_${randomBytes(16).toString('hex')}`;
let database: TestDatabase;
let monitor: RoleProcess;
const agents: AgentProcess[] = [];

type ServiceSummary = {
  id: string;
  name: string;
  metrics: Record<string, number>;
  tags: Record<string, string>;
};

const api = createApiCall({ baseUrl: () => monitor.baseUrl, key });

/** The label sets `/prometheus/api/v1/series` answers for `match`, sorted by metric name. */
async function seriesOf(match: string): Promise<Record<string, string>[]> {
  const { status, body } = await api<{ data: Record<string, string>[] }>(
    `/prometheus/api/v1/series?${new URLSearchParams({ 'match[]': match }).toString()}`,
  );
  expect(status).toBe(200);
  return body.data.sort((a, b) => (a['__name__'] ?? '').localeCompare(b['__name__'] ?? ''));
}

/**
 * The label sets of `match` once `complete` accepts them. The services projection may land
 * before the samples' transaction commits (SampleStore.writeBatch runs them side by side), so a
 * service that lists a metric does not yet mean its series reads back.
 */
function seriesOnceComplete(
  match: string,
  complete: (series: Record<string, string>[]) => boolean,
  what: string,
): Promise<Record<string, string>[]> {
  return waitFor(
    async () => {
      const series = await seriesOf(match);
      return complete(series) ? series : undefined;
    },
    15_000,
    what,
  );
}

/** The service of `host` once it has a metric `has` accepts, else undefined. */
async function serviceWith(
  host: string,
  has: (metrics: Record<string, number>) => boolean,
): Promise<ServiceSummary | undefined> {
  const { body } = await api<{ services: ServiceSummary[] }>('/api/v1/services?limit=100');
  const service = body.services.find((each) => each.name === host);
  return service !== undefined && has(service.metrics) ? service : undefined;
}

beforeAll(async () => {
  database = await createTestDatabase(serviceUrl('postgres'), 'agents');
  monitor = await startRoleProcess('all', {
    DATABASE_URL: database.url,
    MONITOR_BOOTSTRAP_API_KEY: key,
  });
});

afterAll(async () => {
  await Promise.all(agents.map((agent) => agent.stop()));
  await monitor?.stop();
  await database?.drop();
});

describe('agent protocols, with the real senders', () => {
  it('Prometheus remote-writes what it scrapes from the node exporter, and a rule on node_load1 fires', async () => {
    const rule = await api<{ id: string }>('/api/v1/alerts/rules', {
      method: 'POST',
      body: buildAlertRuleCreateRequest({
        name: 'node load seen',
        metric: 'node_load1',
        threshold: -1,
        severity: 'warning',
      }),
    });
    expect(rule.status).toBe(201);

    const exporter = await startNodeExporter();
    agents.push(exporter);
    const prometheus = await startPrometheus({
      scrapeTargets: [{ job: 'node', address: exporter.address }],
      remoteWrite: { url: `${monitor.baseUrl}/api/v1/write`, bearerToken: key },
    });
    agents.push(prometheus);

    // The host is the `instance` label without its port.
    const service = await waitFor(
      () => serviceWith('127.0.0.1', (metrics) => 'node_load1' in metrics),
      60_000,
      'the node exporter host with node_load1',
    );
    const nodeMetrics = Object.keys(service.metrics).filter((name) => name.startsWith('node_'));
    expect(nodeMetrics.length).toBeGreaterThan(20);
    // A service's tags are those of its newest host sample; every series Prometheus sends here
    // carries `job`. The rule fires on the host's first sample, so the evaluator may create the
    // service before the writer stores that sample: the writer must still fill in its tags.
    const tagged = await waitFor(
      async () => {
        const latest = await serviceWith('127.0.0.1', () => true);
        return latest?.tags['job'] === 'node' ? latest : undefined;
      },
      15_000,
      'the node exporter host tagged job=node',
    );
    expect(tagged.tags).toMatchObject({ job: 'node', instance: exporter.address });

    const alert = await waitFor(
      async () => {
        const { body } = await api<{
          alerts: { rule_name: string; host: string; status: string }[];
        }>('/api/v1/alerts?limit=100');
        return body.alerts.find(
          (each) => each.rule_name === 'node load seen' && each.host === '127.0.0.1',
        );
      },
      30_000,
      'the node_load1 alert',
    );
    expect(alert.status).toBe('active');
  });

  it('keeps a remote-written classic histogram’s series apart and ends a series at its staleness marker, read back with PromQL', async () => {
    const host = 'rw-histogram';
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 5 * 60_000;
    const bucket = (le: string, counts: [number, number]) => ({
      labels: { __name__: 'rw_latency_seconds_bucket', host, job: 'api', le },
      samples: [
        [t0, counts[0]],
        [t0 + 15_000, counts[1]],
      ] as [number, number][],
    });
    const body = encode([
      bucket('0.1', [1, 2]),
      bucket('0.5', [3, 6]),
      bucket('1', [4, 8]),
      bucket('+Inf', [5, 10]),
      {
        labels: { __name__: 'rw_latency_seconds_count', host, job: 'api' },
        samples: [
          [t0, 5],
          [t0 + 15_000, 10],
        ],
      },
      {
        // Ends at t0 + 30 s: Prometheus' staleness marker, written as its bits by `encode`.
        labels: { __name__: 'rw_queue_depth', host, job: 'api' },
        samples: [
          [t0, 3],
          [t0 + 15_000, 4],
          [t0 + 30_000, Number.NaN],
        ],
      },
      {
        // A summary's quantile without observations: NaN, a value (not a staleness marker).
        labels: { __name__: 'rw_rpc_seconds', host, job: 'api', quantile: '0.5' },
        samples: [
          [t0, Number.NaN],
          [t0 + 15_000, 0.25],
        ],
        nanIsValue: true,
      },
      {
        labels: { __name__: 'rw_ratio', host, job: 'api' },
        samples: [
          [t0, Number.POSITIVE_INFINITY],
          [t0 + 15_000, Number.NEGATIVE_INFINITY],
        ],
      },
    ]);
    const written = await fetch(`${monitor.baseUrl}/api/v1/write`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${key}`,
        'Content-Type': 'application/x-protobuf',
        'Content-Encoding': 'snappy',
        'X-Prometheus-Remote-Write-Version': '0.1.0',
      },
      body,
    });
    expect(written.status).toBe(204);

    type Vector = { metric: Record<string, string>; value: [number, string] }[];
    const query = async (expr: string, timeMs: number): Promise<Vector> => {
      const params = new URLSearchParams({ query: expr, time: String(timeMs / 1000) });
      const { status, body: answer } = await api<{ status: string; data: { result: Vector } }>(
        `/prometheus/api/v1/query?${params.toString()}`,
      );
      expect(status).toBe(200);
      return answer.data.result;
    };
    const at15s = t0 + 15_000;
    const buckets = await waitFor(
      async () => {
        const result = await query(`rw_latency_seconds_bucket{host="${host}"}`, at15s);
        return result.length === 4 ? result : undefined;
      },
      10_000,
      'the four bucket series',
    );
    expect(
      buckets
        .map(({ metric, value }) => [metric, value[1]])
        .sort((a, b) => Number(a[1]) - Number(b[1])),
    ).toEqual([
      [{ __name__: 'rw_latency_seconds_bucket', host, job: 'api', le: '0.1' }, '2'],
      [{ __name__: 'rw_latency_seconds_bucket', host, job: 'api', le: '0.5' }, '6'],
      [{ __name__: 'rw_latency_seconds_bucket', host, job: 'api', le: '1' }, '8'],
      [{ __name__: 'rw_latency_seconds_bucket', host, job: 'api', le: '+Inf' }, '10'],
    ]);
    // Rank 5 of 10 lies in (0.1, 0.5], 3 of that bucket's 4: 0.1 + 0.4 × 3/4.
    const [median] = await query(
      `histogram_quantile(0.5, rw_latency_seconds_bucket{host="${host}"})`,
      at15s,
    );
    expect(Number(median?.value[1])).toBeCloseTo(0.4, 12);
    expect(median?.metric).toEqual({ host, job: 'api' });

    // Before the marker the gauge is there; after it (well within the 5-minute lookback) it is
    // not, and range functions pass over the marker.
    expect((await query(`rw_queue_depth{host="${host}"}`, t0 + 29_000))[0]?.value[1]).toBe('4');
    expect(await query(`rw_queue_depth{host="${host}"}`, t0 + 31_000)).toEqual([]);
    expect(
      (await query(`count_over_time(rw_queue_depth{host="${host}"}[1m])`, t0 + 45_000))[0]
        ?.value[1],
    ).toBe('2');
    expect(
      (await query(`last_over_time(rw_queue_depth{host="${host}"}[1m])`, t0 + 45_000))[0]?.value[1],
    ).toBe('4');

    // NaN and ±Inf are stored and read back as written (role `all`: the in-process bus).
    const valueAt = async (expr: string, timeMs: number) =>
      (await query(expr, timeMs)).map(({ value }) => value[1]);
    expect(await valueAt(`rw_rpc_seconds{host="${host}"}`, t0 + 1_000)).toEqual(['NaN']);
    expect(await valueAt(`rw_rpc_seconds{host="${host}"}`, t0 + 16_000)).toEqual(['0.25']);
    expect(await valueAt(`rw_ratio{host="${host}"}`, t0 + 1_000)).toEqual(['+Inf']);
    expect(await valueAt(`rw_ratio{host="${host}"}`, t0 + 16_000)).toEqual(['-Inf']);
    expect(await valueAt(`max_over_time(rw_ratio{host="${host}"}[1m])`, t0 + 16_000)).toEqual([
      '+Inf',
    ]);
  });

  it('stores a remote-written series without host or instance under its job, else under remote-write, with exactly its labels', async () => {
    // As Prometheus' recording rules and federated aggregates send them: no host, no instance.
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    const written = await fetch(`${monitor.baseUrl}/api/v1/write`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${key}`,
        'Content-Type': 'application/x-protobuf',
        'Content-Encoding': 'snappy',
        'X-Prometheus-Remote-Write-Version': '0.1.0',
      },
      body: encode([
        { labels: { __name__: 'rw_backup_last_success', job: 'backup' }, samples: [[t0, 1]] },
        {
          labels: { __name__: 'rw_job:requests:rate5m', rulegroup: 'api', tier: 'edge' },
          samples: [[t0, 7.5]],
        },
      ]),
    });
    expect(written.status).toBe(204);

    const series = await waitFor(
      async () => {
        const found = await seriesOf('{__name__=~"rw_backup_last_success|rw_job:requests:rate5m"}');
        return found.length === 2 ? found : undefined;
      },
      15_000,
      'both series through /prometheus',
    );
    expect(series).toEqual([
      { __name__: 'rw_backup_last_success', job: 'backup' },
      { __name__: 'rw_job:requests:rate5m', rulegroup: 'api', tier: 'edge' },
    ]);
    expect(
      await serviceWith('backup', (metrics) => 'rw_backup_last_success' in metrics),
    ).toBeDefined();
    expect(
      await serviceWith('remote-write', (metrics) => 'rw_job:requests:rate5m' in metrics),
    ).toBeDefined();
  });

  it('collectd write_http (JSON) authenticates with the key as its password', async () => {
    const collectd = await startCollectd({
      writeHttpUrl: `${monitor.baseUrl}/api/v1/collectd`,
      user: 'collectd',
      password: key,
      hostname: 'collectd-host',
      intervalSeconds: 1,
    });
    agents.push(collectd);
    // Each POST carries the values collectd had buffered: a plugin's may come a POST later.
    const service = await waitFor(
      () =>
        serviceWith(
          'collectd-host',
          (metrics) =>
            'collectd_load_load_shortterm' in metrics &&
            Object.keys(metrics).some((name) => name.startsWith('collectd_memory_')),
        ),
      30_000,
      'the collectd host with its load and memory',
    );
    expect(Object.keys(service.metrics)).toEqual(
      expect.arrayContaining(['collectd_load_load_midterm', 'collectd_load_load_longterm']),
    );
    // Each series reads back with `host` alone (docs/agents.md#labels-as-written): plugin, type
    // and their instances are in the name, none of them a label.
    const series = await seriesOnceComplete(
      '{__name__=~"collectd_.+"}',
      (found) =>
        ['collectd_load_load_shortterm', 'collectd_load_load_midterm'].every((name) =>
          found.some((labels) => labels['__name__'] === name),
        ),
      'the collectd load series',
    );
    expect(series.map((labels) => labels['__name__'])).toEqual(
      expect.arrayContaining(['collectd_load_load_shortterm', 'collectd_load_load_midterm']),
    );
    expect(series.map(({ __name__: _name, ...labels }) => labels)).toEqual(
      series.map(() => ({ host: 'collectd-host' })),
    );
  });

  it.each([
    [
      // Configured as docs/agents.md says, through the SDK's environment variables.
      'protobuf',
      (url: string) => {
        process.env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT = url;
        process.env.OTEL_EXPORTER_OTLP_METRICS_HEADERS = `Authorization=Bearer ${key}`;
        try {
          return new OtlpProtoExporter();
        } finally {
          delete process.env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT;
          delete process.env.OTEL_EXPORTER_OTLP_METRICS_HEADERS;
        }
      },
    ],
    [
      'json',
      (url: string) => new OtlpHttpExporter({ url, headers: { Authorization: `Bearer ${key}` } }),
    ],
  ] as const)(
    'the OpenTelemetry metrics SDK exports over OTLP/HTTP (%s)',
    async (encoding, createExporter: (url: string) => PushMetricExporter) => {
      const host = `otel-${encoding}`;
      const provider = new MeterProvider({
        resource: resourceFromAttributes({ 'host.name': host, 'service.name': 'checkout' }),
        readers: [
          new PeriodicExportingMetricReader({
            exporter: createExporter(`${monitor.baseUrl}/api/v1/otlp/v1/metrics`),
            exportIntervalMillis: 60_000,
          }),
        ],
      });
      const meter = provider.getMeter('agent-protocols-test');
      meter.createGauge('queue.depth').record(7, { queue: 'jobs' });
      meter.createCounter('requests').add(3, { route: '/pay' });
      meter.createHistogram('latency.ms').record(12);
      meter.createHistogram('latency.ms').record(30);
      await provider.forceFlush();
      await provider.shutdown();

      const service = await waitFor(
        () => serviceWith(host, (metrics) => 'latency.ms_count' in metrics),
        20_000,
        `the ${host} host`,
      );
      expect(service.metrics).toMatchObject({
        'queue.depth': 7,
        requests: 3,
        'latency.ms_count': 2,
        'latency.ms_sum': 42,
      });
      // Each series reads back with the string resource and point attributes, as named, and
      // nothing else (docs/agents.md#labels-as-written).
      const ofHost = (series: Record<string, string>[]) =>
        series.filter((labels) => labels['host.name'] === host);
      const series = await seriesOnceComplete(
        '{__name__=~"queue[.]depth|requests|latency[.]ms_.+"}',
        (found) => ofHost(found).length >= 4,
        `the series of ${host}`,
      );
      const resource = { 'host.name': host, 'service.name': 'checkout' };
      expect(ofHost(series)).toEqual([
        { __name__: 'latency.ms_count', ...resource },
        { __name__: 'latency.ms_sum', ...resource },
        { __name__: 'queue.depth', ...resource, queue: 'jobs' },
        { __name__: 'requests', ...resource, route: '/pay' },
      ]);
    },
  );

  it('the OpenTelemetry Collector relays an SDK’s metrics with docs/agents.md’s otlphttp exporter', async () => {
    const collector = await startCollector({ endpoint: `${monitor.baseUrl}/api/v1/otlp`, key });
    agents.push(collector);
    const host = 'otel-collector-relayed';
    const provider = new MeterProvider({
      resource: resourceFromAttributes({ 'host.name': host, 'service.name': 'billing' }),
      readers: [
        new PeriodicExportingMetricReader({
          exporter: new OtlpProtoExporter({ url: `${collector.otlpHttpUrl}/v1/metrics` }),
          exportIntervalMillis: 60_000,
        }),
      ],
    });
    provider.getMeter('collector-test').createGauge('jobs.waiting').record(11, { queue: 'mail' });
    await provider.forceFlush();
    await provider.shutdown();

    const service = await waitFor(
      () => serviceWith(host, (metrics) => 'jobs.waiting' in metrics),
      30_000,
      'the host relayed by the collector',
    );
    expect(service.metrics['jobs.waiting']).toBe(11);
  });

  it('Influx clients write through the v2 and the v1 API', async () => {
    const v2 = new InfluxV2({ url: `${monitor.baseUrl}/api/v1/influx`, token: key });
    const writer = v2.getWriteApi('any-org', 'any-bucket', 'ms');
    writer.writePoint(
      new Point('cpu')
        .tag('host', 'influx-v2')
        .tag('region', 'eu')
        .floatField('usage', 12.5)
        .intField('procs', 3)
        .booleanField('up', true)
        .stringField('note', 'skipped'),
    );
    await writer.close();

    const url = new URL(monitor.baseUrl);
    const v1 = new InfluxV1({
      host: url.hostname,
      port: Number(url.port),
      path: '/api/v1/influx',
      database: 'telegraf',
      username: 'influx',
      password: key,
    });
    await v1.writePoints([
      { measurement: 'mem', tags: { host: 'influx-v1' }, fields: { used_percent: 40.5 } },
    ]);

    const fromV2 = await waitFor(
      () => serviceWith('influx-v2', (metrics) => 'cpu_usage' in metrics),
      10_000,
      'the v2 host',
    );
    expect(fromV2.metrics).toEqual({ cpu_usage: 12.5, cpu_procs: 3, cpu_up: 1 });
    expect(fromV2.tags).toEqual({ host: 'influx-v2', region: 'eu' });
    // Its series reads back with exactly the tags it was written with, `host` included.
    expect(
      await seriesOnceComplete('cpu_usage', (found) => found.length > 0, 'the cpu_usage series'),
    ).toEqual([{ __name__: 'cpu_usage', host: 'influx-v2', region: 'eu' }]);
    const fromV1 = await waitFor(
      () => serviceWith('influx-v1', (metrics) => 'mem_used_percent' in metrics),
      10_000,
      'the v1 host',
    );
    expect(fromV1.metrics).toEqual({ mem_used_percent: 40.5 });
  });

  it.each(['v2', 'v1'] as const)(
    'Telegraf writes with its influxdb%s output, configured as docs/agents.md says',
    async (output) => {
      const hostname = `telegraf-${output}`;
      const telegraf = await startTelegraf({
        output,
        url: `${monitor.baseUrl}/api/v1/influx`,
        key,
        hostname,
      });
      agents.push(telegraf);
      const service = await waitFor(
        () => serviceWith(hostname, (metrics) => 'mem_used_percent' in metrics),
        30_000,
        `the ${hostname} host with its memory`,
      );
      expect(service.metrics.mem_used_percent).toBeGreaterThan(0);
      expect(service.metrics.mem_used_percent).toBeLessThanOrEqual(100);
    },
  );

  it('answers the protocols’ errors as they expect: 401 with a challenge, 400 naming the line, 415', async () => {
    const noKey = await fetch(`${monitor.baseUrl}/api/v1/collectd`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '[]',
    });
    expect(noKey.status).toBe(401);
    expect(noKey.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect(noKey.headers.get('content-type')).toMatch(/^application\/problem\+json/);

    const badLine = await fetch(`${monitor.baseUrl}/api/v1/influx/write?precision=ms`, {
      method: 'POST',
      headers: { Authorization: `Token ${key}` },
      body: 'cpu,host=a usage=1 1700000000000\ncpu,host=a usage= 1700000000001\n',
    });
    expect(badLine.status).toBe(400);
    expect(((await badLine.json()) as { detail: string }).detail).toMatch(/line 2/);

    const notSnappy = await fetch(`${monitor.baseUrl}/api/v1/write`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/x-protobuf' },
      body: new Uint8Array([1, 2, 3]),
    });
    expect(notSnappy.status).toBe(415);

    // What was taken and refused is visible in /metrics, per protocol and reason.
    const exposition = await (await fetch(`${monitor.baseUrl}/metrics`)).text();
    expect(exposition).toMatch(
      /agent_write_points_total\{protocol="remote_write",outcome="accepted",reason="",role="all"\} [1-9]/,
    );
    expect(exposition).toMatch(
      /agent_write_requests_total\{protocol="influx",status="400",role="all"\} 1/,
    );
  });
});
