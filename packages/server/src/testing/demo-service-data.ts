import { createSeededRandom } from '@monitor/testkit';
import type { SeriesData } from './prometheus-fixture.js';

// What a stock Prometheus (5 s scrapes, job `demo`) stores from three instances of PromLabs'
// demo service (github.com/juliusv/prometheus_demo_service), the data the PromQL compliance
// tester's standard queries expect. Nothing can be scraped from it here, so the same series are
// made up the way the service makes them: its metric names, label sets, units and behaviour
// (counters, a random-walk memory, a growing disk, a batch job every minute that fails a
// quarter of the time, a classic request-duration histogram by method, path and status, a
// metric present every other minute) with Prometheus' scrape labels and timing.

const scrapeIntervalMs = 5_000;
/** client_golang's DefBuckets, which the demo service's histogram uses. */
const bucketBounds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const staleMarker = Number.NaN;

/** The demo's request mix: rate per second, base latency, error ratio, outage period. */
const endpoints = [
  { method: 'GET', path: '/api/foo', perSecond: 30, latencyS: 0.01, errors: 0.005, outageS: 23 },
  { method: 'POST', path: '/api/foo', perSecond: 5, latencyS: 0.02, errors: 0.02, outageS: 60 },
  { method: 'GET', path: '/api/bar', perSecond: 20, latencyS: 0.015, errors: 0.0025, outageS: 13 },
  { method: 'POST', path: '/api/bar', perSecond: 8, latencyS: 0.05, errors: 0.01, outageS: 47 },
  // Unknown paths answer 404 at once.
  { method: 'GET', path: '/api/nonexistent', perSecond: 2, latencyS: 0, errors: 0, outageS: 0 },
];

type Recorder = (name: string, labels: Record<string, string>, t: number, v: number) => void;

/** One demo service instance, scraped every 5 s; `restartAtMs` restarts it (counters reset). */
function scrapeInstance(
  record: Recorder,
  instance: string,
  seed: number,
  fromMs: number,
  toMs: number,
  restartAtMs: number | null,
): void {
  const random = createSeededRandom(seed);
  // Prometheus spreads targets over the interval by a hash of their labels, then stamps each
  // scrape with the clock at its start: a fixed offset per target and a few ms of jitter.
  const offsetMs = Math.floor(random.next() * scrapeIntervalMs);
  let startedMs = fromMs - 3 * 3_600_000;
  let cpu = { user: 0, system: 0, idle: 0 };
  let disk = 16e9;
  const memoryBase = { used: 8 * 2 ** 30, cached: 2 * 2 ** 30, buffers: 2 ** 30 };
  let memory = { ...memoryBase };
  const total = 16 * 2 ** 30;
  let batch = { success: 0, run: 0, duration: 0, bytes: 0 };
  let batchMinuteMs = 0;
  type Histogram = { buckets: number[]; sum: number; count: number };
  let histograms = new Map<string, Histogram>();
  let previousMs = startedMs;
  for (let scheduled = fromMs + offsetMs; scheduled <= toMs; scheduled += scrapeIntervalMs) {
    const t = scheduled + Math.floor(random.next() * 12);
    if (restartAtMs !== null && previousMs < restartAtMs && t >= restartAtMs) {
      startedMs = restartAtMs;
      cpu = { user: 0, system: 0, idle: 0 };
      histograms = new Map();
      batch = { success: 0, run: 0, duration: 0, bytes: 0 };
      memory = { ...memoryBase };
    }
    const dtS = (t - Math.max(previousMs, startedMs)) / 1000;
    previousMs = t;
    const labels = { instance, job: 'demo' };
    const at = (name: string, v: number, extra: Record<string, string> = {}): void =>
      record(name, { ...labels, ...extra }, t, v);

    at('up', 1);
    at('scrape_duration_seconds', 0.002 + random.next() * 0.003);

    at('demo_num_cpus', 4);
    const user = dtS * 4 * (0.3 + (random.next() - 0.5) / 5);
    const system = dtS * 4 * (0.2 + (random.next() - 0.5) / 5);
    cpu = {
      user: cpu.user + user,
      system: cpu.system + system,
      idle: cpu.idle + dtS * 4 - user - system,
    };
    for (const [mode, v] of Object.entries(cpu)) at('demo_cpu_usage_seconds_total', v, { mode });

    disk += dtS * 0.5e6 * (1 - (random.next() - 0.5));
    if (disk > 0.9 * 160e9) disk = 0.1 * 160e9;
    at('demo_disk_usage_bytes', Math.round(disk));
    at('demo_disk_total_bytes', 160e9);

    const step = (current: number, base: number): number => {
      const next = current + Math.round((random.next() - 0.5) * 60 * 2 ** 20);
      return Math.abs(next - base) > base * 0.1 ? base : next;
    };
    memory = {
      used: step(memory.used, memoryBase.used),
      cached: step(memory.cached, memoryBase.cached),
      buffers: step(memory.buffers, memoryBase.buffers),
    };
    for (const [type, v] of Object.entries(memory)) at('demo_memory_usage_bytes', v, { type });
    at('demo_memory_usage_bytes', total - memory.used - memory.cached - memory.buffers, {
      type: 'free',
    });

    // The batch job runs each minute for about 10 s; a quarter of its runs fail.
    const minuteStart = Math.floor(t / 60_000) * 60_000;
    const lastRunEnd = minuteStart + 11_000;
    if (t >= lastRunEnd && batchMinuteMs !== minuteStart) {
      batchMinuteMs = minuteStart;
      const now = lastRunEnd / 1000 - random.next() * 0.002;
      batch.duration = batch.run === 0 ? 11 : now - batch.run;
      batch.run = now;
      if (random.next() > 0.25) {
        batch.success = now;
        batch.bytes = 1e6 + 1e5 - Math.floor(random.next() * 1e5);
      }
    }
    if (batch.run > 0) {
      at('demo_batch_last_success_timestamp_seconds', batch.success);
      at('demo_batch_last_run_timestamp_seconds', batch.run);
      at('demo_batch_last_run_duration_seconds', batch.duration);
      at('demo_batch_last_run_processed_bytes', batch.bytes);
    }

    // Exposed only in even minutes: the first scrape without it writes a staleness marker.
    const minute = new Date(t).getUTCMinutes();
    if (minute % 2 === 0) at('demo_intermittent_metric', 1);
    else if (new Date(t - scrapeIntervalMs).getUTCMinutes() % 2 === 0) {
      at('demo_intermittent_metric', staleMarker);
    }

    at('demo_api_http_requests_in_progress', Math.floor(random.next() * 4));
    const upS = (t - startedMs) / 1000;
    for (const e of endpoints) {
      const inOutage = e.outageS > 0 && upS % (10 * e.outageS) < e.outageS;
      const oscillation = 2 + Math.sin(Math.sin((2 * Math.PI * upS) / 3600));
      const requests = Math.round((dtS * e.perSecond * 2) / oscillation);
      for (let i = 0; i < requests; i++) {
        const failed = random.next() <= e.errors * (inOutage ? 10 : 1);
        const status = e.path === '/api/nonexistent' ? '404' : failed ? '500' : '200';
        const seconds =
          e.latencyS === 0
            ? 0.0001 + random.next() * 0.0002
            : Math.max(0, random.gaussian(e.latencyS, e.latencyS / 10)) * (inOutage ? 3 : 1);
        const key = `${e.method} ${e.path} ${status}`;
        let h = histograms.get(key);
        if (h === undefined) {
          h = { buckets: bucketBounds.map(() => 0), sum: 0, count: 0 };
          histograms.set(key, h);
        }
        bucketBounds.forEach((bound, b) => {
          if (seconds <= bound) h.buckets[b]! += 1;
        });
        h.sum += seconds;
        h.count += 1;
      }
    }
    for (const [key, h] of histograms) {
      const [method, path, status] = key.split(' ') as [string, string, string];
      const extra = { method, path, status };
      const name = 'demo_api_request_duration_seconds';
      bucketBounds.forEach((bound, b) => {
        at(`${name}_bucket`, h.buckets[b]!, { ...extra, le: String(bound) });
      });
      at(`${name}_bucket`, h.count, { ...extra, le: '+Inf' });
      at(`${name}_sum`, h.sum, extra);
      at(`${name}_count`, h.count, extra);
    }
  }
}

