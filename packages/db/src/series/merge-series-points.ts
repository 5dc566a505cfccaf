import type { Labels, SourceSeries } from '@monitor/promql';

/**
 * Samples of one stored series (from `samples` or `unaggregated_samples`), or its staleness
 * markers (`stale`, values NaN), as read, in ascending time order.
 */
export type StoredPoints = {
  timestampsMs: Float64Array;
  values: Float64Array;
  stale?: true;
  /** No value is NaN, known as they were decoded (no pass over them needed). */
  nanFree?: true;
};

/** What one kind of read found, per stored series id. */
export type PointsById = ReadonlyMap<string, StoredPoints>;

const empty = new Float64Array(0);

/**
 * A selected series out of what was read for its stored series `ids` (oldest first): `reads`
 * holds the samples, the unaggregated samples and the markers, in the order a millisecond held
 * twice is won.
 */
export function mergeSeriesPoints(
  labels: Labels,
  ids: readonly string[],
  reads: readonly PointsById[],
): SourceSeries {
  const lists: StoredPoints[] = [];
  for (const points of reads) {
    for (const id of ids) {
      const list = points.get(id);
      if (list !== undefined) lists.push(list);
    }
  }
  const [only] = lists;
  if (lists.length === 1 && only !== undefined) return fromOneList(labels, only);
  if (lists.length === 0) return { labels, timestampsMs: empty, values: empty };
  return merged(labels, lists);
}

/** A series whose points are all in one list. */
function fromOneList(labels: Labels, points: StoredPoints): SourceSeries {
  const { timestampsMs, values } = points;
  // Without flags every NaN is a marker (SourceSeries): samples without a NaN need none, which
  // spares a flag array per series.
  if (points.stale !== true && (points.nanFree === true || !holdsNaN(values))) {
    return { labels, timestampsMs, values, markers: 0 };
  }
  // Every point flagged: a NaN that is no marker is a value.
  const stale = new Uint8Array(timestampsMs.length).fill(points.stale === true ? 1 : 0);
  return { labels, timestampsMs, values, stale };
}

function holdsNaN(values: Float64Array): boolean {
  for (let i = 0; i < values.length; i++) if (Number.isNaN(values[i])) return true;
  return false;
}

/**
 * One series out of several lists of points (the samples of each stored series that carries its
 * labels, then their unaggregated samples, then their staleness markers): in time order, one
 * point per millisecond, the markers flagged. At a millisecond held twice the earlier list wins:
 * a sample over a marker, and of two samples the older series' (a marker at a sample's time
 * ends nothing before that sample, which Prometheus itself refuses to hold).
 */
function merged(labels: Labels, lists: readonly StoredPoints[]): SourceSeries {
  let total = 0;
  for (const list of lists) total += list.timestampsMs.length;
  const times = new Float64Array(total);
  const values = new Float64Array(total);
  const ranks = new Float64Array(total);
  const flags = new Uint8Array(total);
  let at = 0;
  lists.forEach((list, rank) => {
    const end = at + list.timestampsMs.length;
    times.set(list.timestampsMs, at);
    values.set(list.values, at);
    ranks.fill(rank, at, end);
    if (list.stale === true) flags.fill(1, at, end);
    at = end;
  });
  const order = Array.from(times.keys()).sort(
    (a, b) => times[a]! - times[b]! || ranks[a]! - ranks[b]!,
  );
  const t: number[] = [];
  const v: number[] = [];
  const stale: number[] = [];
  for (const i of order) {
    if (t.length > 0 && t[t.length - 1] === times[i]) continue;
    t.push(times[i]!);
    v.push(values[i]!);
    stale.push(flags[i]!);
  }
  return {
    labels,
    timestampsMs: Float64Array.from(t),
    values: Float64Array.from(v),
    stale: Uint8Array.from(stale),
  };
}
