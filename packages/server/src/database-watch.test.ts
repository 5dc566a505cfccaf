import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createDatabaseWatch } from './database-watch.js';

function watched() {
  const seen = { changes: 0, unavailable: 0 };
  const watch = createDatabaseWatch({
    primaryChanged: () => void (seen.changes += 1),
    unavailableFor: (seconds) => void (seen.unavailable += seconds),
  });
  return { watch, seen };
}

describe('createDatabaseWatch', () => {
  it('counts a promotion once, and the time from the first failed probe to the first good one', () => {
    const { watch, seen } = watched();
    watch.succeeded('10.0.0.1:5432', 0);
    watch.succeeded('10.0.0.1:5432', 2_000);
    watch.failed(4_000);
    watch.failed(6_000);
    expect(seen).toEqual({ changes: 0, unavailable: 2 });
    watch.succeeded('10.0.0.2:5432', 9_000);
    watch.succeeded('10.0.0.2:5432', 11_000);
    expect(seen).toEqual({ changes: 1, unavailable: 5 });
  });

  it('counts no change for the first server, nor for a restart of the same one', () => {
    const { watch, seen } = watched();
    watch.failed(0);
    watch.succeeded('db:5432', 1_000);
    watch.failed(2_000);
    watch.succeeded('db:5432', 3_500);
    expect(seen).toEqual({ changes: 0, unavailable: 2.5 });
  });

  it('adds up to the time spent failing, whatever the probes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 10_000 }), fc.boolean()), {
          maxLength: 50,
        }),
        (probes) => {
          const { watch, seen } = watched();
          let timeMs = 0;
          let failingSinceMs: number | undefined;
          let expectedMs = 0;
          let changes = 0;
          let server: string | undefined;
          for (const [ok, gapMs, otherHost] of probes) {
            timeMs += gapMs;
            if (ok) {
              const next = otherHost ? 'b:5432' : 'a:5432';
              if (failingSinceMs !== undefined) expectedMs += timeMs - failingSinceMs;
              failingSinceMs = undefined;
              if (server !== undefined && next !== server) changes += 1;
              server = next;
              watch.succeeded(next, timeMs);
            } else {
              failingSinceMs ??= timeMs;
              watch.failed(timeMs);
            }
          }
          // An outage still going is counted up to its last probe.
          const open = failingSinceMs === undefined ? 0 : timeMs - failingSinceMs;
          expect(seen.unavailable).toBeCloseTo((expectedMs + open) / 1000, 6);
          expect(seen.changes).toBe(changes);
        },
      ),
    );
  });
});
