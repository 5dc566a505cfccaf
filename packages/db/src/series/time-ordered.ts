/**
 * Points of one stored series put in ascending time order, in linear time for the orders they
 * come in. A read hands a series' rows over in scan order, which is a few runs each in time
 * order one way or the other: an uncompressed chunk's rows ascending (index order), a compressed
 * chunk's batches in their compression order (descending in chunks compressed by `time desc`),
 * one chunk's rows before or after another's (the server merges chunks by series only). Each
 * descending run is reversed where it lies; runs that then ascend one after the other are the
 * answer as they are, runs that do not overlap are joined by copying each, short runs that
 * overlap only their neighbours (the head chunk's rows, in the order they were written) are sorted
 * where they lie, and only other overlaps are merged pairwise, so the cost is n × log2(runs)
 * moves at most, where a comparison sort per series took most of a query's time in the api
 * (docs/benchmarks/promql.md, "PromQL").
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
  let blockBounds: readonly number[] = bounds;
  let blocks = disjointAscendingRuns(timesMs, bounds);
  if (blocks === null) {
    // Short runs that overlap, side by side: the head chunk's rows in the order they were
    // written, beside a compressed chunk's long run. Sorted where they lie, they are one block.
    const stretches = sortOverlappingNeighbours(timesMs, values, bounds);
    if (stretches !== null) blocks = disjointAscendingRuns(timesMs, (blockBounds = stretches));
  }
  if (blocks !== null) {
    // Disjoint and already one after the other: batches of one chunk, or chunks in time order.
    if (blocks.every((block, k) => block.start === blockBounds[k])) return { timesMs, values };
    if (blocks.length === 2) return swapped(timesMs, values, blocks[1]!.end - blocks[1]!.start);
    return joined(timesMs, values, blocks);
  }
  return mergedRuns(timesMs, values, bounds);
}

/** Runs of this many points or fewer in all are sorted by insertion; longer ones merged. */
const insertionSortMax = 64;

/**
 * Where runs whose times overlap lie next to each other (and only there), sorts each such stretch
 * in place and returns the stretches' bounds (a run that overlaps none is a stretch of its own);
 * null, with nothing moved, where runs that overlap have another run between them. Stable: at a
 * time held twice the earlier run's point stays first.
 */
function sortOverlappingNeighbours(
  timesMs: Float64Array,
  values: Float64Array,
  bounds: readonly number[],
): number[] | null {
  const runCount = bounds.length - 1;
  const byStart = Array.from({ length: runCount }, (_, k) => k).sort(
    (a, b) => timesMs[bounds[a]!]! - timesMs[bounds[b]!]!,
  );
  // Groups of overlapping runs, as the first and last run of each (by position).
  const groups: { first: number; last: number; runs: number }[] = [];
  let groupEndMs = -Infinity;
  for (const k of byStart) {
    const group = groups.at(-1);
    if (group !== undefined && timesMs[bounds[k]!]! <= groupEndMs) {
      group.first = Math.min(group.first, k);
      group.last = Math.max(group.last, k);
      group.runs++;
    } else groups.push({ first: k, last: k, runs: 1 });
    groupEndMs = Math.max(groupEndMs, timesMs[bounds[k + 1]! - 1]!);
  }
  if (groups.some((g) => g.last - g.first + 1 !== g.runs)) return null;
  groups.sort((a, b) => a.first - b.first);
  const stretches = [0];
  for (const { first, last } of groups) {
    const start = bounds[first]!;
    const end = bounds[last + 1]!;
    if (last > first) sortStretch(timesMs, values, start, end, bounds.slice(first, last + 2));
    stretches.push(end);
  }
  return stretches;
}

/**
 * Sorts [start, end) in place, stably, given its ascending runs (`runs`, absolute bounds). A
 * short stretch by insertion; a long one holds a long run (a compressed chunk's) beside short
 * ones (the head chunk's, and a point that joined neither): the short ones are sorted apart, the
 * long run moved to the stretch's start, and the three merged from the end, so that the long
 * run is moved once and never copied.
 */
function sortStretch(
  timesMs: Float64Array,
  values: Float64Array,
  start: number,
  end: number,
  runs: readonly number[],
): void {
  if (end - start <= insertionSortMax) {
    insertionSort(timesMs, values, start, end);
    return;
  }
  let longest = 0;
  for (let k = 1; k + 1 < runs.length; k++) {
    if (runs[k + 1]! - runs[k]! > runs[longest + 1]! - runs[longest]!) longest = k;
  }
  const longStart = runs[longest]!;
  const longEnd = runs[longest + 1]!;
  const before = sortedApart(timesMs, values, runs.slice(0, longest + 1));
  const after = sortedApart(timesMs, values, runs.slice(longest + 1));
  timesMs.copyWithin(start, longStart, longEnd);
  values.copyWithin(start, longStart, longEnd);
  // From the end: of equal times the later run's point is written first (it stays after).
  let a = start + longEnd - longStart - 1;
  let b = before.timesMs.length - 1;
  let c = after.timesMs.length - 1;
  for (let o = end - 1; o >= start; o--) {
    const ta = a >= start ? timesMs[a]! : -Infinity;
    const tb = b >= 0 ? before.timesMs[b]! : -Infinity;
    const tc = c >= 0 ? after.timesMs[c]! : -Infinity;
    if (c >= 0 && tc >= ta && tc >= tb) {
      timesMs[o] = tc;
      values[o] = after.values[c--]!;
    } else if (a >= start && ta >= tb) {
      timesMs[o] = ta;
      values[o] = values[a--]!;
    } else {
      timesMs[o] = tb;
      values[o] = before.values[b--]!;
    }
  }
}

/** A copy of the points between the first and last of `runs` (ascending runs), sorted. */
function sortedApart(
  timesMs: Float64Array,
  values: Float64Array,
  runs: readonly number[],
): { timesMs: Float64Array; values: Float64Array } {
  const from = runs[0]!;
  const t = timesMs.slice(from, runs.at(-1));
  const v = values.slice(from, runs.at(-1));
  if (t.length <= insertionSortMax) {
    insertionSort(t, v, 0, t.length);
    return { timesMs: t, values: v };
  }
  return mergedRuns(
    t,
    v,
    runs.map((bound) => bound - from),
  );
}

/** Sorts [start, end) in place by insertion, stably. */
function insertionSort(
  timesMs: Float64Array,
  values: Float64Array,
  start: number,
  end: number,
): void {
  for (let i = start + 1; i < end; i++) {
    const time = timesMs[i]!;
    const value = values[i]!;
    let j = i - 1;
    for (; j >= start && timesMs[j]! > time; j--) {
      timesMs[j + 1] = timesMs[j]!;
      values[j + 1] = values[j]!;
    }
    timesMs[j + 1] = time;
    values[j + 1] = value;
  }
}

/**
 * Ascending runs between `bounds` merged bottom-up, neighbour with neighbour, ping-ponging
 * between the given arrays and a new pair; at a time held twice the earlier run's point first.
 */
function mergedRuns(
  timesMs: Float64Array,
  values: Float64Array,
  bounds: readonly number[],
): { timesMs: Float64Array; values: Float64Array } {
  const n = timesMs.length;
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
