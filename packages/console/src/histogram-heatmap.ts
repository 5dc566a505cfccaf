import type { Histogram, HistogramBucket } from './parse-histogram.js';

/** One bucket of one histogram: a rectangle t ± step/2 by lower..upper, coloured by `value`. */
export type HeatmapCell = {
  /** The histogram's time, seconds. */
  t: number;
  /** The bounds drawn: the bucket's, but on a log scale the zero bucket's are moved (below). */
  lower: number;
  upper: number;
  value: number;
  bucket: HistogramBucket;
};

/**
 * A series of histograms as a heatmap: time × bucket, the colour the bucket's count (or rate).
 * A log y scale when every bucket is above 0 but the zero bucket (exponential buckets keep their
 * height there); the zero bucket, and any other bucket starting at or below 0, is then drawn as
 * the row under the lowest bucket above 0, as high as that one. Buckets with a negative upper
 * bound call for a linear scale. A bound at ±Inf is drawn one row past the finite ones.
 */
export type Heatmap = {
  cells: HeatmapCell[];
  stepSeconds: number;
  yScale: 'log' | 'linear';
  /** The range of the drawn bounds; equal (nothing drawn) when there are no cells. */
  yMin: number;
  yMax: number;
  /** The largest cell value, the darkest colour; 0 when there are no cells. */
  maxValue: number;
};

export function histogramHeatmap(
  points: readonly (readonly [number, Histogram])[],
  stepSeconds: number,
): Heatmap {
  const buckets = points.flatMap(([, h]) => h.buckets);
  const positives = buckets.filter((b) => b.lower > 0);
  const lowest = positives.reduce<HistogramBucket | undefined>(
    (min, b) => (min === undefined || b.lower < min.lower ? b : min),
    undefined,
  );
  const log = lowest !== undefined && buckets.every((b) => b.upper > 0);
  const finite = buckets.flatMap((b) => [b.lower, b.upper]).filter(Number.isFinite);
  let yMin = Math.min(...finite);
  let yMax = Math.max(...finite);
  let bottom = yMin;
  if (log) {
    const ratio = Number.isFinite(lowest.upper) ? lowest.upper / lowest.lower : 2;
    bottom = lowest.lower / ratio;
    yMin = bottom;
    yMax = Math.max(...positives.flatMap((b) => [b.lower, b.upper]).filter(Number.isFinite));
  }
  if (finite.length === 0) {
    yMin = log ? 0.5 : 0;
    yMax = 1;
  }
  // A bound at ±Inf: one row (a doubling, or a tenth of the range) past the finite ones.
  const room = log ? 0 : (yMax - yMin) / 10 || 1;
  const top = log ? yMax * 2 : yMax + room;
  if (buckets.some((b) => b.upper === Infinity)) yMax = top;
  if (!log && buckets.some((b) => b.lower === -Infinity)) yMin -= room;

  const cells: HeatmapCell[] = [];
  let maxValue = 0;
  for (const [t, h] of points) {
    for (const bucket of h.buckets) {
      if (!(bucket.count > 0)) continue;
      let lower = bucket.lower === -Infinity ? yMin : bucket.lower;
      let upper = bucket.upper === Infinity ? yMax : bucket.upper;
      if (log && lower <= 0) {
        lower = bottom;
        upper = Math.max(upper, lowest.lower);
      }
      cells.push({ t, lower, upper, value: bucket.count, bucket });
      maxValue = Math.max(maxValue, bucket.count);
    }
  }
  return { cells, stepSeconds, yScale: log ? 'log' : 'linear', yMin, yMax, maxValue };
}

/**
 * Where a value (a quantile) is drawn on the heatmap's y scale: on a log scale a value under
 * every bucket above 0 (in the zero bucket, or 0 itself) sits on the bottom edge, the zero
 * bucket's row.
 */
export function heatmapY(heatmap: Heatmap, value: number): number {
  return heatmap.yScale === 'log' && value < heatmap.yMin ? heatmap.yMin : value;
}

/** The cell drawn at (t, y), if any: the histogram of the step t falls in, the bucket y does. */
export function heatmapCellAt(heatmap: Heatmap, t: number, y: number): HeatmapCell | undefined {
  const half = heatmap.stepSeconds / 2;
  return heatmap.cells.find(
    (cell) => t >= cell.t - half && t < cell.t + half && y > cell.lower && y <= cell.upper,
  );
}

/**
 * Colour stops from pale to dark (ColorBrewer's Oranges without its near-white end, so the
 * smallest cell still shows on white). styles.css draws the same scale as `.heatmap-scale-bar`.
 */
const stops: readonly (readonly [number, number, number])[] = [
  [0xfe, 0xe6, 0xce],
  [0xfd, 0xd0, 0xa2],
  [0xfd, 0xae, 0x6b],
  [0xfd, 0x8d, 0x3c],
  [0xf1, 0x69, 0x13],
  [0xd9, 0x48, 0x01],
  [0xa6, 0x36, 0x03],
  [0x7f, 0x27, 0x04],
];

/**
 * The colour of a cell: its value over the largest on a square-root scale (as Grafana's heatmap
 * defaults to), so a latency's sparse tail still shows beside its crowded body.
 */
export function heatmapColour(value: number, maxValue: number): string {
  const fraction = maxValue > 0 ? Math.sqrt(Math.min(1, Math.max(0, value / maxValue))) : 0;
  const at = fraction * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(at));
  const [from, to] = [stops[i]!, stops[i + 1]!];
  const mix = (k: 0 | 1 | 2) => Math.round(from[k] + (to[k] - from[k]) * (at - i));
  return `rgb(${mix(0)}, ${mix(1)}, ${mix(2)})`;
}

/**
 * Ticks for a log axis from min to max: 1, 2 and 5 times the powers of ten in it, thinned to
 * the powers of ten alone (then every other one) while more than `maxTicks`.
 */
export function logTicks(min: number, max: number, maxTicks: number): number[] {
  if (!(min > 0) || !(max >= min) || !Number.isFinite(max)) return [];
  const pick = (multiples: number[], everyDecades: number) => {
    const ticks: number[] = [];
    for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e += 1) {
      if (e % everyDecades !== 0) continue;
      for (const m of multiples) {
        // toPrecision drops the float noise of m · 10^e (3 · 0.1 is 0.30000000000000004).
        const tick = Number((m * 10 ** e).toPrecision(12));
        if (tick >= min && tick <= max) ticks.push(tick);
      }
    }
    return ticks;
  };
  let ticks = pick([1, 2, 5], 1);
  if (ticks.length > maxTicks) ticks = pick([1], 1);
  for (let every = 2; ticks.length > maxTicks; every *= 2) ticks = pick([1], every);
  return ticks;
}
