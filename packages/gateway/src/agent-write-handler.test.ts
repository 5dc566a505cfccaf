import { encodeSampleMessage } from '@monitor/schemas';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { BusMessage, Publisher } from '@monitor/bus';
import { BusUnavailableError } from '@monitor/bus';
import { createLogger, sendProblem } from '@monitor/platform';
import { agentWritePaths, agentWriteRoutes } from './agent-routes.js';
import type { AgentWriteMetrics } from './agent-write-handler.js';
import { createAgentWriteHandler } from './agent-write-handler.js';
import type { SeriesLimits } from './series-policy.js';
import { createSeriesPolicy } from './series-policy.js';

const nowMs = Date.parse('2026-11-22T10:00:00Z');
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((r) => server.close(r))));
});

/** The handlers of every agent route on a real HTTP server, publishing to `publish`. */
async function serve(
  publish: Publisher['publish'] = () => Promise.resolve(),
  limits: Partial<SeriesLimits> = {},
) {
  const published: BusMessage[] = [];
  const points: Parameters<AgentWriteMetrics['points']>[] = [];
  const refused: [string, number][] = [];
  const deps = {
    authenticator: {
      authenticate: (key: string | undefined) =>
        Promise.resolve(
          key === 'good'
            ? { keyId: 'key_1', orgId: 'org_1', scopes: ['ingest' as const] }
            : undefined,
        ),
    },
    rateLimiter: () => Promise.resolve('allowed' as const),
    publisher: {
      publish: async (topic: string, messages: BusMessage[]) => {
        await publish(topic, messages);
        published.push(...messages);
      },
      close: () => Promise.resolve(),
    },
    seriesPolicy: createSeriesPolicy(
      {
        maxLabels: 64,
        maxLabelNameLength: 64,
        maxLabelValueLength: 256,
        maxNewSeriesPerMinute: 0,
        maxTrackedSeries: 1000,
        ...limits,
      },
      () => nowMs,
    ),
    topic: 'samples',
    encodeMessage: encodeSampleMessage,
    maxBodyBytes: 64 * 1024,
    rawRetentionMs: 30 * 86_400_000,
    maxHistogramBuckets: 160,
    retryAfterSeconds: 2,
    nowMs: () => nowMs,
    metrics: {
      seriesRefused: (reason: string, count: number) => void refused.push([reason, count]),
      points: (...args: Parameters<AgentWriteMetrics['points']>) => void points.push(args),
    },
    logger: createLogger({ level: 'silent' }),
  };
  const handlers = new Map(
    [...agentWriteRoutes].map(([path, route]) => [path, createAgentWriteHandler(route, deps)]),
  );
  const server = createServer((req, res) => {
    const handle = handlers.get((req.url ?? '').split('?')[0] ?? '');
    if (handle === undefined) throw new Error(`no route for ${req.url}`);
    handle(req, res).catch((err: unknown) => sendProblem(res, err));
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    published,
    points,
    refused,
    post: (path: string, init: RequestInit) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        ...init,
        headers: { Authorization: 'Token good', ...init.headers },
      }),
  };
}

const messagesOf = (published: BusMessage[]) =>
  published.map((message) => JSON.parse(message.value.toString()) as Record<string, unknown>);

