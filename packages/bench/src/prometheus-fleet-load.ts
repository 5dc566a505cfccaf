import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PrometheusFleet } from './prometheus-fleet.js';
import { prometheusFleetMetrics } from './prometheus-fleet.js';

/**
 * The Prometheus fleet's remote-write, as its servers would send it: the history before a run,
 * then a scrape of every host each interval.
 */

/** Hosts per remote-write body: a Prometheus queue shard's batch is of this order. */
const hostsPerBody = 500;
const historyConcurrency = 4;

/** Where the fleet and the probes send (the gateway) or read (the api), and with what key. */
export type Endpoint = { baseUrl: string; headers: Record<string, string> };

export async function remoteWrite(target: Endpoint, body: Buffer): Promise<boolean> {
  const response = await fetch(new URL('/api/v1/write', target.baseUrl), {
    method: 'POST',
    headers: {
      ...target.headers,
      'content-type': 'application/x-protobuf',
      'content-encoding': 'snappy',
      'x-prometheus-remote-write-version': '0.1.0',
    },
    body,
  });
  await response.body?.cancel();
  return response.ok;
}

/** Every host's scrapes of the last `minutes`, `intervalMs` apart, oldest first. */
export async function writeHistory(
  target: Endpoint,
  fleet: PrometheusFleet,
  intervalMs: number,
  minutes: number,
  nowMs: number,
): Promise<void> {
  const scrapes = Math.floor((minutes * 60_000) / intervalMs);
  const bodies = Math.ceil(fleet.hosts / hostsPerBody);
  for (let s = scrapes; s >= 1; s--) {
    const starts = Array.from({ length: bodies }, (_, i) => i);
    const worker = async (): Promise<void> => {
      for (let i = starts.shift(); i !== undefined; i = starts.shift()) {
        const from = i * hostsPerBody;
        // Spread over the interval, as the live scrapes are.
        const timeMs = nowMs - s * intervalMs + Math.floor((i * intervalMs) / bodies);
        if (!(await remoteWrite(target, fleet.body(from, from + hostsPerBody, timeMs))))
          throw new Error('the gateway refused a history body');
      }
    };
    await Promise.all(Array.from({ length: historyConcurrency }, worker));
  }
}

/**
 * Scrapes the fleet every `intervalMs` from now on, its bodies spread over the interval, each
 * stamped a little before it is sent (as a scrape is); `stop` ends it and tells what it sent.
 */
export function startScraping(target: Endpoint, fleet: PrometheusFleet, intervalMs: number) {
  const bodies = Math.ceil(fleet.hosts / hostsPerBody);
  const spacingMs = intervalMs / bodies;
  let stopped = false;
  const sent = { requests: 0, failed: 0, samples: 0, startedMs: performance.now() };
  const running = (async () => {
    const startMs = Date.now();
    for (let k = 0; !stopped; k++) {
      await sleep(Math.max(0, startMs + k * spacingMs - Date.now()));
      const from = (k % bodies) * hostsPerBody;
      const body = fleet.body(from, from + hostsPerBody, Date.now() - (k % 7) * 10);
      const ok = await remoteWrite(target, body).catch(() => false);
      sent.requests++;
      if (ok)
        sent.samples += Math.min(hostsPerBody, fleet.hosts - from) * prometheusFleetMetrics.length;
      else sent.failed++;
    }
  })();
  return {
    /** Counts from now on only. */
    reset() {
      Object.assign(sent, { requests: 0, failed: 0, samples: 0, startedMs: performance.now() });
    },
    async stop() {
      stopped = true;
      await running;
      return { ...sent, seconds: (performance.now() - sent.startedMs) / 1000 };
    },
  };
}