/**
 * The demo data of three instances (`demo.promlabs.com:10000` … `:10002`, job `demo`) from
 * `fromMs` to `toMs`, as remote-write would carry it; the third instance restarts halfway.
 * The same every run for the same range.
 */
export function demoServiceData(fromMs: number, toMs: number): SeriesData[] {
  const series = new Map<string, SeriesData>();
  const record: Recorder = (name, labels, t, v) => {
    const all = { __name__: name, ...labels };
    const key = JSON.stringify(Object.entries(all).sort());
    let s = series.get(key);
    if (s === undefined) {
      s = { labels: all, samples: [] };
      series.set(key, s);
    }
    s.samples.push([t, v]);
  };
  for (const i of [0, 1, 2]) {
    const restartAtMs = i === 2 ? fromMs + Math.floor((toMs - fromMs) / 2) : null;
    scrapeInstance(record, `demo.promlabs.com:1000${i}`, 40 + i, fromMs, toMs, restartAtMs);
  }
  return [...series.values()];
}

/**
 * The data cut into consecutive time slices, as a Prometheus sends it: a TSDB takes no sample
 * older than an hour before its newest, so the data goes in time order.
 */
export function sliceByTime(data: SeriesData[], fromMs: number, sliceMs: number): SeriesData[][] {
  const slices: SeriesData[][] = [];
  for (const s of data) {
    for (const [t, v] of s.samples) {
      const index = Math.floor((t - fromMs) / sliceMs);
      while (slices.length <= index) slices.push([]);
      const slice = slices[index]!;
      const last = slice.at(-1);
      if (last?.labels === s.labels) last.samples.push([t, v]);
      else slice.push({ labels: s.labels, samples: [[t, v]] });
    }
  }
  return slices.filter((slice) => slice.length > 0);
}
