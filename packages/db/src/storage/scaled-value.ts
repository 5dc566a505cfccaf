/**
 * Sample values as scaled integers, so that TimescaleDB compresses them with delta-of-delta +
 * simple8b (integers) instead of Gorilla (floats): on the storage bench's fleet the value column
 * went from 4.60 to about 2.1 bytes per sample (docs/benchmarks/storage.md, "Storage"). A scale `k` ≥ 0
 * means `mantissa / 10^k` (decimals: 12.3 is 123 at 1); a scale `−b` < 0 means `mantissa × 2^b`
 * (whole numbers with trailing zero bits: byte counts of whole 4 KiB pages are 4096 × pages, and
 * storing the pages spares delta-of-delta 12 bits a sample). Lossless by construction: a value is
 * encoded only when decoding gives back the very same double, bit for bit; every other value
 * (−0, NaN, ±Inf, and those needing more than 53 bits of mantissa at every decimal scale, such as
 * 17-digit noise) is stored as it is, in the float8 column.
 *
 * Decoding is one IEEE operation on two exactly representable doubles (|mantissa| ≤ 2^53, 10^k
 * exact for k ≤ 22, 2^b exact): a correctly rounded division, or a product that is exact (the
 * value is `mantissa × 2^b` exactly). The same operation in SQL (`sample_value`, float8
 * arithmetic) gives the same bits as here: the writer checks exactly what readers compute.
 */

/** The largest decimal scale: 10^22 is the largest power of ten a double holds exactly. */
export const maxValueScale = 22;

/** The largest binary shift: 2^62 is the largest power of two an int8 holds (SQL decodes with it). */
export const maxBinaryShift = 62;

/** |mantissa| ≤ 2^53: every such integer is an exact double (and an exact int8). */
const maxMantissa = 2 ** 53;

/** 10^k for k = 0…22, each exact (parsed from decimal, not multiplied up). */
const powersOfTen: readonly number[] = Array.from({ length: maxValueScale + 1 }, (_, k) =>
  Number(`1e${k}`),
);

/**
 * What `encodeScale` returns for a value kept as float8: no scale is ever this (decimal scales
 * are 0…22, binary shifts −1…−62), and a smallint holds it.
 */
export const unscaled = -32768;

/**
 * The scale at which `value` is stored as an integer mantissa (see the top of this file), or
 * `unscaled` when none gives back `value` exactly. `preferredScale` (the series' scale so far,
 * or `unscaled`) is tried first: a series whose values share one scale has mantissas whose
 * deltas are small, which is what delta-of-delta compresses. Otherwise the smallest exact
 * decimal scale, and for a whole number the largest binary shift that is exact.
 */
export function encodeScale(value: number, preferredScale: number): number {
  // NaN and ±Inf fail every exactness check below; −0 would come back as +0.
  if (value === 0 && 1 / value < 0) return unscaled;
  if (preferredScale !== unscaled && exactAt(value, preferredScale)) return preferredScale;
  for (let scale = 0; scale <= maxValueScale; scale++) {
    const power = powersOfTen[scale] as number;
    const mantissa = Math.round(value * power);
    if (!(Math.abs(mantissa) <= maxMantissa)) break;
    if (mantissa / power === value) return scale === 0 ? binaryShiftOf(value) : scale;
  }
  // A whole number past 2^53 may still be a smaller one times a power of two.
  return Number.isInteger(value) ? binaryShiftOf(value) : unscaled;
}

/**
 * The scale of a whole number: `−b` for the `b` trailing zero bits it has (at most
 * `maxBinaryShift`), 0 when it has none or is 0; `unscaled` when the rest is still past 2^53.
 */
function binaryShiftOf(value: number): number {
  if (value === 0) return 0;
  let shift = 0;
  let rest = value;
  while (shift < maxBinaryShift && Number.isInteger(rest / 2)) {
    rest /= 2;
    shift++;
  }
  if (!(Math.abs(rest) <= maxMantissa)) return unscaled;
  return shift === 0 ? 0 : -shift;
}

/** The mantissa of `value` at `scale` (one `encodeScale` returned for it). */
export function scaledMantissa(value: number, scale: number): number {
  return scale >= 0 ? Math.round(value * (powersOfTen[scale] as number)) : value / 2 ** -scale;
}

/** The value of a stored `(mantissa, scale)`: what `sample_value` computes in SQL. */
export function decodeScaled(mantissa: number, scale: number): number {
  return scale >= 0 ? mantissa / (powersOfTen[scale] as number) : mantissa * 2 ** -scale;
}

function exactAt(value: number, scale: number): boolean {
  if (scale > maxValueScale || scale < -maxBinaryShift) return false;
  const mantissa = scaledMantissa(value, scale);
  return (
    Number.isInteger(mantissa) &&
    Math.abs(mantissa) <= maxMantissa &&
    decodeScaled(mantissa, scale) === value
  );
}

/**
 * The SQL twin of `decodeScaled`, for every reader of `samples`: the float8 column when set,
 * else the mantissa divided by 10^scale (from a constant array: each element parsed exactly) or
 * multiplied by 2^−scale (an int8 power of two, exact as a float8). Immutable and a single
 * expression, so the planner inlines it, and continuous aggregates may use it.
 */
export const sampleValueFunction = `create or replace function sample_value(
    mantissa bigint, scale smallint, value double precision
  ) returns double precision
  language sql immutable parallel safe
  as $$ select coalesce(value, case when scale >= 0
    then mantissa::float8 / ('{${powersOfTen.map((_, k) => `1e${k}`).join(',')}}'::float8[])[scale + 1]
    else mantissa::float8 * (1::int8 << -scale)::float8 end) $$`;
