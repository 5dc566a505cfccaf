/**
 * Points of one stored series put in ascending time order, in linear time for the orders they
 * come in. A read hands a series' rows over in scan order, which is a few runs each in time
 * order one way or the other: an uncompressed chunk's rows ascending (index order), a compressed
 * chunk's batches in their compression order (descending in chunks compressed by `time desc`),
 * one chunk's rows before or after another's (the server merges chunks by series only). Each
 * descending run is reversed where it lies; runs that then ascend one after the other are the
 * answer as they are, runs that do not overlap are joined by copying each, and only overlapping
 * ones are merged pairwise, so the cost is n × log2(runs) moves at most, where a comparison sort
 * per series took most of a query's time in the api (docs/benchmarks/promql.md, "PromQL").
 *
 * Times are distinct within a stored series (its unique key); at a time held twice the earlier
 * run's point comes first. The arrays given may come back reordered in place.
 */
export function timeOrdered(
  timesMs: Float64Array,
  values: Float64Array,
): { timesMs: Float64Array; values: Float64Array } {
  const n = timesMs.length;
  // Run boundaries: run k is [bounds[k], bounds[k + 1]).
  const bounds: number[] = [0];
  let descending = false;
  for (let i = 1; i < n; i++) {
    const runLength = i - bounds[bounds.length - 1]!;
    const previous = timesMs[i - 1]!;
    const current = timesMs[i]!;
    if (runLength === 1) {
      descending = current < previous;
      continue;
    }
    if (descending ? current < previous : current > previous) continue;
    bounds.push(i);
  }
  bounds.push(n);
  // Each descending run reversed where it lies (a run of 1 is ascending): the runs then all
  // ascend, in the order they came. A compressed chunk's batches come descending, so this is
  // what puts most series in order, without a copy or a merge.
  for (let k = 0; k + 1 < bounds.length; k++) {
    const start = bounds[k]!;
    const end = bounds[k + 1]!;
    if (end - start >= 2 && timesMs[start + 1]! < timesMs[start]!) {
      timesMs.subarray(start, end).reverse();
      values.subarray(start, end).reverse();
    }
  }
  if (bounds.length === 2) return { timesMs, values };
  const blocks = disjointAscendingRuns(timesMs, bounds);
  if (blocks !== null) {
    // Disjoint and already one after the other: batches of one chunk, or chunks in time order.
    if (blocks.every((block, k) => block.start === bounds[k])) return { timesMs, values };
    if (blocks.length === 2) return swapped(timesMs, values, blocks[1]!.end - blocks[1]!.start);
    return joined(timesMs, values, blocks);
  }

  // Bottom-up merge of neighbouring runs, ping-ponging between the given arrays and a new pair.
  let t: Float64Array = timesMs;
  let v: Float64Array = values;
  let runs = bounds;
  let tOut: Float64Array = new Float64Array(n);
  let vOut: Float64Array = new Float64Array(n);
  while (runs.length > 2) {
    const merged: number[] = [0];
    for (let k = 0; k + 1 < runs.length; k += 2) {
      const start = runs[k]!;
      const middle = runs[k + 1]!;
      const end = k + 2 < runs.length ? runs[k + 2]! : middle;
      let a = start;
      let b = middle;
      let o = start;
      while (a < middle && b < end) {
        if (t[b]! < t[a]!) {
          tOut[o] = t[b]!;
          vOut[o++] = v[b++]!;
        } else {
          tOut[o] = t[a]!;
          vOut[o++] = v[a++]!;
        }
      }
      tOut.set(t.subarray(a, middle), o);
      vOut.set(v.subarray(a, middle), o);
      o += middle - a;
      tOut.set(t.subarray(b, end), o);
      vOut.set(v.subarray(b, end), o);
      merged.push(end);
    }
    runs = merged;
    [t, tOut] = [tOut, t];
    [v, vOut] = [vOut, v];
  }
  return { timesMs: t, values: v };
}

/**
 * The runs between `bounds` (each ascending) in time order, when none overlaps another (each
 * ends before the next in time order begins): what a read of several chunks hands over, one
 * chunk's rows after another's, in whichever order the server's merge took them. Null otherwise.
 */
function disjointAscendingRuns(
  timesMs: Float64Array,
  bounds: readonly number[],
): { start: number; end: number }[] | null {
  const runs: { start: number; end: number }[] = [];
  for (let k = 0; k + 1 < bounds.length; k++) {
    const start = bounds[k]!;
    const end = bounds[k + 1]!;
    runs.push({ start, end });
  }
  runs.sort((a, b) => timesMs[a.start]! - timesMs[b.start]!);
  for (let k = 1; k < runs.length; k++) {
    if (!(timesMs[runs[k - 1]!.end - 1]! < timesMs[runs[k]!.start]!)) return null;
  }
  return runs;
}

/** The runs `blocks` of (times, values) one after the other: a copy of each, no comparison. */
function joined(
  timesMs: Float64Array,
  values: Float64Array,
  blocks: readonly { start: number; end: number }[],
): { timesMs: Float64Array; values: Float64Array } {
  const t = new Float64Array(timesMs.length);
  const v = new Float64Array(values.length);
  let at = 0;
  for (const { start, end } of blocks) {
    t.set(timesMs.subarray(start, end), at);
    v.set(values.subarray(start, end), at);
    at += end - start;
  }
  return { timesMs: t, values: v };
}

/**
 * Two runs, the later one first, swapped in place (three reversals): what a read over two chunks
 * hands over for about half of its series, put in order without a copy. Copying them took the
 * api ~12 MB a query over 1,000 series, and 15 % more of its scavenges' time.
 */
function swapped(
  timesMs: Float64Array,
  values: Float64Array,
  laterLength: number,
): { timesMs: Float64Array; values: Float64Array } {
  for (const array of [timesMs, values]) {
    array.reverse();
    array.subarray(0, array.length - laterLength).reverse();
    array.subarray(array.length - laterLength).reverse();
  }
  return { timesMs, values };
}
