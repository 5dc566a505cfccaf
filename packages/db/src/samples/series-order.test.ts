import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seriesOrder } from './series-order.js';

type Row = { timeMs: number; seriesId: number; value: number };

/** The rows in the order `seriesOrder` gives for them. */
function inSeriesOrder(rows: readonly Row[]): Row[] {
  const order = seriesOrder(
    rows.map((row) => row.seriesId),
    rows.map((row) => row.timeMs),
  );
  expect(order).toHaveLength(rows.length);
  return Array.from(order, (at) => rows[at] as Row);
}

/** What the order must be: by series, then time, rows with equal keys as they came. */
function expectedOrder(rows: readonly Row[]): Row[] {
  return rows
    .map((row, at) => ({ row, at }))
    .sort((a, b) => a.row.seriesId - b.row.seriesId || a.row.timeMs - b.row.timeMs || a.at - b.at)
    .map(({ row }) => row);
}

const row = (seriesIds: fc.Arbitrary<number>): fc.Arbitrary<Row> =>
  fc.record({
    timeMs: fc.integer({ min: 0, max: 2 ** 45 }),
    seriesId: seriesIds,
    value: fc.double({ noNaN: true }),
  });

describe('seriesOrder', () => {
  it('orders rows by series, then time, keeping rows with equal keys as they came', () => {
    // Few series and times, so that series repeat, times tie and arrive out of order.
    const few = fc.record({
      timeMs: fc.integer({ min: 0, max: 5 }),
      seriesId: fc.integer({ min: 1, max: 8 }),
      value: fc.double({ noNaN: true }),
    });
    // Ids up to 2^32 - 1 apart: every pass of the radix sort has digits to sort by.
    const base = 2 ** 40;
    const spread = row(fc.integer({ min: base, max: base + 2 ** 32 - 1 }));
    // As a batch usually is: each series' rows in time order (arrival order), series repeating.
    const arrivedInOrder = fc
      .array(fc.integer({ min: 1, max: 3_000 }), { minLength: 65, maxLength: 400 })
      .map((ids) => ids.map((seriesId, i) => ({ timeMs: 1_000 + i, seriesId, value: i })));
    // Small batches (an insertion sort) and large ones (the radix sort, or the comparing one).
    const batchOf = (rows: fc.Arbitrary<Row>): fc.Arbitrary<Row[]> =>
      fc.oneof(fc.array(rows), fc.array(rows, { minLength: 65, maxLength: 400 }));
    fc.assert(
      fc.property(
        fc.oneof(batchOf(few), batchOf(spread), batchOf(fc.oneof(few, spread)), arrivedInOrder),
        (rows) => {
          expect(inSeriesOrder(rows)).toEqual(expectedOrder(rows));
        },
      ),
    );
  });

  it('orders ids 2^32 or more apart, up to the largest safe integer', () => {
    // High and low 32 bits drawn apart, so that an order by the low ones alone would be wrong.
    const large = fc.oneof(
      fc
        .tuple(fc.integer({ min: 1, max: 2 ** 21 - 1 }), fc.integer({ min: 0, max: 2 ** 32 - 1 }))
        .map(([high, low]) => high * 2 ** 32 + low),
      fc.constant(Number.MAX_SAFE_INTEGER),
    );
    const id = fc.oneof(large, fc.integer({ min: 1, max: 3 }));
    // Times in arrival order too, so that no series' times ask for the comparing sort anyway.
    const inArrivalOrder = (ids: number[]): Row[] =>
      ids.map((seriesId, i) => ({ timeMs: i, seriesId, value: i }));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(row(id), { minLength: 2 }),
          fc.array(row(id), { minLength: 65, maxLength: 400 }),
          fc.array(id, { minLength: 65, maxLength: 400 }).map(inArrivalOrder),
        ),
        (batch) => {
          expect(inSeriesOrder(batch)).toEqual(expectedOrder(batch));
        },
      ),
    );
  });

  it('keeps a batch where each series arrived in time order in arrival order within a series', () => {
    const rows: Row[] = [
      { timeMs: 10, seriesId: 7, value: 1 },
      { timeMs: 10, seriesId: 3, value: 2 },
      { timeMs: 20, seriesId: 7, value: 3 },
      { timeMs: 20, seriesId: 3, value: 4 },
      { timeMs: 20, seriesId: 3, value: 5 },
    ];
    expect(inSeriesOrder(rows).map((each) => each.value)).toEqual([2, 4, 5, 1, 3]);
  });

  it('orders an empty or one-row batch, and one whose rows all share a series', () => {
    expect(inSeriesOrder([])).toEqual([]);
    const one = { timeMs: 1, seriesId: 2, value: 3 };
    expect(inSeriesOrder([one])).toEqual([one]);
    const same = [3, 1, 2].map((timeMs) => ({ timeMs, seriesId: 9, value: timeMs }));
    expect(inSeriesOrder(same).map((each) => each.timeMs)).toEqual([1, 2, 3]);
  });
});
