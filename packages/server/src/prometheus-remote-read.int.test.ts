// @services postgres
import snappy from 'snappy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '@monitor/db';
import { decodeXorChunk, encodeXorChunks } from '@monitor/protocols';
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
import type { ReadBack } from './testing/remote-read-client.js';
import { readSamples, readStream, readTypes } from './testing/remote-read-client.js';

const orgId = 'org_remote_read';
const apiKey = 'remote-read-key';

function readRequest(startMs: number, endMs: number, responseTypes: number[]): Buffer {
  const type = readTypes.lookupType('ReadRequest');
  const message = type.fromObject({
    queries: [
      {
        startTimestampMs: startMs,
        endTimestampMs: endMs,
        matchers: [{ type: 2, name: '__name__', value: '.+' }],
      },
      {
        startTimestampMs: startMs,
        endTimestampMs: endMs,
        matchers: [
          { type: 0, name: '__name__', value: 'node_load1' },
          { type: 1, name: 'host', value: 'h2' },
        ],
      },
    ],
    acceptedResponseTypes: responseTypes,
  });
  return snappy.compressSync(Buffer.from(type.encode(message).finish()));
}

const expressions = [
  'node_load1',
  'node_load1{region="eu"}',
  'node_load1{host!="h1"}',
  'node_load1{host=~"h[12]"}',
  'node_load1{host!~"h.*1"}',
  '{__name__=~"node_.*|temp_.*"}',
  'node_load1 offset 5m',
  'rate(http_requests_total[5m])',
  'irate(http_requests_total[5m])',
  'increase(net_bytes_total[3m])',
  'resets(http_requests_total[20m])',
  'delta(temp_celsius[5m])',
  'deriv(node_load1[5m])',
  'avg_over_time(node_load1[5m])',
  'quantile_over_time(0.9, node_load1[10m])',
  'last_over_time(node_load1[10m])',
  'absent_over_time(node_load1{host="h3"}[2m])',
  'sum by (region) (rate(http_requests_total[5m]))',
  'topk(2, node_load1)',
  'quantile by (region) (0.9, temp_celsius)',
  'node_load1 * on(host) group_left(env) temp_celsius',
  'node_load1 > bool 2',
  'node_load1 unless on(host) node_load1{env="dev"}',
  'timestamp(node_load1)',
  'label_replace(node_load1, "dc", "$1-x", "region", "(.*)")',
  'predict_linear(node_load1[10m], 600)',
  'rate(http_requests_total[5m] @ start())',
];

