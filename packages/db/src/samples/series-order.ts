/** Samples as parallel arrays, one entry per metric value. */
export type SampleColumns = { timesMs: number[]; seriesIds: number[]; values: number[] };

/** Keys are seriesId × rows + row: exact while that stays below 2^53. */
const maxSafeKey = Number.MAX_SAFE_INTEGER;

/**
 * The rows in (series id, time) order, ties in their given order. Samples go into a B-tree on
 * (series_id, time): in a batch's arrival order each row lands on another leaf, far from the
 * last one, while in key order a series' rows go in one after another and the leaves are walked
 * left to right. Measured on PostgreSQL 15 with an index larger than shared_buffers: 600,000
 * rows in 4.6 s in arrival order, 1.0–1.1 s sorted (docs/benchmarks.md).
 *
 * Rows of one series usually arrive in time order (a host's samples keep their order on the
 * bus), so one native sort of a numeric key (series, then arrival) puts them in key order; a
 * batch where they did not, or whose ids are too large for the key, takes a comparing sort.
 */
export function inSeriesOrder(samples: SampleColumns): SampleColumns {
  const { timesMs, seriesIds, values } = samples;
  const rows = seriesIds.length;
  if (rows < 2) return samples;
  const order = arrivalOrderBySeries(seriesIds) ?? comparingOrder(seriesIds, timesMs);
  if (!inTimeOrderWithinSeries(order, seriesIds, timesMs)) {
    order.set(comparingOrder(seriesIds, timesMs));
  }
  const sorted: SampleColumns = {
    timesMs: new Array<number>(rows),
    seriesIds: new Array<number>(rows),
    values: new Array<number>(rows),
  };
  for (let i = 0; i < rows; i++) {
    const row = order[i] ?? 0;
    sorted.timesMs[i] = timesMs[row] ?? 0;
    sorted.seriesIds[i] = seriesIds[row] ?? 0;
    sorted.values[i] = values[row] ?? 0;
  }
  return sorted;
}

/** Row numbers by series id, then position; undefined when a key would not be exact. */
function arrivalOrderBySeries(seriesIds: readonly number[]): Uint32Array | undefined {
  const rows = seriesIds.length;
  const keys = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    const id = seriesIds[i] ?? 0;
    if (id < 0 || id > (maxSafeKey - rows) / rows) return undefined;
    keys[i] = id * rows + i;
  }
  keys.sort();
  const order = new Uint32Array(rows);
  for (let i = 0; i < rows; i++) order[i] = (keys[i] ?? 0) % rows;
  return order;
}

function comparingOrder(seriesIds: readonly number[], timesMs: readonly number[]): Uint32Array {
  const order = Uint32Array.from({ length: seriesIds.length }, (_, i) => i);
  return order.sort(
    (a, b) =>
      (seriesIds[a] ?? 0) - (seriesIds[b] ?? 0) || (timesMs[a] ?? 0) - (timesMs[b] ?? 0) || a - b,
  );
}

function inTimeOrderWithinSeries(
  order: Uint32Array,
  seriesIds: readonly number[],
  timesMs: readonly number[],
): boolean {
  for (let i = 1; i < order.length; i++) {
    const previous = order[i - 1] ?? 0;
    const row = order[i] ?? 0;
    if (seriesIds[previous] === seriesIds[row] && (timesMs[previous] ?? 0) > (timesMs[row] ?? 0)) {
      return false;
    }
  }
  return true;
}
