import type { Heatmap } from './histogram-heatmap.js';
import { histogramHeatmap } from './histogram-heatmap.js';
import { histogramQuantile } from './histogram-quantile.js';
import type { Histogram, HistogramJson } from './parse-histogram.js';
import { parseHistogram } from './parse-histogram.js';

/**
 * One series of a Prometheus range query (`resultType: "matrix"`): its floats, its native
 * histograms, or both (a series that changed kind), each key left out when it has none.
 */
export type MatrixSeries = {
  metric: Record<string, string>;
  values?: [number, string][];
  histograms?: [number, HistogramJson][];
};

/** A range query's step grid and the query's range, seconds. */
type StepGrid = { startSeconds: number; endSeconds: number; stepSeconds: number };

/** A range query's data, as uPlot takes it: shared x (seconds), one y array per series. */
export type PromqlPlot = {
  xs: number[];
  series: { label: string; values: (number | null)[] }[];
  /** Series left out past `maxSeries`. */
  omitted: number;
};

/** The series' labels as PromQL writes them: `name{a="b", c="d"}`, `{}` for none. */
export function seriesLabel(metric: Record<string, string>): string {
  const { __name__: name = '', ...rest } = metric;
  const pairs = Object.keys(rest)
    .sort()
    .map((key) => `${key}=${JSON.stringify(rest[key])}`);
  return pairs.length === 0 && name !== '' ? name : `${name}{${pairs.join(', ')}}`;
}

/**
 * The step of a PromQL chart over `spanMs`: about 240 points, never under 15 s (the agents'
 * usual interval), in whole seconds.
 */
export function promqlStepSeconds(spanMs: number): number {
  return Math.max(15, Math.ceil(spanMs / 1000 / 240));
}

function stepTimes(range: StepGrid): number[] {
  const xs: number[] = [];
  for (let t = range.startSeconds; t <= range.endSeconds; t += range.stepSeconds) xs.push(t);
  return xs;
}

/**
 * The float series of a matrix on the query's own step grid, start to end: every series gets a
 * value or null at every step, so gaps stay gaps. Values that are not finite numbers (NaN,
 * ±Inf) are drawn as gaps too. Series of histograms only are left to `matrixHistogramPlots`.
 */
export function matrixToPlot(
  result: readonly MatrixSeries[],
  range: StepGrid,
  maxSeries: number,
): PromqlPlot {
  const xs = stepTimes(range);
  const position = new Map(xs.map((t, i) => [t, i]));
  const floats = result.filter((each) => each.values !== undefined);
  const series = floats.slice(0, maxSeries).map((each) => {
    const values: (number | null)[] = xs.map(() => null);
    for (const [t, text] of each.values ?? []) {
      const i = position.get(t);
      const value = Number(text);
      if (i !== undefined && Number.isFinite(value)) values[i] = value;
    }
    return { label: seriesLabel(each.metric), values };
  });
  return { xs, series, omitted: Math.max(0, floats.length - maxSeries) };
}

/** The quantiles drawn over a histogram series' heatmap. */
const plottedQuantiles = [0.5, 0.9, 0.99] as const;

/** A quantile as dashboards name it: 0.5 is `p50`, 0.999 `p99.9`. */
export function quantileName(q: number): string {
  return `p${Number((q * 100).toPrecision(12))}`;
}

/** One histogram series of a range query: its heatmap, and its quantiles on the step grid. */
export type HistogramPlot = {
  label: string;
  xs: number[];
  heatmap: Heatmap;
  /** `plottedQuantiles` in order, `null` where the step has no histogram or an empty one. */
  quantiles: { q: number; label: string; values: (number | null)[] }[];
};

/**
 * The histogram series of a matrix, the first `maxSeries`, each as a heatmap with its
 * `plottedQuantiles` (computed as `histogram_quantile` would), on the query's step grid.
 */
export function matrixHistogramPlots(
  result: readonly MatrixSeries[],
  range: StepGrid,
  maxSeries: number,
): { plots: HistogramPlot[]; omitted: number } {
  const xs = stepTimes(range);
  const position = new Map(xs.map((t, i) => [t, i]));
  const series = result.filter((each) => each.histograms !== undefined);
  const plots = series.slice(0, maxSeries).map((each): HistogramPlot => {
    const label = seriesLabel(each.metric);
    const points = (each.histograms ?? [])
      .filter(([t]) => position.has(t))
      .map(([t, json]): [number, Histogram] => [t, parseHistogram(json)]);
    const byStep: (Histogram | undefined)[] = xs.map(() => undefined);
    for (const [t, h] of points) byStep[position.get(t)!] = h;
    const quantiles = plottedQuantiles.map((q) => ({
      q,
      label: `${quantileName(q)} ${label}`,
      values: byStep.map((h) => {
        const value = h === undefined ? NaN : histogramQuantile(q, h);
        return Number.isFinite(value) ? value : null;
      }),
    }));
    return { label, xs, heatmap: histogramHeatmap(points, range.stepSeconds), quantiles };
  });
  return { plots, omitted: Math.max(0, series.length - maxSeries) };
}

/**
 * What a range query answered, above its charts: `4 series, 15 s step`, then what was left out
 * and, when there are native histograms, how many series hold floats and how many histograms.
 */
export function describeMatrix(
  result: readonly MatrixSeries[],
  stepSeconds: number,
  limits: { maxFloats: number; maxHistograms: number },
): string {
  const floats = result.filter((each) => each.values !== undefined).length;
  const histograms = result.filter((each) => each.histograms !== undefined).length;
  const head = `${result.length} series, ${stepSeconds} s step`;
  const firstDrawn = (count: number, max: number) => (count > max ? `the first ${max} drawn` : '');
  if (histograms === 0) {
    const omitted = firstDrawn(floats, limits.maxFloats);
    return omitted === '' ? head : `${head}: ${omitted}`;
  }
  const part = (count: number, what: string, max: number) => {
    const omitted = firstDrawn(count, max);
    return `${count} of ${what}${omitted === '' ? '' : ` (${omitted})`}`;
  };
  const parts = [
    ...(floats > 0 ? [part(floats, 'floats', limits.maxFloats)] : []),
    part(histograms, 'native histograms', limits.maxHistograms),
  ];
  return `${head}: ${parts.join(', ')}`;
}
