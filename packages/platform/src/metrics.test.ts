import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Counter, register as globalRegistry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { notFound } from './app-error.js';
import { createLogger } from './logger.js';
import {
  createMetrics,
  httpMetrics,
  metricsHandler,
  type HttpLabel,
  type Metrics,
} from './metrics.js';
import { notFoundHandler, problemHandler } from './problem-handler.js';

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(async (server) => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }),
  );
});

async function serve(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An app with a router mounted under /api/v1, as the roles build theirs. */
function buildApp(metrics: Metrics) {
  const app = express();
  app.use(httpMetrics(metrics));
  app.get('/metrics', metricsHandler(metrics));
  const api = express.Router();
  api.get('/alerts/rules/:id', (req, res, next) => {
    if (req.params.id === 'rul_missing') {
      next(notFound('Rule rul_missing'));
      return;
    }
    res.json({ id: req.params.id });
  });
  app.use('/api/v1', api);
  app.use(notFoundHandler);
  app.use(problemHandler(createLogger({ level: 'silent' })));
  return app;
}

async function countOf(
  metrics: Metrics,
  labels: Partial<Record<HttpLabel, string>>,
): Promise<number> {
  const { values } = await metrics.httpRequestsTotal.get();
  return values
    .filter((value) =>
      Object.entries(labels).every(([name, v]) => value.labels[name as HttpLabel] === v),
    )
    .reduce((sum, value) => sum + value.value, 0);
}

describe('httpMetrics', () => {
  it('counts a request under its route pattern, not its URL', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const url = await serve(buildApp(metrics));
    await (await fetch(`${url}/api/v1/alerts/rules/rul_1`)).text();
    await (await fetch(`${url}/api/v1/alerts/rules/rul_2`)).text();
    expect(
      await countOf(metrics, { method: 'GET', route: '/api/v1/alerts/rules/:id', status: '200' }),
    ).toBe(2);
    const { values } = await metrics.httpRequestDurationSeconds.get();
    const count = values.find(
      (value) =>
        value.metricName === 'http_request_duration_seconds_count' &&
        value.labels.route === '/api/v1/alerts/rules/:id',
    );
    expect(count?.value).toBe(2);
  });

  it('keeps the full pattern when an error leaves the router', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const url = await serve(buildApp(metrics));
    expect((await fetch(`${url}/api/v1/alerts/rules/rul_missing`)).status).toBe(404);
    expect(
      await countOf(metrics, { method: 'GET', route: '/api/v1/alerts/rules/:id', status: '404' }),
    ).toBe(1);
  });

  it('labels requests no route matched as unmatched', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const url = await serve(buildApp(metrics));
    await (await fetch(`${url}/wp-admin/${Math.random()}`)).text();
    await (await fetch(`${url}/api/v1/nothing-here`)).text();
    expect(await countOf(metrics, { route: 'unmatched', status: '404' })).toBe(2);
  });
});

describe('metricsHandler', () => {
  it('serves the registry in Prometheus text format', async () => {
    const metrics = createMetrics();
    const url = await serve(buildApp(metrics));
    await (await fetch(`${url}/api/v1/alerts/rules/rul_1`)).text();
    const response = await fetch(`${url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(metrics.registry.contentType);
    const text = await response.text();
    expect(text).toContain('# TYPE http_requests_total counter');
    expect(text).toContain(
      'http_requests_total{method="GET",route="/api/v1/alerts/rules/:id",status="200"} 1',
    );
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(text).toContain('process_cpu_user_seconds_total');
  });
});

describe('createMetrics', () => {
  it("exposes another thread's metrics with its own, summing those both have", async () => {
    const main = createMetrics({ defaultMetrics: false, defaultLabels: { role: 'all' } });
    const other = createMetrics({ defaultMetrics: false, defaultLabels: { role: 'all' } });
    const written = new Counter({
      name: 'samples_written_total',
      help: 'Rows written.',
      registers: [other.registry],
    });
    written.inc(5);
    main.httpRequestsTotal.inc({ method: 'GET', route: '/x', status: '200' });
    other.httpRequestsTotal.inc({ method: 'GET', route: '/x', status: '200' }, 2);
    main.exposeAlso(() => other.registry.getMetricsAsJSON());

    const text = await main.exposition();
    expect(text).toContain('samples_written_total{role="all"} 5');
    expect(text).toContain(
      'http_requests_total{method="GET",route="/x",status="200",role="all"} 3',
    );
    expect(text.match(/# TYPE http_requests_total counter/g)).toHaveLength(1);
  });

  it('keeps its metrics in its own registry', async () => {
    const first = createMetrics({ defaultMetrics: false });
    const second = createMetrics({ defaultMetrics: false });
    first.httpRequestsTotal.inc({ method: 'GET', route: '/x', status: '200' });
    expect(await second.registry.metrics()).not.toContain('route="/x"');
    expect(globalRegistry.getSingleMetric('http_requests_total')).toBeUndefined();
  });

  it('adds default labels to every metric', async () => {
    const metrics = createMetrics({ defaultMetrics: false, defaultLabels: { role: 'gateway' } });
    metrics.httpRequestsTotal.inc({ method: 'GET', route: '/x', status: '200' });
    expect(await metrics.registry.metrics()).toContain(
      'http_requests_total{method="GET",route="/x",status="200",role="gateway"} 1',
    );
  });
});
