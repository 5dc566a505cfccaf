import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ProbeLatency } from './failover-stall.js';
import { firstVisibleAfter, summarizeStall } from './failover-stall.js';

/** A probe per partition every second from `fromMs` to `toMs`, with the latency `at` gives. */
function probes(
  fromMs: number,
  toMs: number,
  at: (sentAtMs: number, partition: number) => number | undefined,
): ProbeLatency[] {
  const all: ProbeLatency[] = [];
  for (let t = fromMs; t < toMs; t += 1_000) {
    for (let partition = 0; partition < 2; partition++)
      all.push({ partition, sentAtMs: t + partition * 10, latencyMs: at(t, partition) });
  }
  return all;
}

const window = { baselineFromMs: 0, eventAtMs: 20_000, windowEndMs: 40_000, timeoutMs: 30_000 };

describe('summarizeStall', () => {
  it('reports no stall when every probe stays under the threshold', () => {
    const summary = summarizeStall(
      probes(0, 40_000, () => 150),
      window,
    );
    expect(summary).toMatchObject({
      baselineP99Ms: 150,
      thresholdMs: 1_000,
      probesOver: 0,
      stallMs: 0,
      partitionsOver: [],
    });
  });

  it('measures from the event until the last probe over the threshold became visible', () => {
    // Partition 1 stalls: samples sent from 19.5 s to 26 s wait until 26.2 s.
    const summary = summarizeStall(
      probes(0, 40_000, (t, partition) =>
        partition === 1 && t >= 19_000 && t < 26_000 ? 26_200 - t : 200,
      ),
      window,
    );
    expect(summary.partitionsOver).toEqual([1]);
    // The probe sent at 19 s was still waiting at the event: it counts.
    expect(summary.worstMs).toBe(7_200);
    // The probe sent at 25.01 s was seen 1.2 s later, though partition 0 never waited.
    expect(summary.stallMs).toBe(6_210);
    expect(summary.probesOver).toBe(7);
  });

  it('takes twice the baseline p99 as the threshold when that is above one second', () => {
    const summary = summarizeStall(
      probes(0, 40_000, (t) => (t < 20_000 ? 800 : 1_500)),
      window,
    );
    expect(summary.thresholdMs).toBe(1_600);
    expect(summary.probesOver).toBe(0);
  });

  it('counts a timed-out probe at the timeout and has no end when the window ends over it', () => {
    const summary = summarizeStall(
      probes(0, 40_000, (t) => (t >= 30_000 ? undefined : 100)),
      window,
    );
    expect(summary.worstMs).toBe(30_000);
    expect(summary.stallMs).toBeUndefined();
  });
});

describe('firstVisibleAfter', () => {
  it('ignores probes acknowledged before the event, however late they became visible', () => {
    const all = [
      { partition: 0, sentAtMs: 19_900, latencyMs: 12_000 },
      { partition: 1, sentAtMs: 20_500, latencyMs: 13_000 },
      { partition: 0, sentAtMs: 21_000, latencyMs: 12_000 },
      { partition: 1, sentAtMs: 25_000, latencyMs: undefined },
    ];
    expect(firstVisibleAfter(all, 20_000)).toBe(13_000);
  });

  it('is undefined when no probe acknowledged after the event was seen', () => {
    const all = [
      { partition: 0, sentAtMs: 10_000, latencyMs: 100 },
      { partition: 0, sentAtMs: 21_000, latencyMs: undefined },
    ];
    expect(firstVisibleAfter(all, 20_000)).toBeUndefined();
  });

  it('is never earlier than any visible probe sent after the event (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            partition: fc.nat(5),
            sentAtMs: fc.nat(60_000),
            latencyMs: fc.option(fc.nat(30_000), { nil: undefined }),
          }),
        ),
        fc.nat(60_000),
        (all, eventAtMs) => {
          const first = firstVisibleAfter(all, eventAtMs);
          const after = all.filter((p) => p.sentAtMs >= eventAtMs && p.latencyMs !== undefined);
          if (after.length === 0) return first === undefined;
          return (
            first !== undefined &&
            after.every((p) => p.sentAtMs + (p.latencyMs ?? 0) - eventAtMs >= first) &&
            after.some((p) => p.sentAtMs + (p.latencyMs ?? 0) - eventAtMs === first)
          );
        },
      ),
    );
  });
});