describe('remote read at /prometheus/api/v1/read', () => {
  let reference: AgentProcess & { url: string };
  let reader: AgentProcess & { url: string };
  let disposeDb: () => Promise<void>;
  let db: Database;
  let api: { url: string; close: () => Promise<void> };
  const startMs = Math.floor(Date.now() / 60_000) * 60_000 - 55 * 60_000;
  const endMs = startMs + 50 * 60_000;
  const data = oracleData(startMs);

  beforeAll(async () => {
    const body = encode(data);
    reference = await startPrometheus({ scrapeTargets: [], remoteWriteReceiver: true });
    await remoteWriteToPrometheus(reference.url, body);
    const migrated = await migratedDatabase('postgres', 'remote_read');
    db = migrated.db;
    disposeDb = migrated.dispose;
    await storeRemoteWrite(db, orgId, body);
    api = await startPrometheusApi(db, orgId, apiKey);
    reader = await startPrometheus({
      scrapeTargets: [],
      remoteRead: { url: `${api.url}/api/v1/read`, bearerToken: apiKey },
    });
  });

  afterAll(async () => {
    await reader?.stop();
    await reference?.stop();
    await api?.close();
    await disposeDb?.();
  });

  async function answer(url: string, path: string, params: Record<string, string>) {
    const { body } = await createApiCall({ baseUrl: url })<{
      status: string;
      data: { resultType: string; result: unknown };
      errorType?: string;
    }>(`/api/v1/${path}?${new URLSearchParams(params).toString()}`, { bearer: apiKey });
    return body;
  }

  it('lets a stock Prometheus 2.42 answer PromQL over our data as our own API answers', async () => {
    const problems: string[] = [];
    let compared = 0;
    let nonEmpty = 0;
    const instant = [startMs + 20 * 60_000 + 7_000, startMs + 26 * 60_000, endMs - 1_000];
    for (const query of expressions) {
      const cases: [string, Record<string, string>][] = [
        ...instant.map((t): [string, Record<string, string>] => [
          'query',
          { query, time: String(t / 1000) },
        ]),
        [
          'query_range',
          {
            query,
            start: String((startMs + 5 * 60_000) / 1000),
            end: String(endMs / 1000),
            step: '60',
          },
        ],
      ];
      for (const [path, params] of cases) {
        const [theirs, ours] = await Promise.all([
          answer(reader.url, path, params),
          answer(api.url, path, params),
        ]);
        compared++;
        expect(theirs.status, `${query}: ${JSON.stringify(theirs)}`).toBe('success');
        expect(ours.status).toBe('success');
        const wanted = normalize(theirs.data);
        if (typeof wanted === 'string' || wanted.size > 0) nonEmpty++;
        problems.push(
          ...differences(wanted, normalize(ours.data)).map(
            (d) => `${query} ${JSON.stringify(params)}: ${d}`,
          ),
        );
      }
    }
    expect(problems.slice(0, 30)).toEqual([]);
    expect(compared).toBe(expressions.length * 4);
    expect(nonEmpty).toBeGreaterThan(compared * 0.8);
  });

  it('answers a Prometheus that authenticates with the key as basic auth password', async () => {
    const basic = await startPrometheus({
      scrapeTargets: [],
      remoteRead: {
        url: `${api.url}/api/v1/read`,
        basicAuth: { username: 'prometheus', password: apiKey },
      },
    });
    try {
      const params = { query: 'sum(node_load1)', time: String((endMs - 1_000) / 1000) };
      const [theirs, ours] = await Promise.all([
        answer(basic.url, 'query', params),
        answer(api.url, 'query', params),
      ]);
      expect(differences(normalize(theirs.data), normalize(ours.data))).toEqual([]);
      expect(normalize(ours.data)).toHaveProperty('size', 1);
    } finally {
      await basic.stop();
    }
  });

  async function read(url: string, body: Buffer, auth: boolean): Promise<Response> {
    return fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-protobuf',
        'Content-Encoding': 'snappy',
        'X-Prometheus-Remote-Read-Version': '0.1.0',
        ...(auth ? { Authorization: `Bearer ${apiKey}` } : {}),
      },
      body,
    });
  }

  it('answers SAMPLES with the series and samples Prometheus answers', async () => {
    const body = readRequest(startMs - 60_000, endMs + 60_000, []);
    const [theirs, ours] = await Promise.all([
      read(`${reference.url}/api/v1/read`, body, false),
      read(`${api.url}/api/v1/read`, body, true),
    ]);
    expect(ours.status).toBe(200);
    expect(ours.headers.get('content-type')).toBe('application/x-protobuf');
    expect(ours.headers.get('content-encoding')).toBe('snappy');
    const want = readSamples(Buffer.from(await theirs.arrayBuffer()));
    const got = readSamples(Buffer.from(await ours.arrayBuffer()));
    expect(want[0]).toHaveLength(data.length);
    expect(want[1]).toHaveLength(3);
    // Staleness markers come back as stored, with their bits.
    expect(got[0]!.some((series) => series.bits.includes('7ff0000000000002'))).toBe(true);
    expect(got).toEqual(want);
  });

  it('streams XOR chunks that decode to what Prometheus streams, each chunk the bytes Prometheus writes for its samples', async () => {
    const body = readRequest(startMs - 60_000, endMs + 60_000, [1, 0]);
    const [theirs, ours] = await Promise.all([
      read(`${reference.url}/api/v1/read`, body, false),
      read(`${api.url}/api/v1/read`, body, true),
    ]);
    expect(ours.status).toBe(200);
    expect(ours.headers.get('content-type')).toBe(
      'application/x-streamed-protobuf; proto=prometheus.ChunkedReadResponse',
    );
    const want = readStream(Buffer.from(await theirs.arrayBuffer()));
    const got = readStream(Buffer.from(await ours.arrayBuffer()));
    const samplesOnly = (r: ReadBack[][]) =>
      r.map((q) => q.map(({ labels, times, bits }) => ({ labels, times, bits })));
    expect(want[0]).toHaveLength(data.length);
    expect(samplesOnly(got)).toEqual(samplesOnly(want));
    // Prometheus' chunks are cut where its head cut them (184 samples and more: 2.42 sizes
    // head chunks by time); re-encoding each one's samples whole with our encoder gives its
    // very bytes.
    let chunks = 0;
    for (const series of want.flat()) {
      for (const chunk of series.chunks) {
        const decoded = decodeXorChunk(chunk);
        // A NaN is a staleness marker by its bits only (the others are values: NormalNaN).
        const stale = decoded.valueBits.map(([hi, lo]) => (hi === 0x7ff00000 && lo === 2 ? 1 : 0));
        const [again] = encodeXorChunks(
          decoded.timestampsMs,
          decoded.values,
          decoded.values.length,
          stale,
        );
        expect(Buffer.from(again!.data).toString('hex')).toBe(Buffer.from(chunk).toString('hex'));
        chunks++;
      }
    }
    expect(chunks).toBeGreaterThan(data.length);
  });

  it('refuses an answer over its sample limit with bad_data, as Prometheus does with 400', async () => {
    const limited = await startPrometheusApi(db, orgId, apiKey, 1_000);
    try {
      const response = await read(
        `${limited.url}/api/v1/read`,
        readRequest(startMs, endMs, []),
        true,
      );
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        status: 'error',
        errorType: 'bad_data',
        error: 'exceeded sample limit (1000)',
      });
    } finally {
      await limited.close();
    }
  });

  it('refuses a request without a key, and a body that is not a snappy ReadRequest', async () => {
    const body = readRequest(startMs, endMs, []);
    const anonymous = await read(`${api.url}/api/v1/read`, body, false);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ status: 'error', errorType: 'unauthorized' });
    const garbage = await read(`${api.url}/api/v1/read`, Buffer.from('not snappy'), true);
    expect(garbage.status).toBe(400);
    expect(await garbage.json()).toMatchObject({ status: 'error', errorType: 'bad_data' });
  });
});
