import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DedupInput, StoredPoints } from './sample-dedup.js';
import { planDedup, resolveChecks, sameValue } from './sample-dedup.js';
import { seriesOrder } from './series-order.js';

type Point = { seriesId: number; timeMs: number; value: number };

/** The contract itself, one point at a time in arrival order: the first value stands. */
function model(stored: readonly Point[], batch: readonly Point[]) {
  const standing = new Map<string, number>();
  for (const point of stored) standing.set(`${point.seriesId}:${point.timeMs}`, point.value);
  const kept: Point[] = [];
  let sameValues = 0;
  let differentValues = 0;
  for (const point of batch) {
    const key = `${point.seriesId}:${point.timeMs}`;
    const value = standing.get(key);
    if (value === undefined) {
      standing.set(key, point.value);
      kept.push(point);
    } else if (sameValue(value, point.value)) sameValues++;
    else differentValues++;
  }
  return { kept, sameValues, differentValues };
}

/** Values as the batch splits them: NaN and ±Inf go to the unaggregated rows. */
const aggregatable = (value: number): boolean => Number.isFinite(value);

function dedupBatch(stored: readonly Point[], batch: readonly Point[], slackMs: number) {
  const samples = { seriesIds: [] as number[], timesMs: [] as number[], values: [] as number[] };
  const unaggregated = {
    seriesIds: [] as number[],
    timesMs: [] as number[],
    values: [] as number[],
    samplesBefore: [] as number[],
  };
  const arrival: { table: 'samples' | 'unaggregated'; row: number }[] = [];
  for (const point of batch) {
    if (aggregatable(point.value)) {
      arrival.push({ table: 'samples', row: samples.seriesIds.length });
      samples.seriesIds.push(point.seriesId);
      samples.timesMs.push(point.timeMs);
      samples.values.push(point.value);
    } else {
      arrival.push({ table: 'unaggregated', row: unaggregated.seriesIds.length });
      unaggregated.samplesBefore.push(samples.seriesIds.length);
      unaggregated.seriesIds.push(point.seriesId);
      unaggregated.timesMs.push(point.timeMs);
      unaggregated.values.push(point.value);
    }
  }
  const newestStored = new Map<number, number>();
  for (const point of stored) {
    newestStored.set(
      point.seriesId,
      Math.max(newestStored.get(point.seriesId) ?? -Infinity, point.timeMs),
    );
  }
  const input: DedupInput = {
    samples,
    order: seriesOrder(samples.seriesIds, samples.timesMs),
    unaggregated,
    // Any bound at or after the newest stored point will do: some are loose.
    storedNewestBound: (id) => (newestStored.get(id) ?? -Infinity) + slackMs,
  };
  const plan = planDedup(input);
  const lookup = new Map<number, Map<number, number>>();
  for (const point of stored) {
    let byTime = lookup.get(point.seriesId);
    if (byTime === undefined) lookup.set(point.seriesId, (byTime = new Map<number, number>()));
    byTime.set(point.timeMs, point.value);
  }
  // A check reads only the points it asks for.
  const asked: StoredPoints = new Map(
    plan.checks.map((check) => [
      check.seriesId,
      new Map(
        plan.checks
          .filter((other) => other.seriesId === check.seriesId)
          .flatMap((other) => {
            const value = lookup.get(other.seriesId)?.get(other.timeMs);
            return value === undefined ? [] : [[other.timeMs, value] as const];
          }),
      ),
    ]),
  );
  resolveChecks(plan, asked);
  const kept = arrival.flatMap(({ table, row }) => {
    const keep = table === 'samples' ? plan.keepSamples[row] : plan.keepUnaggregated[row];
    const columns = table === 'samples' ? samples : unaggregated;
    return keep === 1
      ? [
          {
            seriesId: columns.seriesIds[row] as number,
            timeMs: columns.timesMs[row] as number,
            value: columns.values[row] as number,
          },
        ]
      : [];
  });
  return { plan, kept };
}

const valueArbitrary = fc.oneof(
  fc.constantFrom(0, -0, 1, 1.5, Number.NaN, Infinity, -Infinity),
  fc.integer({ min: -3, max: 3 }),
);
const pointArbitrary = fc.record({
  seriesId: fc.integer({ min: 1, max: 4 }),
  timeMs: fc.integer({ min: 0, max: 6 }).map((t) => 1_700_000_000_000 + t * 15_000),
  value: valueArbitrary,
});

describe('planDedup and resolveChecks', () => {
  it('keep the first value of every (series, time) and count the rest, as the contract does', () => {
    fc.assert(
      fc.property(
        fc.array(pointArbitrary, { maxLength: 12 }),
        fc.array(pointArbitrary, { maxLength: 40 }),
        fc.constantFrom(0, 1, 15_000, 1e9),
        (storedPoints, batch, slackMs) => {
          // What is stored holds each (series, time) once.
          const stored = model([], storedPoints).kept;
          const expected = model(stored, batch);
          const { plan, kept } = dedupBatch(stored, batch, slackMs);
          expect(kept).toEqual(expected.kept);
          expect(plan.sameValues).toBe(expected.sameValues);
          expect(plan.differentValues).toBe(expected.differentValues);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('bounds each series of the batch at or after its newest point, stored or new', () => {
    fc.assert(
      fc.property(
        fc.array(pointArbitrary, { maxLength: 12 }),
        fc.array(pointArbitrary, { minLength: 1, maxLength: 40 }),
        (storedPoints, batch) => {
          const stored = model([], storedPoints).kept;
          const { plan } = dedupBatch(stored, batch, 0);
          for (const point of [...stored, ...batch]) {
            if (!batch.some((each) => each.seriesId === point.seriesId)) continue;
            const bounds = plan.newest.seriesIds.flatMap((id, i) =>
              id === point.seriesId ? [plan.newest.timesMs[i] as number] : [],
            );
            expect(Math.max(...bounds)).toBeGreaterThanOrEqual(point.timeMs);
          }
        },
      ),
    );
  });

  it('checks nothing stored for points after their series’ bound', () => {
    const { plan, kept } = dedupBatch(
      [{ seriesId: 1, timeMs: 10, value: 1 }],
      [
        { seriesId: 1, timeMs: 20, value: 2 },
        { seriesId: 2, timeMs: 5, value: 3 },
      ],
      0,
    );
    expect(plan.checks).toEqual([]);
    expect(kept).toHaveLength(2);
  });

  it('drops a different value at a stored time and counts it', () => {
    const { plan, kept } = dedupBatch(
      [{ seriesId: 1, timeMs: 10, value: 1 }],
      [
        { seriesId: 1, timeMs: 10, value: 2 },
        { seriesId: 1, timeMs: 10, value: 1 },
        { seriesId: 1, timeMs: 11, value: Number.NaN },
        { seriesId: 1, timeMs: 11, value: Number.NaN },
        { seriesId: 1, timeMs: 11, value: 0 },
      ],
      0,
    );
    expect(kept).toEqual([{ seriesId: 1, timeMs: 11, value: Number.NaN }]);
    expect(plan.differentValues).toBe(2);
    expect(plan.sameValues).toBe(2);
  });
});
