import type { ProbeLatency } from './failover-stall.js';

/** The probe rule's metric and threshold (`greater_than`, duration 0); the step's number goes in `failoverSeqMetric`. */
export const failoverProbeMetric = 'failover_probe';
export const failoverSeqMetric = 'failover_probe_seq';
export const failoverProbeThreshold = 50;
/** The tag a probe host carries (its own name), so its rule and its service are found by it. */
export const failoverProbeTag = 'bench_failover';

/** The fields of an alerts list item the probe reads. */
type ListedAlert = { status: string; fired_at: string };

export type PartitionProbeDeps = {
  /** POSTs one sample of the probe host; resolves on its 200, rejects otherwise. */
  ingest(sample: {
    host: string;
    timestamp: string;
    metrics: Record<string, number>;
    tags: Record<string, string>;
  }): Promise<void>;
  /** GET /api/v1/alerts?rule_id=…&status=all: the rule's newest alerts, newest first. */
  listAlerts(ruleId: string): Promise<ListedAlert[]>;
  /** The host's latest `failoverSeqMetric` as the services API shows it; undefined: not yet. */
  storedSeq(host: string): Promise<number | undefined>;
  /** Milliseconds on a monotonic clock. */
  now(): number;
  sleep(ms: number): Promise<void>;
};

export type PartitionProbeSpec = {
  partition: number;
  host: string;
  ruleId: string;
  /** Event time of the first step; each step is one second of event time later. */
  startEventTimeMs: number;
  /** A step starts this long after the previous one started (or at once if that took longer). */
  stepIntervalMs: number;
  pollIntervalMs: number;
  /** A latency not seen within this long is recorded as undefined (timed out). */
  timeoutMs: number;
};

export type PartitionProbeResults = { alert: ProbeLatency[]; stored: ProbeLatency[] };

/**
 * Probes one partition through its own host until `shouldStop()`: each step sends one sample,
 * alternately breaching (the host's rule fires on it) and clearing (the alert resolves), with the
 * step's number as a second metric; then it polls until the alert change is listed by the alerts
 * API (evaluator → visible) and the number is shown by the services API (writer → queryable).
 * Each step records both latencies from the sample's 200.
 */
export async function probePartition(
  spec: PartitionProbeSpec,
  deps: PartitionProbeDeps,
  shouldStop: () => boolean,
): Promise<PartitionProbeResults> {
  const results: PartitionProbeResults = { alert: [], stored: [] };
  for (let step = 0; !shouldStop(); step++) {
    const stepStartedAt = deps.now();
    const eventTimeMs = spec.startEventTimeMs + step * 1_000;
    const breaching = step % 2 === 0;
    await deps.ingest({
      host: spec.host,
      timestamp: new Date(eventTimeMs).toISOString(),
      metrics: {
        [failoverProbeMetric]: breaching
          ? failoverProbeThreshold + 40
          : failoverProbeThreshold - 40,
        [failoverSeqMetric]: step,
      },
      tags: { [failoverProbeTag]: spec.host },
    });
    const sentAtMs = deps.now();
    const firedAt = breaching ? eventTimeMs : eventTimeMs - 1_000;
    const alertSeen = (alerts: ListedAlert[]): boolean =>
      alerts.some(
        (alert) =>
          Date.parse(alert.fired_at) === firedAt && (breaching || alert.status === 'resolved'),
      );
    const [alertMs, storedMs] = await Promise.all([
      pollUntil(spec, deps, sentAtMs, async () => alertSeen(await deps.listAlerts(spec.ruleId))),
      pollUntil(
        spec,
        deps,
        sentAtMs,
        async () => ((await deps.storedSeq(spec.host)) ?? -1) >= step,
      ),
    ]);
    results.alert.push({ partition: spec.partition, sentAtMs, latencyMs: alertMs });
    results.stored.push({ partition: spec.partition, sentAtMs, latencyMs: storedMs });
    await deps.sleep(Math.max(0, spec.stepIntervalMs - (deps.now() - stepStartedAt)));
  }
  return results;
}

/** Polls `seen` from `sentAtMs` on; the time until it held, or undefined after the timeout. */
async function pollUntil(
  spec: PartitionProbeSpec,
  deps: PartitionProbeDeps,
  sentAtMs: number,
  seen: () => Promise<boolean>,
): Promise<number | undefined> {
  for (;;) {
    const pollStartedAt = deps.now();
    if (await seen()) return deps.now() - sentAtMs;
    if (deps.now() - sentAtMs >= spec.timeoutMs) return undefined;
    await deps.sleep(Math.max(0, spec.pollIntervalMs - (deps.now() - pollStartedAt)));
  }
}
