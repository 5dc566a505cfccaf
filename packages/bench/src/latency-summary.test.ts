import { describe, expect, it } from 'vitest';
import { summarizeLatencies } from './latency-summary.js';

describe('summarizeLatencies', () => {
  it('reports nearest-rank percentiles', () => {
    const latencies = Float64Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(summarizeLatencies(latencies)).toEqual({
      count: 100,
      meanMs: 50.5,
      p50Ms: 50,
      p90Ms: 90,
      p95Ms: 95,
      p99Ms: 99,
      maxMs: 100,
    });
  });

  it('reports zeros when nothing succeeded', () => {
    expect(summarizeLatencies(new Float64Array(0)).p99Ms).toBe(0);
  });
});
