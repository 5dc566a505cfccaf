// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrometheus } from '@monitor/testkit';
import type { AgentProcess } from '@monitor/testkit';
import type { ApiReply } from '@monitor/testkit/builders';
import { createApiCall } from '@monitor/testkit/builders';
import { migratedDatabase } from '../../db/src/testing/clean-database.js';
import type { SeriesData } from './testing/prometheus-fixture.js';
import {
  differences,
  encode,
  normalize,
  remoteWriteToPrometheus,
  startPrometheusApi,
  storeRemoteWrite,
} from './testing/prometheus-fixture.js';

const orgId = 'org_grafana';
const apiKey = 'grafana-key';

/**
 * What a stock Prometheus scraping node_exporter and itself remote-writes: `instance` and `job`
 * on every series, no `host`; 30 minutes at 15 s with scrape jitter of a few milliseconds.
 */
function scrapedFleet(startMs: number): SeriesData[] {
  const targets = [
    { instance: '127.0.0.1:9100', job: 'node' },
    { instance: '127.0.0.1:9090', job: 'prometheus' },
  ];
  const out: SeriesData[] = [];
  for (const [t, target] of targets.entries()) {
    const times = Array.from({ length: 120 }, (_, i) => startMs + i * 15_000 + ((i * 7 + t) % 5));
    out.push({ labels: { __name__: 'up', ...target }, samples: times.map((ts) => [ts, 1]) });
    out.push({
      labels: { __name__: 'process_resident_memory_bytes', ...target },
      samples: times.map((ts, i) => [ts, 20_000_000 + ((i * 4096 * (t + 3)) % 900_000)]),
    });
    if (target.job === 'node') {
      for (const cpu of ['0', '1']) {
        for (const mode of ['idle', 'system', 'user']) {
          out.push({
            labels: { __name__: 'node_cpu_seconds_total', cpu, mode, ...target },
            samples: times.map((ts, i) => [ts, 1000 + i * (mode === 'idle' ? 14.2 : 0.37)]),
          });
        }
      }
    }
  }
  return out;
}

/** An answer's status and its JSON body (none for a 204). */
type Answer = ApiReply<{ status: string; data?: unknown; errorType?: string } | undefined>;

