export type LatencySummary = {
  count: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
};

/** Nearest-rank percentiles of latencies in milliseconds (all zero when there are none). */
export function summarizeLatencies(latenciesMs: Float64Array): LatencySummary {
  const count = latenciesMs.length;
  if (count === 0) return { count, meanMs: 0, p50Ms: 0, p90Ms: 0, p95Ms: 0, p99Ms: 0, maxMs: 0 };
  const sorted = Float64Array.from(latenciesMs).sort();
  const rank = (p: number): number =>
    sorted[Math.min(count - 1, Math.max(0, Math.ceil(p * count) - 1))] ?? 0;
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count,
    meanMs: round(sum / count),
    p50Ms: round(rank(0.5)),
    p90Ms: round(rank(0.9)),
    p95Ms: round(rank(0.95)),
    p99Ms: round(rank(0.99)),
    maxMs: round(sorted[count - 1] ?? 0),
  };
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
