import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '@monitor/db';
import { ingestPath } from '@monitor/schemas';
import { logProgress } from './harness/progress.js';
import type { PartitionProbeResults } from './failover-probe.js';
import { probePartition } from './failover-probe.js';
import type { StoredVia } from './failover-probe-http.js';
import { createProbeDeps } from './failover-probe-http.js';
import type { FailoverBenchReport } from './failover-report.js';
import type { ProbeLatency, StallSummary } from './failover-stall.js';
import { summarizeStall } from './failover-stall.js';
import type { FailoverOptions } from './failover-target.js';
import { createFleet } from './fleet.js';
import { summarizeLatencies } from './latency-summary.js';
import type { PacedLoadResult } from './paced-load.js';
import { runPacedLoad } from './paced-load.js';
import { waitForLanded } from './wait-for-landed.js';

/**
 * What both failover scenarios run their events under: the fleet's steady paced load and one
 * probe per partition, from the warm-up until stopped, and the checks after it.
 */

const probeTimeoutMs = 60_000;
const warmUpMs = 10_000;
/** Requests in flight at most: the paced load's slots. */
const slots = 32;

export type ProbedLoad = {
  /** `performance.now()` when the load started. */
  startedAtMs: number;
  /** Event time of each probe's first step, a second per step from there. */
  startEventTimeMs: number;
  /** Returns after the warm-up and the baseline, when the first event may happen. */
  waitOutBaseline(): Promise<void>;
  /** The stall of `probes` after an event at `eventAtMs`, counting probes until `windowEndMs`. */
  stallAfter(probes: ProbeLatency[], eventAtMs: number, windowEndMs: number): StallSummary;
  /** Stops the load and the probes once their requests in flight are answered. */
  stop(): Promise<ProbedLoadResults>;
};

type ProbedLoadResults = {
  load: PacedLoadResult & { samplesPerSecond: number };
  probes: PartitionProbeResults[];
  alertProbes: ProbeLatency[];
  storedProbes: ProbeLatency[];
  /** Samples the gateway acknowledged: the load's and the probes' (two metrics a step). */
  acknowledged: number;
  /** Every probe's latencies, for the report. */
  summary: NonNullable<FailoverBenchReport['probes']>;
};

/**
 * Starts the fleet's load at `options.requestsPerSecond` through `gatewayBaseUrl`, and a probe
 * per host of `hosts` (one a partition), each with its rule of `ruleIds`, read through the API.
 */
export function startProbedLoad(
  options: FailoverOptions,
  endpoints: { gatewayBaseUrl: string; apiBaseUrl: string; headers: Record<string, string> },
  probes: {
    hosts: readonly string[];
    ruleIds: readonly string[];
    /** How a probe reads what was stored (createProbeDeps); the services list by default. */
    storedVia?: StoredVia;
  },
): ProbedLoad {
  const { gatewayBaseUrl, apiBaseUrl, headers } = endpoints;
  const fleet = createFleet({ hostCount: options.hosts, baseTimeMs: Date.now() - 5 * 60_000 });
  let stopping = false;
  const shouldStop = (): boolean => stopping;
  const startedAtMs = performance.now();
  const load = runPacedLoad({
    url: new URL(ingestPath, gatewayBaseUrl).toString(),
    headers,
    bodies: fleet.createBodySource({ payloadsPerRequest: options.payloadsPerRequest, slots }),
    slots,
    requestsPerSecond: options.requestsPerSecond,
    shouldStop,
  });
  const probeDeps = createProbeDeps(
    gatewayBaseUrl,
    apiBaseUrl,
    headers,
    probes.storedVia ?? 'services',
  );
  // Event time from an hour back, a second per step: hours of probing stay in the past.
  const startEventTimeMs = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
  const probing = Promise.all(
    probes.hosts.map((host, partition) =>
      probePartition(
        {
          partition,
          host,
          ruleId: probes.ruleIds[partition] ?? '',
          startEventTimeMs,
          stepIntervalMs: options.stepIntervalMs,
          pollIntervalMs: options.pollIntervalMs,
          timeoutMs: probeTimeoutMs,
        },
        probeDeps,
        shouldStop,
      ),
    ),
  );
  return {
    startedAtMs,
    startEventTimeMs,
    async waitOutBaseline() {
      logProgress(`warm-up ${warmUpMs / 1000} s, then a baseline of ${options.baselineSeconds} s`);
      await sleep(warmUpMs + options.baselineSeconds * 1000);
    },
    stallAfter: (list, eventAtMs, windowEndMs) =>
      summarizeStall(list, {
        baselineFromMs: Math.max(startedAtMs + warmUpMs, eventAtMs - 15_000),
        eventAtMs,
        windowEndMs,
        timeoutMs: probeTimeoutMs,
      }),
    async stop() {
      stopping = true;
      const [loadResult, probeResults] = await Promise.all([load, probing]);
      const seconds = (performance.now() - startedAtMs) / 1000;
      const alertProbes = probeResults.flatMap((r) => r.alert);
      const storedProbes = probeResults.flatMap((r) => r.stored);
      const latencies = (list: ProbeLatency[]): Float64Array =>
        Float64Array.from(list.flatMap((p) => (p.latencyMs === undefined ? [] : [p.latencyMs])));
      return {
        load: { ...loadResult, samplesPerSecond: loadResult.samplesAccepted / seconds },
        probes: probeResults,
        alertProbes,
        storedProbes,
        acknowledged:
          loadResult.samplesAccepted + probeResults.reduce((n, r) => n + 2 * r.stored.length, 0),
        summary: {
          alert: summarizeLatencies(latencies(alertProbes)),
          stored: summarizeLatencies(latencies(storedProbes)),
          timedOut: [...alertProbes, ...storedProbes].filter((p) => p.latencyMs === undefined)
            .length,
        },
      };
    },
  };
}

/** Waits until the writers stored the `acknowledged` samples, or two minutes passed. */
export function waitForAcknowledged(
  db: Database,
  acknowledged: number,
): ReturnType<typeof waitForLanded> {
  logProgress('waiting for the writers to store every acknowledged sample');
  return waitForLanded(db, {
    expected: acknowledged,
    timeoutMs: 120_000,
    pollIntervalMs: 500,
    settleMs: 2_000,
  });
}
