import { summarizeLatencies } from './latency-summary.js';

/** One probe: a sample sent (its 200 at `sentAtMs`), and how long until it was visible. */
export type ProbeLatency = {
  partition: number;
  /** When the sample was acknowledged (ms on the run's monotonic clock). */
  sentAtMs: number;
  /** Acknowledged → visible; undefined: not visible before the probe's timeout. */
  latencyMs: number | undefined;
};

export type StallSummary = {
  /** p99 of the probes answered in the baseline window before the event. */
  baselineP99Ms: number;
  /** The target: under this again, max(1 s, twice the baseline p99) as issue 28 states it. */
  thresholdMs: number;
  /** Probes over the threshold (or timed out) that were pending at or sent after the event. */
  probesOver: number;
  /** The worst latency among those probes (a timeout counts as the probe timeout). */
  worstMs: number;
  /**
   * From the event until the last probe over the threshold became visible: samples acknowledged
   * from then on were under it again (a partition's next probe starts once its last one was
   * seen). 0 when no probe went over; undefined when that moment lies past the window.
   */
  stallMs: number | undefined;
  /** The partitions whose probes went over the threshold. */
  partitionsOver: number[];
  /** The first probes over the threshold: sent this long after the event, and their latency. */
  over: { partition: number; sentAfterMs: number; latencyMs: number | undefined }[];
};

/**
 * How long the probes stayed over the threshold after an event (a kill, a join, a leave).
 * Measured per probe rather than from the first good probe after the event: the partitions the
 * event did not touch keep answering in time meanwhile.
 * Probes that were still waiting at the event count as well as those sent after it, up to
 * `windowEndMs`; the baseline is the probes sent in [`baselineFromMs`, event) and answered
 * before the event. A timed-out probe counts as `timeoutMs`.
 */
export function summarizeStall(
  probes: readonly ProbeLatency[],
  window: { baselineFromMs: number; eventAtMs: number; windowEndMs: number; timeoutMs: number },
): StallSummary {
  const { baselineFromMs, eventAtMs, windowEndMs, timeoutMs } = window;
  const latency = (probe: ProbeLatency): number => probe.latencyMs ?? timeoutMs;
  const baseline = probes.filter(
    (p) =>
      p.sentAtMs >= baselineFromMs &&
      p.sentAtMs < eventAtMs &&
      p.latencyMs !== undefined &&
      p.sentAtMs + p.latencyMs < eventAtMs,
  );
  const baselineP99Ms = summarizeLatencies(
    Float64Array.from(baseline.map((p) => p.latencyMs ?? 0)),
  ).p99Ms;
  const thresholdMs = Math.max(1_000, 2 * baselineP99Ms);
  const affected = probes
    .filter((p) => p.sentAtMs < windowEndMs && p.sentAtMs + latency(p) >= eventAtMs)
    .sort((a, b) => a.sentAtMs - b.sentAtMs);
  const over = affected.filter((p) => latency(p) > thresholdMs);
  const lastVisibleAtMs = Math.max(eventAtMs, ...over.map((p) => p.sentAtMs + latency(p)));
  const stallMs =
    over.length === 0
      ? 0
      : lastVisibleAtMs > windowEndMs || over.some((p) => p.latencyMs === undefined)
        ? undefined
        : lastVisibleAtMs - eventAtMs;
  return {
    baselineP99Ms,
    thresholdMs,
    probesOver: over.length,
    worstMs: Math.max(0, ...affected.map(latency)),
    stallMs,
    partitionsOver: [...new Set(over.map((p) => p.partition))].sort((a, b) => a - b),
    over: over.slice(0, 20).map((p) => ({
      partition: p.partition,
      sentAfterMs: Math.round(p.sentAtMs - eventAtMs),
      latencyMs: p.latencyMs === undefined ? undefined : Math.round(p.latencyMs),
    })),
  };
}

/**
 * From `eventAtMs` until the first probe acknowledged at or after it was visible: when the
 * pipeline served a sample accepted after the event again. Undefined when none was.
 */
export function firstVisibleAfter(
  probes: readonly ProbeLatency[],
  eventAtMs: number,
): number | undefined {
  let first: number | undefined;
  for (const probe of probes) {
    if (probe.sentAtMs < eventAtMs || probe.latencyMs === undefined) continue;
    const visibleAfterMs = probe.sentAtMs + probe.latencyMs - eventAtMs;
    if (first === undefined || visibleAfterMs < first) first = visibleAfterMs;
  }
  return first;
}
