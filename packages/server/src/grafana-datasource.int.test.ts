// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrometheus } from '@monitor/testkit';
import type { AgentProcess } from '@monitor/testkit';
import { migratedDatabase } from '../../db/src/testing/clean-database.js';
import {
  encode,
  oracleData,
  startPrometheusApi,
  storeRemoteWrite,
} from './testing/prometheus-fixture.js';

const orgId = 'org_grafana';
const apiKey = 'grafana-key';

/** One request as Grafana's Prometheus data source sends it. */
type GrafanaCall = {
  /** What Grafana does when it sends it. */
  why: string;
  method: 'GET' | 'POST';
  path: string;
  params: Record<string, string | string[]>;
  /** Compare the `data` as sets (Grafana sorts these itself). */
  unordered?: true;
};

function form(params: GrafanaCall['params']): URLSearchParams {
  const out = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const each of Array.isArray(value) ? value : [value]) out.append(name, each);
  }
  return out;
}

/**
 * The calls of Grafana's Prometheus data source (packages/grafana-prometheus: datasource.ts,
 * language_provider.ts; pkg/promlib: the health check, version detection and queries) when a
 * data source is added and tested, in Explore and the query builder, and in the alert list.
 * POST with a form body is its default method for queries and metadata; label values are GET.
 */
function grafanaCalls(startS: number, endS: number): GrafanaCall[] {
  const range = { start: String(startS), end: String(endS) };
  return [
    { why: 'detects the flavour and version', method: 'GET', path: 'status/buildinfo', params: {} },
    {
      why: 'Save & test',
      method: 'POST',
      path: 'query',
      params: { query: '1+1', time: String(endS) },
    },
    {
      why: 'a panel, range query',
      method: 'POST',
      path: 'query_range',
      params: { query: 'sum by (job) (rate(process_cpu_seconds_total[5m]))', ...range, step: '60' },
    },
    {
      why: 'a panel, instant query',
      method: 'POST',
      path: 'query',
      params: { query: 'up', time: String(endS) },
    },
    {
      why: 'checks exemplars on start (times in ms, as it sends them)',
      method: 'GET',
      path: 'query_exemplars',
      params: { query: 'test', start: String(startS * 1000), end: String(endS * 1000) },
    },
    {
      why: 'exemplars of a panel',
      method: 'POST',
      path: 'query_exemplars',
      params: { query: 'rate(process_cpu_seconds_total[5m])', ...range },
    },
    {
      why: 'exemplars of an expression without a selector',
      method: 'POST',
      path: 'query_exemplars',
      params: { query: '1+1', ...range },
    },
    { why: 'recording-rule hints', method: 'GET', path: 'rules', params: {} },
    { why: 'the alert list', method: 'GET', path: 'rules', params: { type: 'alert' } },
    { why: 'an unknown rule type', method: 'GET', path: 'rules', params: { type: 'nope' } },
    { why: 'alerts', method: 'GET', path: 'alerts', params: {} },
    { why: 'metric metadata for hints', method: 'GET', path: 'metadata', params: {} },
    {
      why: 'the metric list of the builder and code editor',
      method: 'GET',
      path: 'label/__name__/values',
      params: { ...range },
    },
    {
      why: 'label values of a metric in the builder (with a limit, as newer versions send)',
      method: 'GET',
      path: 'label/instance/values',
      params: { ...range, 'match[]': 'up', limit: '40000' },
    },
    {
      why: 'label names of the builder',
      method: 'POST',
      path: 'labels',
      params: { ...range, 'match[]': 'process_resident_memory_bytes' },
      unordered: true,
    },
    { why: 'ad hoc filter keys', method: 'POST', path: 'labels', params: { ...range } },
    {
      why: 'the metrics browser, series of a selector',
      method: 'POST',
      path: 'series',
      params: { ...range, 'match[]': '{job="node"}', limit: '40000' },
      unordered: true,
    },
    {
      why: 'a variable query label_values(up, job)',
      method: 'GET',
      path: 'series',
      params: { ...range, 'match[]': 'up' },
      unordered: true,
    },
    {
      why: 'the code editor’s Format query',
      method: 'GET',
      path: 'format_query',
      params: { query: 'sum(rate(process_cpu_seconds_total{job="node"}[5m]))by(instance)/2' },
    },
    {
      why: 'Format query on an expression that does not parse',
      method: 'GET',
      path: 'format_query',
      params: { query: 'sum(rate(' },
    },
    {
      why: 'a query with a syntax error',
      method: 'POST',
      path: 'query',
      params: { query: 'sum(', time: String(endS) },
    },
  ];
}

describe('Grafana’s Prometheus data source against /prometheus', () => {
  let prometheus: AgentProcess & { url: string };
  let disposeDb: () => Promise<void>;
  let ours: { url: string; close: () => Promise<void> };
  const startMs = Math.floor(Date.now() / 60_000) * 60_000 - 55 * 60_000;
  const endMs = startMs + 50 * 60_000;

  beforeAll(async () => {
    prometheus = await startPrometheus({ scrapeTargets: [], remoteWriteReceiver: true });
    const body = encode(oracleData(startMs));
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

  async function call(base: string, { method, path, params }: GrafanaCall, headers = {}) {
    const url = `${base}/api/v1/${path}`;
    const response =
      method === 'GET'
        ? await fetch(`${url}?${form(params).toString()}`, { headers })
        : await fetch(url, {
            method,
            headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' },
            body: form(params),
          });
    const text = await response.text();
    // Prometheus answers some calls with no body at all (204).
    if (response.status === 204 && text === '') return { status: 204, answer: { status: '' } };
    if (!text.startsWith('{'))
      throw new Error(`${base} ${method} ${path}: ${response.status} ${text}`);
    const answer = JSON.parse(text) as { status: string; data?: unknown; errorType?: string };
    return { status: response.status, answer };
  }

  it('answers every call it makes as Prometheus 2.42 does', async () => {
    const calls = grafanaCalls(startMs / 1000, endMs / 1000);
    for (const each of calls) {
      const [want, got] = await Promise.all([
        call(prometheus.url, each),
        call(ours.url, each, { Authorization: `Bearer ${apiKey}` }),
      ]);
      const shape = ({ status, answer }: typeof want) => ({
        why: each.why,
        status,
        body: {
          status: answer.status,
          errorType: answer.errorType,
          data:
            each.path === 'status/buildinfo'
              ? Object.keys(answer.data as object).sort()
              : each.unordered === true
                ? (answer.data as unknown[]).map((entry) => JSON.stringify(entry)).sort()
                : answer.data,
        },
      });
      expect(shape(got)).toEqual(shape(want));
    }
  });

  it('names the version whose API it follows', async () => {
    const buildinfo = grafanaCalls(0, 1)[0]!;
    const [want, got] = await Promise.all([
      call(prometheus.url, buildinfo),
      call(ours.url, buildinfo, { Authorization: `Bearer ${apiKey}` }),
    ]);
    expect((got.answer.data as { version: string }).version).toBe(
      // Debian's build says 2.42.0+ds: the same version, with build metadata.
      (want.answer.data as { version: string }).version.replace(/\+.*$/, ''),
    );
  });
});
