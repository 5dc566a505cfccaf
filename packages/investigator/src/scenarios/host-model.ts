import type { Container, IngestPayload, Process } from '@monitor/schemas';
import type { SeededRandom } from '@monitor/testkit';

const mib = 1024 * 1024;
const gib = 1024 * mib;
/** Memory of every simulated host. */
const hostMemoryBytes = 16 * gib;
/** What the kernel, caches and unlisted processes hold. */
const baseMemoryBytes = 1.5 * gib;

/** One sampling moment of a host, before the metrics are derived from it. */
export type HostState = {
  processes: Process[];
  containers: Container[];
  /** Added to the derived metrics (e.g. CPU no process accounts for). */
  metricAdd: Record<string, number>;
  /** Replaces derived metrics or adds new ones (disk, error rate…). */
  metricSet: Record<string, number>;
};

export type HostSpec = {
  host: string;
  tags: Record<string, string>;
  /** Changes the state `agoMinutes` before the end (0 is the last sample). */
  shape?: (state: HostState, agoMinutes: number, random: SeededRandom) => void;
  /** The host's first sample is this many minutes before the end (default: the plan's start). */
  firstSeenMinutesAgo?: number;
  /** false: the agent reports metrics only, no processes or containers (default true). */
  reportsSnapshots?: boolean;
  /** Processes and containers are reported only this many minutes before the end. */
  snapshotsSinceMinutesAgo?: number;
};

export type SamplingPlan = { startMs: number; endMs: number; stepMs: number };

function baseState(random: SeededRandom): HostState {
  const cpu = (mean: number, stddev: number) => Math.max(0, random.gaussian(mean, stddev));
  const rss = (meanMib: number) => Math.round(random.gaussian(meanMib, meanMib * 0.02) * mib);
  const nginxCpu = cpu(3, 0.6);
  const redisCpu = cpu(1.2, 0.3);
  return {
    processes: [
      { name: 'systemd', pid: 1, cpu_percent: cpu(0.3, 0.1), memory_rss: rss(12) },
      { name: 'sshd', pid: 812, cpu_percent: cpu(0.1, 0.05), memory_rss: rss(8) },
      { name: 'dockerd', pid: 1024, cpu_percent: cpu(1.5, 0.3), memory_rss: rss(90) },
      { name: 'node_exporter', pid: 1301, cpu_percent: cpu(0.6, 0.2), memory_rss: rss(22) },
      { name: 'nginx', pid: 2040, cpu_percent: nginxCpu, memory_rss: rss(48) },
      { name: 'redis-server', pid: 2101, cpu_percent: redisCpu, memory_rss: rss(64) },
    ],
    containers: [
      {
        name: 'web',
        image: 'shop/web:1.4.2',
        status: 'running',
        cpu_percent: nginxCpu,
        memory_usage: rss(180),
      },
      {
        name: 'redis',
        image: 'redis:7.2',
        status: 'running',
        cpu_percent: redisCpu,
        memory_usage: rss(96),
      },
    ],
    metricAdd: {},
    metricSet: {},
  };
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/**
 * A host's payloads over the plan: a base load of a few processes and two containers, changed by
 * the spec's `shape`, with host metrics derived from what the processes use (so they agree the
 * way a real host's do) plus noise.
 */
export function hostPayloads(
  spec: HostSpec,
  plan: SamplingPlan,
  random: SeededRandom,
): IngestPayload[] {
  const payloads: IngestPayload[] = [];
  const firstMs =
    spec.firstSeenMinutesAgo === undefined
      ? plan.startMs
      : Math.max(plan.startMs, plan.endMs - spec.firstSeenMinutesAgo * 60_000);
  for (let timeMs = firstMs; timeMs <= plan.endMs; timeMs += plan.stepMs) {
    const state = baseState(random);
    spec.shape?.(state, Math.round((plan.endMs - timeMs) / 60_000), random);
    const processCpu = state.processes.reduce((sum, p) => sum + (p.cpu_percent ?? 0), 0);
    const processRss = state.processes.reduce((sum, p) => sum + (p.memory_rss ?? 0), 0);
    const cpuPercent = Math.min(100, Math.max(0, 4 + processCpu + random.gaussian(0, 1.2)));
    const derived: Record<string, number> = {
      cpu_percent: cpuPercent,
      memory_percent:
        ((baseMemoryBytes + processRss) / hostMemoryBytes) * 100 + random.gaussian(0, 0.2),
      disk_used_percent: 55 + random.gaussian(0, 0.05),
      load_1m: Math.max(0, (cpuPercent / 100) * 4 + random.gaussian(0, 0.1)),
      net_rx_kbps: Math.max(0, 800 + random.gaussian(0, 40)),
      error_rate: Math.max(0, 0.3 + random.gaussian(0, 0.08)),
    };
    for (const [metric, add] of Object.entries(state.metricAdd)) {
      derived[metric] = (derived[metric] ?? 0) + add;
    }
    Object.assign(derived, state.metricSet);
    const metrics: Record<string, number> = {};
    for (const [metric, value] of Object.entries(derived)) {
      metrics[metric] = round3(
        Math.min(metric.endsWith('_percent') ? 100 : Infinity, Math.max(0, value)),
      );
    }
    const payload: IngestPayload = {
      host: spec.host,
      timestamp: new Date(timeMs).toISOString(),
      metrics,
      tags: spec.tags,
      docker_containers: state.containers.map((c) => ({
        ...c,
        ...(c.cpu_percent === undefined ? {} : { cpu_percent: round3(Math.max(0, c.cpu_percent)) }),
        ...(c.memory_usage === undefined
          ? {}
          : { memory_usage: Math.max(0, Math.round(c.memory_usage)) }),
      })),
      processes: state.processes.map((p) => ({
        ...p,
        ...(p.cpu_percent === undefined ? {} : { cpu_percent: round3(Math.max(0, p.cpu_percent)) }),
        ...(p.memory_rss === undefined
          ? {}
          : { memory_rss: Math.max(0, Math.round(p.memory_rss)) }),
      })),
    };
    const ago = Math.round((plan.endMs - timeMs) / 60_000);
    if (
      spec.reportsSnapshots === false ||
      (spec.snapshotsSinceMinutesAgo !== undefined && ago > spec.snapshotsSinceMinutesAgo)
    ) {
      delete payload.docker_containers;
      delete payload.processes;
    }
    payloads.push(payload);
  }
  return payloads;
}

/** Payloads of several hosts merged in time order (host name breaks ties). */
export function mergePayloads(...hosts: IngestPayload[][]): IngestPayload[] {
  return hosts
    .flat()
    .sort(
      (a, b) =>
        Date.parse(a.timestamp ?? '') - Date.parse(b.timestamp ?? '') ||
        a.host.localeCompare(b.host),
    );
}

export const bytes = { mib, gib };