describe('createAgentWriteHandler', () => {
  it('publishes the decoded samples as messages of the key’s org, tags labelling their series, then answers', async () => {
    const gateway = await serve();
    const response = await gateway.post(`${agentWritePaths.influxV2}?precision=ms`, {
      body: 'cpu,host=a,env=prod usage=1.5,up=true 1795341600000\nmem,host=a used=2i 1795341600000\n',
    });
    expect(response.status).toBe(204);
    expect(messagesOf(gateway.published)).toEqual([
      {
        v: 1,
        org_id: 'org_1',
        host: 'a',
        time_ms: 1795341600000,
        received_ms: nowMs,
        metrics: { cpu_usage: 1.5, cpu_up: 1 },
        tags: { env: 'prod', host: 'a' },
        tags_label_series: true,
        containers: [],
        processes: [],
      },
      expect.objectContaining({ metrics: { mem_used: 2 }, tags: { host: 'a' } }),
    ]);
    expect(gateway.points).toContainEqual(['influx', 'accepted', '', 3]);
  });

  it('reads a gzip body, and counts the limit after decompression', async () => {
    const gateway = await serve();
    const line = 'cpu,host=a usage=1 1795341600000\n';
    const ok = await gateway.post(`${agentWritePaths.influxV1}?precision=ms`, {
      headers: { 'Content-Encoding': 'gzip' },
      body: gzipSync(line),
    });
    expect(ok.status).toBe(204);
    const bomb = await gateway.post(`${agentWritePaths.influxV1}?precision=ms`, {
      headers: { 'Content-Encoding': 'gzip' },
      body: gzipSync(line.repeat(5000)),
    });
    expect(bomb.status).toBe(413);
  });

  it('refuses a snappy body declaring more than the limit unopened (413), and garbage (400)', async () => {
    const gateway = await serve();
    const headers = { 'Content-Type': 'application/x-protobuf', 'Content-Encoding': 'snappy' };
    // A snappy block starts with its decompressed length as a varint: here 2^32 - 1.
    const bomb = await gateway.post(agentWritePaths.remoteWrite, {
      headers,
      body: new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]),
    });
    expect(bomb.status).toBe(413);
    const garbage = await gateway.post(agentWritePaths.remoteWrite, {
      headers,
      body: new Uint8Array([0x05, 0x10, 0xff, 0xff, 0xff, 0xff]),
    });
    expect(garbage.status).toBe(400);
    expect(garbage.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(gateway.published).toEqual([]);
  });

  it('publishes exemplars in messages of their own, and fails no request for its exemplars alone', async () => {
    const gateway = await serve();
    const timeUnixNano = `${nowMs}000000`;
    const exemplar = (user: string) => ({
      timeUnixNano,
      asDouble: 0.5,
      filteredAttributes: [{ key: 'user', value: { stringValue: user } }],
    });
    const body = (point: Record<string, unknown>) =>
      JSON.stringify({
        resourceMetrics: [
          {
            resource: { attributes: [{ key: 'host.name', value: { stringValue: 'a' } }] },
            scopeMetrics: [
              {
                metrics: [
                  {
                    name: 'requests',
                    sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [point] },
                  },
                ],
              },
            ],
          },
        ],
      });
    const headers = { 'Content-Type': 'application/json' };
    const both = await gateway.post(agentWritePaths.otlpMetrics, {
      headers,
      body: body({ timeUnixNano, asInt: '3', exemplars: [exemplar('u1')] }),
    });
    expect(both.status).toBe(200);
    // An older writer dead-letters a message with exemplars: the sample must not go with them.
    expect(messagesOf(gateway.published)).toEqual([
      expect.objectContaining({ metrics: { requests: 3 }, time_ms: nowMs }),
      expect.objectContaining({
        metrics: {},
        time_ms: nowMs,
        exemplars: [{ metric: 'requests', value: 0.5, labels: { user: 'u1' } }],
      }),
    ]);
    expect(messagesOf(gateway.published)[0]).not.toHaveProperty('exemplars');
    // No value to take, and an exemplar storage cannot hold (a NUL in a label).
    const refused = await gateway.post(agentWritePaths.otlpMetrics, {
      headers,
      body: body({ timeUnixNano, exemplars: [exemplar('nul\u0000')] }),
    });
    expect(refused.status).toBe(200);
    // Said, but not counted as a rejected data point: an exemplar is none.
    expect(await refused.json()).toEqual({
      partialSuccess: { errorMessage: '1 invalid_exemplar' },
    });
    expect(gateway.points).toContainEqual(['otlp', 'rejected', 'invalid_exemplar', 1]);
    expect(gateway.published).toHaveLength(2);
  });

  it('answers 400 naming the counts when no point can be taken, and publishes nothing', async () => {
    const gateway = await serve();
    const response = await gateway.post(`${agentWritePaths.influxV2}?precision=ms`, {
      body: 'cpu usage=1 1795341600000\n',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { detail: string }).detail).toMatch(/1 no_host/);
    expect(gateway.published).toEqual([]);
    expect(gateway.points).toContainEqual(['influx', 'rejected', 'no_host', 1]);
  });

  it('applies the series limits: too many labels is a 400, a spent new-series budget a 429', async () => {
    // Influx's host tag is a label like the others.
    const gateway = await serve(undefined, { maxLabels: 2, maxNewSeriesPerMinute: 2 });
    const labels = await gateway.post(`${agentWritePaths.influxV2}?precision=ms`, {
      body: 'cpu,host=a,env=prod,dc=x usage=1 1795341600000\n',
    });
    expect(labels.status).toBe(400);
    expect(((await labels.json()) as { detail: string }).detail).toMatch(/1 too_many_labels/);

    const three = 'cpu,host=a,env=prod usage=1,idle=2,steal=3 1795341600000\n';
    expect(
      (await gateway.post(`${agentWritePaths.influxV2}?precision=ms`, { body: three })).status,
    ).toBe(204);
    expect(messagesOf(gateway.published).at(-1)?.metrics).toEqual({ cpu_usage: 1, cpu_idle: 2 });
    const spent = await gateway.post(`${agentWritePaths.influxV2}?precision=ms`, {
      body: 'cpu,host=b usage=1 1795341600000\n',
    });
    expect(spent.status).toBe(429);
    expect(spent.headers.get('retry-after')).toBe('60');
    expect(gateway.refused).toEqual([
      ['too_many_labels', 1],
      ['new_series_limit', 1],
      ['new_series_limit', 1],
    ]);
  });

  it('answers 503 and never 2xx when the bus does not take the samples', async () => {
    const gateway = await serve(() => Promise.reject(new BusUnavailableError('timeout')));
    const response = await gateway.post(`${agentWritePaths.influxV2}?precision=ms`, {
      body: 'cpu,host=a usage=1 1795341600000\n',
    });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('2');
  });

  it('challenges a request without a key, and refuses unknown precisions and media types', async () => {
    const gateway = await serve();
    // Basic x:x: a key nobody has.
    const noKey = await gateway.post(agentWritePaths.collectd, {
      headers: { Authorization: 'Basic eDp4' },
    });
    expect(noKey.status).toBe(401);
    expect(noKey.headers.get('www-authenticate')).toMatch(/^Basic realm=/);

    const precision = await gateway.post(`${agentWritePaths.influxV2}?precision=n`, { body: '' });
    expect(precision.status).toBe(400);
    expect(((await precision.json()) as { detail: string }).detail).toMatch(/precision/);

    const otlpXml = await gateway.post(agentWritePaths.otlpMetrics, {
      headers: { 'Content-Type': 'application/xml' },
      body: '<x/>',
    });
    expect(otlpXml.status).toBe(415);
    const collectdText = await gateway.post(agentWritePaths.collectd, {
      headers: { 'Content-Type': 'text/plain' },
      body: '[]',
    });
    expect(collectdText.status).toBe(415);
  });
});