describe("Grafana's Prometheus data source, request by request, against Prometheus 2.42", () => {
  let prometheus: AgentProcess & { url: string };
  let disposeDb: () => Promise<void>;
  let ours: { url: string; close: () => Promise<void> };
  const startMs = Math.floor(Date.now() / 60_000) * 60_000 - 40 * 60_000;
  const endMs = startMs + 30 * 60_000;
  // Grafana sends its time range snapped to minutes, in seconds.
  const range = { start: String(startMs / 1000 - 60), end: String(endMs / 1000 + 60) };

  beforeAll(async () => {
    prometheus = await startPrometheus({ scrapeTargets: [], remoteWriteReceiver: true });
    const body = encode(scrapedFleet(startMs));
    await remoteWriteToPrometheus(prometheus.url, body);
    const { db, dispose } = await migratedDatabase('postgres', 'grafana');
    disposeDb = dispose;
    await storeRemoteWrite(db, orgId, body);
    ours = await startPrometheusApi(db, orgId, apiKey);
  });

  afterAll(async () => {
    await ours?.close();
    await prometheus?.stop();
    await disposeDb?.();
  });

  /**
   * One request as Grafana makes it (`GET` with the parameters in the URL, or `POST` with a
   * form body), to Prometheus and to us; we are reached with basic auth, the key as password,
   * as a Grafana data source is set up.
   */
  async function both(
    method: 'GET' | 'POST',
    path: string,
    params: [string, string][],
  ): Promise<{ prometheus: Answer; ours: Answer }> {
    const form = new URLSearchParams(params).toString();
    const call = (base: string, headers: Record<string, string>): Promise<Answer> =>
      createApiCall({ baseUrl: base })(
        method === 'GET' && form !== '' ? `/api/v1/${path}?${form}` : `/api/v1/${path}`,
        method === 'GET'
          ? { headers }
          : {
              method: 'POST',
              headers,
              raw: { data: form, contentType: 'application/x-www-form-urlencoded' },
            },
      );
    const basic = `Basic ${Buffer.from(`grafana:${apiKey}`).toString('base64')}`;
    return {
      prometheus: await call(prometheus.url, {}),
      ours: await call(ours.url, { Authorization: basic }),
    };
  }

  /** The same status, `status` and `errorType`, and the same data, as Grafana would read them. */
  function expectSameAnswer(answers: { prometheus: Answer; ours: Answer }, data = true): void {
    expect(answers.ours.status).toBe(answers.prometheus.status);
    expect(answers.ours.body?.status).toBe(answers.prometheus.body?.status);
    expect(answers.ours.body?.errorType).toBe(answers.prometheus.body?.errorType);
    if (data) expect(answers.ours.body?.data).toEqual(answers.prometheus.body?.data);
  }

  const sortedSeries = (data: unknown) =>
    (data as Record<string, string>[])
      .map((labels) => JSON.stringify(Object.entries(labels).sort()))
      .sort();

  it('answers the health check (an instant `1+1` at time 4, POST)', async () => {
    expectSameAnswer(
      await both('POST', 'query', [
        ['query', '1+1'],
        ['time', '4'],
      ]),
    );
  });

  it('answers buildinfo without `features`, so Grafana takes it for Prometheus', async () => {
    const answers = await both('GET', 'status/buildinfo', []);
    expectSameAnswer(answers, false);
    const data = answers.ours.body?.data as Record<string, unknown>;
    expect(Object.keys(data).sort()).toEqual(
      Object.keys(answers.prometheus.body?.data as object).sort(),
    );
    expect(data['version']).toMatch(/^2\.42\./);
    expect(data).not.toHaveProperty('features');
  });

  it('lists metric names for the query editor (label/__name__/values)', async () => {
    const answers = await both('GET', 'label/__name__/values', Object.entries(range));
    expectSameAnswer(answers);
    expect(answers.ours.body?.data).toContain('node_cpu_seconds_total');
  });

  it('answers metadata (none from remote-write) and checks its limit', async () => {
    expectSameAnswer(await both('GET', 'metadata', []));
    expectSameAnswer(
      await both('GET', 'metadata', [
        ['metric', 'up'],
        ['limit', '10'],
      ]),
    );
    expectSameAnswer(await both('GET', 'metadata', [['limit', 'ten']]));
  });

  it('lists label names, with and without match[] (labels, POST)', async () => {
    expectSameAnswer(await both('POST', 'labels', Object.entries(range)));
    const matched = await both('POST', 'labels', [
      ...Object.entries(range),
      ['match[]', 'node_cpu_seconds_total'],
    ]);
    expectSameAnswer(matched);
    expect(matched.ours.body?.data).toEqual(['__name__', 'cpu', 'instance', 'job', 'mode']);
  });

  it('lists the values of a label for a selector (label/<name>/values with match[])', async () => {
    expectSameAnswer(
      await both('GET', 'label/instance/values', [...Object.entries(range), ['match[]', 'up']]),
    );
    expectSameAnswer(
      await both('GET', 'label/mode/values', [
        ...Object.entries(range),
        ['match[]', 'node_cpu_seconds_total{cpu="1"}'],
      ]),
    );
  });

  it('lists series for the metrics browser (series, with limit)', async () => {
    const answers = await both('GET', 'series', [
      ...Object.entries(range),
      ['match[]', '{job="node"}'],
      ['limit', '40000'],
    ]);
    expectSameAnswer(answers, false);
    expect(sortedSeries(answers.ours.body?.data)).toEqual(
      sortedSeries(answers.prometheus.body?.data),
    );
  });

  it('answers the exemplars probe with times in milliseconds, as Grafana sends them', async () => {
    const ms = [
      ['start', String(endMs - 30 * 60_000)],
      ['end', String(endMs)],
    ] as [string, string][];
    expectSameAnswer(await both('POST', 'query_exemplars', [['query', 'test'], ...ms]));
    expectSameAnswer(await both('GET', 'query_exemplars', [['query', '1 + 1'], ...ms]));
    expectSameAnswer(
      await both('GET', 'query_exemplars', [
        ['query', 'up'],
        ['start', range.end],
        ['end', range.start],
      ]),
    );
    expectSameAnswer(await both('GET', 'query_exemplars', [['query', 'sum(']]), false);
    expectSameAnswer(await both('GET', 'query_exemplars', []), false);
  });

  it('answers the rule and alert lists that Grafana reads for recording rules and alerting', async () => {
    expectSameAnswer(await both('GET', 'rules', []));
    expectSameAnswer(await both('GET', 'rules', [['type', 'alert']]));
    expectSameAnswer(await both('GET', 'rules', [['type', 'neither']]));
    expectSameAnswer(await both('GET', 'alerts', []));
  });

  it("formats a query for the code editor's Format query button (format_query)", async () => {
    expectSameAnswer(
      await both('GET', 'format_query', [
        ['query', 'sum(rate(node_cpu_seconds_total{job="node"}[5m]))by(mode)/2'],
      ]),
    );
    expectSameAnswer(
      await both('POST', 'format_query', [
        [
          'query',
          'sum by (mode) (rate(node_cpu_seconds_total{job="node",mode!="idle",cpu=~"0|1"}[5m])) / on (mode) group_left sum by (mode) (rate(node_cpu_seconds_total[5m]))',
        ],
      ]),
    );
    expectSameAnswer(
      await both('GET', 'format_query', [
        [
          'query',
          'max_over_time(rate(node_cpu_seconds_total{mode="user"}[1m])[10m:30s] offset 1m)',
        ],
      ]),
    );
    expectSameAnswer(
      await both('GET', 'format_query', [
        [
          'query',
          'max_over_time(sum by (mode) (rate(node_cpu_seconds_total{job="node",mode!="idle",cpu=~"0|1"}[5m]) / 2)[30m:1m] @ end())',
        ],
      ]),
    );
    expectSameAnswer(await both('GET', 'format_query', [['query', 'sum(rate(']]), false);
  });

  it('runs a panel query (query_range, POST) and an Explore instant query (GET)', async () => {
    const panel = await both('POST', 'query_range', [
      ['query', 'sum by (mode) (rate(node_cpu_seconds_total[5m]))'],
      ['start', String(startMs / 1000 + 600)],
      ['end', String(endMs / 1000)],
      ['step', '60'],
    ]);
    expectSameAnswer(panel, false);
    const want = panel.prometheus.body?.data as { resultType: string; result: unknown };
    const got = panel.ours.body?.data as { resultType: string; result: unknown };
    expect(differences(normalize(want), normalize(got))).toEqual([]);
    expect((want.result as unknown[]).length).toBe(3);

    const explore = await both('GET', 'query', [
      ['query', 'up'],
      ['time', String(endMs / 1000 - 30)],
    ]);
    expectSameAnswer(explore, false);
    expect(
      differences(
        normalize(explore.prometheus.body?.data as { resultType: string; result: unknown }),
        normalize(explore.ours.body?.data as { resultType: string; result: unknown }),
      ),
    ).toEqual([]);
  });
});
