/** One series of a Prometheus range query (`resultType: "matrix"`). */
export type MatrixSeries = { metric: Record<string, string>; values: [number, string][] };

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

/**
 * A matrix on the query's own step grid, start to end: every series gets a value or null at
 * every step, so gaps stay gaps. Values that are not finite numbers (NaN, ±Inf) are drawn as
 * gaps too.
 */
export function matrixToPlot(
  result: readonly MatrixSeries[],
  range: { startSeconds: number; endSeconds: number; stepSeconds: number },
  maxSeries: number,
): PromqlPlot {
  const xs: number[] = [];
  for (let t = range.startSeconds; t <= range.endSeconds; t += range.stepSeconds) xs.push(t);
  const position = new Map(xs.map((t, i) => [t, i]));
  const series = result.slice(0, maxSeries).map((each) => {
    const values: (number | null)[] = xs.map(() => null);
    for (const [t, text] of each.values) {
      const i = position.get(t);
      const value = Number(text);
      if (i !== undefined && Number.isFinite(value)) values[i] = value;
    }
    return { label: seriesLabel(each.metric), values };
  });
  return { xs, series, omitted: Math.max(0, result.length - maxSeries) };
}
