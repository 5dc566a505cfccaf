import type { RemoteWriteSeries } from './remote-write-load.js';
import { encodeRemoteWrite } from './remote-write-load.js';

/**
 * A fleet of hosts as Prometheus scrapes node exporters and remote-writes them: per host
 * `node_load1` (0–4), `node_memory_used_percent` and `node_filesystem_used_percent` (0–100),
 * labelled `instance` (`host-<i>:9100`), `job` `node` and `service` (`svc-<i mod services>`).
 * Values are a deterministic walk of (host, scrape time), so a run can be repeated.
 */
export type PrometheusFleet = {
  hosts: number;
  /** The remote-write body of hosts `[from, to)` scraped at `timeMs`. */
  body(from: number, to: number, timeMs: number): Buffer;
};

export const prometheusFleetMetrics = [
  'node_load1',
  'node_memory_used_percent',
  'node_filesystem_used_percent',
] as const;

/** A value in `[0, 1)` of (host, metric, scrape), stable across calls. */
function walk(host: number, metric: number, timeMs: number): number {
  let x = (host * 2654435761 + metric * 40503 + Math.floor(timeMs / 1000) * 97) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x45d9f3b) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x45d9f3b) >>> 0;
  return ((x ^ (x >>> 16)) >>> 0) / 4294967296;
}

export function createPrometheusFleet(options: {
  hosts: number;
  services: number;
}): PrometheusFleet {
  return {
    hosts: options.hosts,
    body(from, to, timeMs) {
      const series: RemoteWriteSeries[] = [];
      for (let host = from; host < Math.min(to, options.hosts); host++) {
        const labels = [
          { name: 'instance', value: `host-${host}:9100` },
          { name: 'job', value: 'node' },
          { name: 'service', value: `svc-${host % options.services}` },
        ];
        prometheusFleetMetrics.forEach((name, metric) => {
          const scale = name === 'node_load1' ? 4 : 100;
          series.push({
            labels: [{ name: '__name__', value: name }, ...labels],
            samples: [
              {
                value: Math.round(walk(host, metric, timeMs) * scale * 100) / 100,
                timestamp: timeMs,
              },
            ],
          });
        });
      }
      return encodeRemoteWrite(series);
    },
  };
}
