import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SampleColumns } from './series-order.js';
import { inSeriesOrder } from './series-order.js';

type Row = { timeMs: number; seriesId: number; value: number };

function columns(rows: readonly Row[]): SampleColumns {
  return {
    timesMs: rows.map((row) => row.timeMs),
    seriesIds: rows.map((row) => row.seriesId),
    values: rows.map((row) => row.value),
  };
}

function rowsOf(samples: SampleColumns): Row[] {
  return samples.timesMs.map((timeMs, i) => ({
    timeMs,
    seriesId: samples.seriesIds[i] ?? Number.NaN,
    value: samples.values[i] ?? Number.NaN,
  }));
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

describe('inSeriesOrder', () => {
  it('orders rows by series, then time, keeping rows with equal keys as they came', () => {
    // Few series and times, so that series repeat, times tie and arrive out of order.
    const few = fc.record({
      timeMs: fc.integer({ min: 0, max: 5 }),
      seriesId: fc.integer({ min: 1, max: 8 }),
      value: fc.double({ noNaN: true }),
    });
    fc.assert(
      fc.property(fc.array(fc.oneof(few, row(fc.integer({ min: 1, max: 2 ** 40 })))), (rows) => {
        expect(rowsOf(inSeriesOrder(columns(rows)))).toEqual(expectedOrder(rows));
      }),
    );
  });

  it('orders ids too large for its numeric key, up to the largest safe integer', () => {
    const large = fc.integer({ min: 2 ** 52, max: Number.MAX_SAFE_INTEGER });
    fc.assert(
      fc.property(
        fc.array(row(fc.oneof(large, fc.integer({ min: 1, max: 3 }))), { minLength: 2 }),
        (rows) => {
          expect(rowsOf(inSeriesOrder(columns(rows)))).toEqual(expectedOrder(rows));
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
    expect(rowsOf(inSeriesOrder(columns(rows))).map((each) => each.value)).toEqual([2, 4, 5, 1, 3]);
  });

  it('returns an empty or one-row batch as it is', () => {
    expect(rowsOf(inSeriesOrder(columns([])))).toEqual([]);
    const one = { timeMs: 1, seriesId: 2, value: 3 };
    expect(rowsOf(inSeriesOrder(columns([one])))).toEqual([one]);
  });
});
