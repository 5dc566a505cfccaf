/**
 * Sample values as scaled integers: `mantissa / 10^scale`, so that TimescaleDB compresses them
 * with delta-of-delta + simple8b (integers) instead of Gorilla (floats): on the storage bench's
 * fleet the value column went from 4.60 to about 2.4 bytes per sample (docs/benchmarks.md,
 * "Storage"). Lossless by construction: a value is encoded only when decoding gives back the
 * very same double, bit for bit; every other value (−0, NaN, ±Inf, and those needing more than
 * 53 bits of mantissa, such as 17-digit noise) is stored as it is, in the float8 column.
 *
 * Decoding is one IEEE division of two exactly representable doubles (|mantissa| ≤ 2^53, 10^k
 * exact for k ≤ 22), hence correctly rounded, and the same division in SQL (`sample_value`,
 * float8 / float8) gives the same bits as here: the writer checks exactly what readers compute.
 */

/** The largest scale: 10^22 is the largest power of ten a double holds exactly. */
export const maxValueScale = 22;

/** |mantissa| ≤ 2^53: every such integer is an exact double (and an exact int8). */
const maxMantissa = 2 ** 53;

/** 10^k for k = 0…22, each exact (parsed from decimal, not multiplied up). */
const powersOfTen: readonly number[] = Array.from({ length: maxValueScale + 1 }, (_, k) =>
  Number(`1e${k}`),
);

/** What `encodeScale` returns for a value kept as float8. */
export const unscaled = -1;

/**
 * The scale `k` at which `value` is stored as the integer `Math.round(value × 10^k)`, or
 * `unscaled` (−1) when no k ≤ 22 gives back `value` exactly. `preferredScale` (the series'
 * scale so far, or −1) is tried first: a series whose values share one scale has mantissas
 * whose deltas are small, which is what delta-of-delta compresses; otherwise the smallest
 * scale that is exact.
 */
export function encodeScale(value: number, preferredScale: number): number {
  // NaN and ±Inf fail the range check below (NaN compares false); −0 would come back as +0.
  if (value === 0 && 1 / value < 0) return unscaled;
  if (preferredScale >= 0 && exactAt(value, preferredScale)) return preferredScale;
  for (let scale = 0; scale <= maxValueScale; scale++) {
    const mantissa = Math.round(value * (powersOfTen[scale] as number));
    if (!(Math.abs(mantissa) <= maxMantissa)) return unscaled;
    if (mantissa / (powersOfTen[scale] as number) === value) return scale;
  }
  return unscaled;
}

/** The mantissa of `value` at `scale` (one `encodeScale` returned for it). */
export function scaledMantissa(value: number, scale: number): number {
  return Math.round(value * (powersOfTen[scale] as number));
}

/** The value of a stored `(mantissa, scale)`: what `sample_value` computes in SQL. */
export function decodeScaled(mantissa: number, scale: number): number {
  return mantissa / (powersOfTen[scale] as number);
}

function exactAt(value: number, scale: number): boolean {
  const power = powersOfTen[scale] as number;
  const mantissa = Math.round(value * power);
  return Math.abs(mantissa) <= maxMantissa && mantissa / power === value;
}

/**
 * The SQL twin of `decodeScaled`, for every reader of `samples`: the float8 column when set,
 * else the mantissa divided by 10^scale (from a constant array: each element parsed exactly).
 * Immutable and a single expression, so the planner inlines it, and continuous aggregates may
 * use it.
 */
export const sampleValueFunction = `create function sample_value(
    mantissa bigint, scale smallint, value double precision
  ) returns double precision
  language sql immutable parallel safe
  as $$ select coalesce(value, mantissa::float8 / ('{${powersOfTen
    .map((_, k) => `1e${k}`)
    .join(',')}}'::float8[])[scale + 1]) $$`;

/**
 * Each series' scale so far (the largest `encodeScale` chose for it), so that its next values
 * are scaled alike: a gauge reported with one or two decimals (12.3, 12.25) keeps 2, and its
 * mantissas stay comparable from sample to sample. Only a compression hint: a writer that
 * forgot a series (another process, a restart, the bound below) still stores exact values.
 */
export type SeriesScales = {
  /** The series' scale so far, or `unscaled` when none is known. */
  scaleOf(seriesId: number): number;
  /** Records that a value of the series was stored at `scale`. */
  saw(seriesId: number, scale: number): void;
};

/** Series scales, forgotten all at once past `maxEntries` series (default 1,000,000). */
export function createSeriesScales(maxEntries = 1_000_000): SeriesScales {
  let scales = new Map<number, number>();
  return {
    scaleOf: (seriesId) => scales.get(seriesId) ?? unscaled,
    saw(seriesId, scale) {
      const known = scales.get(seriesId);
      if (known !== undefined && known >= scale) return;
      if (known === undefined && scales.size >= maxEntries) scales = new Map();
      scales.set(seriesId, scale);
    },
  };
}
