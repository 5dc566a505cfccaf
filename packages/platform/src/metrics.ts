import type { RequestHandler } from 'express';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import {
  AggregatorRegistry,
  Counter,
  Histogram,
  Registry,
  collectDefaultMetrics,
} from 'prom-client';

export type HttpLabel = 'method' | 'route' | 'status';

export interface Metrics {
  /** This instance's registry (never prom-client's global one); roles register their own metrics here. */
  readonly registry: Registry;
  /** `http_requests_total{method,route,status}`. */
  readonly httpRequestsTotal: Counter<HttpLabel>;
  /** `http_request_duration_seconds{method,route,status}`: time to the end of the response. */
  readonly httpRequestDurationSeconds: Histogram<HttpLabel>;
  /**
   * Adds the metrics of another thread of this process (its registry's `getMetricsAsJSON()`,
   * fetched through a port) to what `/metrics` exposes: role `all` stores on a second thread.
   */
  exposeAlso(source: MetricsSource): void;
  /** The Prometheus text of this registry and of every source added, merged (summed). */
  exposition(): Promise<string>;
}

/** Another registry's metrics, as JSON. */
type MetricsSource = () => Promise<MetricObjectWithValues<MetricValue<string>>[]>;

export interface CreateMetricsOptions {
  /** Process metrics (CPU, memory, event loop lag, GC); default true. One per process is enough. */
  readonly defaultMetrics?: boolean;
  /** Labels added to every metric of the registry, e.g. `{ role: 'gateway' }`. */
  readonly defaultLabels?: Readonly<Record<string, string>>;
}

/** Seconds; from a cached read (1 ms) to a slow dependency (10 s). */
const httpDurationBuckets: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** A registry of its own with the HTTP metrics and (by default) the process metrics. */
export function createMetrics(options: CreateMetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultLabels !== undefined) registry.setDefaultLabels({ ...options.defaultLabels });
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const labelNames: HttpLabel[] = ['method', 'route', 'status'];
  const httpRequestsTotal = new Counter<HttpLabel>({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames,
    registers: [registry],
  });
  const httpRequestDurationSeconds = new Histogram<HttpLabel>({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving an HTTP request to the end of its response.',
    labelNames,
    buckets: [...httpDurationBuckets],
    registers: [registry],
  });
  const sources: MetricsSource[] = [];
  return {
    registry,
    httpRequestsTotal,
    httpRequestDurationSeconds,
    exposeAlso: (source) => void sources.push(source),
    async exposition() {
      if (sources.length === 0) return registry.metrics();
      const all = await Promise.all([registry.getMetricsAsJSON(), ...sources.map((s) => s())]);
      return AggregatorRegistry.aggregate(all).metrics();
    },
  };
}

/** The `route` label of requests no route matched (404s, probes of random URLs). */
const unmatchedRoute = 'unmatched';

/** The `status` label of requests whose client went away before the response ended (as nginx). */
const clientClosedStatus = '499';

function patternOf(route: unknown): string | undefined {
  if (typeof route !== 'object' || route === null || !('path' in route)) return undefined;
  const path: unknown = route.path;
  if (typeof path === 'string') return path;
  if (path instanceof RegExp) return path.toString();
  if (Array.isArray(path)) return path.map(String).join(',');
  return undefined;
}

function joinRoute(baseUrl: string, path: string): string {
  if (baseUrl === '') return path;
  return path === '/' ? baseUrl : baseUrl + path;
}

/**
 * Counts and times every request. Mount first. The `route` label is the matched route pattern
 * with its mount path (`/api/v1/alerts/rules/:id`), never the raw URL, so the label set stays
 * bounded; requests no route matched are `unmatched`.
 */
export function httpMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const startedAt = process.hrtime.bigint();
    // The router assigns req.route when a route matches, while req.baseUrl still holds that
    // router's mount path (it is restored when an error leaves the router), so capture both then.
    let route: string | undefined;
    let current: unknown = req.route;
    Object.defineProperty(req, 'route', {
      configurable: true,
      enumerable: true,
      get: () => current,
      set: (value: unknown) => {
        current = value;
        const pattern = patternOf(value);
        if (pattern !== undefined) route = joinRoute(req.baseUrl, pattern);
      },
    });
    res.once('close', () => {
      const labels = {
        method: req.method,
        route: route ?? unmatchedRoute,
        status: res.writableFinished ? String(res.statusCode) : clientClosedStatus,
      };
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      metrics.httpRequestsTotal.inc(labels);
      metrics.httpRequestDurationSeconds.observe(labels, seconds);
    });
    next();
  };
}

/** `GET /metrics`: the registry in Prometheus text format. */
export function metricsHandler(metrics: Metrics): RequestHandler {
  return async (_req, res) => {
    const text = await metrics.exposition();
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.end(text);
  };
}
