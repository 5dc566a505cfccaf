/** Small descriptive statistics over plain number arrays. Empty input gives NaN-free zeros. */

export function mean(values: readonly number[]): number {
  if (values.length === 0) return 0;
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

/** Population standard deviation. */
export function standardDeviation(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const m = mean(values);
  let squares = 0;
  for (const value of values) squares += (value - m) ** 2;
  return Math.sqrt(squares / values.length);
}

export type LinearFit = {
  /** Change of y per unit of x. */
  slope: number;
  intercept: number;
  /** Coefficient of determination, 0..1 (0 when y is constant or there are < 3 points). */
  r2: number;
};

/** Means and centred sums of products of the first `n` pairs: what a fit and a correlation need. */
function pairedMoments(xs: readonly number[], ys: readonly number[], n: number) {
  const mx = mean(xs.slice(0, n));
  const my = mean(ys.slice(0, n));
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (xs[i] ?? 0) - mx;
    const dy = (ys[i] ?? 0) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return { mx, my, sxy, sxx, syy };
}

/** Least-squares line through (xs[i], ys[i]). */
export function linearFit(xs: readonly number[], ys: readonly number[]): LinearFit {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return { slope: 0, intercept: ys[0] ?? 0, r2: 0 };
  const { mx, my, sxy, sxx, syy } = pairedMoments(xs, ys, n);
  if (sxx === 0) return { slope: 0, intercept: my, r2: 0 };
  const slope = sxy / sxx;
  const r2 = n < 3 || syy === 0 ? 0 : Math.min(1, (sxy * sxy) / (sxx * syy));
  return { slope, intercept: my - slope * mx, r2 };
}

/** Pearson correlation, -1..1; 0 when either side is constant or there are < 3 pairs. */
export function correlation(xs: readonly number[], ys: readonly number[]): number {
  const n = Math.min(xs.length, ys.length);
  if (n < 3) return 0;
  const { sxy, sxx, syy } = pairedMoments(xs, ys, n);
  if (sxx === 0 || syy === 0) return 0;
  return Math.max(-1, Math.min(1, sxy / Math.sqrt(sxx * syy)));
}

export function clamp01(value: number): number {
  if (Number.isNaN(value)) return 0;
  return Math.max(0, Math.min(1, value));
}

/** Rounds for display and storage: 4 significant digits, integers kept whole. */
export function round(value: number): number {
  if (!Number.isFinite(value) || Number.isInteger(value)) return value;
  return Number(value.toPrecision(4));
}
