/**
 * How `raw_scaled_samples` (timescale/read-functions.ts) hands a stored value over on both
 * engines; series/scaled-codes.ts decodes it.
 */

import { maxBinaryShift, maxValueScale } from './scaled-value.js';

/** The `(mantissa, scale)` pairs the writer stores (scaled-value.ts), as SQL. */
const storedScaled = (s: string): string => `${s}.mantissa between ${-(2 ** 53)} and ${2 ** 53}
      and ${s}.scale between ${-maxBinaryShift} and ${maxValueScale}`;

/**
 * A stored `(mantissa, scale)` as one bigint, `mantissa × 128 + scale + 64`, when it is one the
 * writer stores (|mantissa| ≤ 2^53, scale −62…22: no overflow, low bits 2…86); else null, and
 * `scaledValue` decodes it in SQL: one odd row never fails a read.
 */
export const scaledCode = (s: string): string => `case
    when ${storedScaled(s)}
    then ${s}.mantissa * 128 + (${s}.scale + 64) end`;

/** The float8 beside `scaledCode`: null where that code holds the value. */
export const scaledValue = (s: string): string => `case
    when ${storedScaled(s)}
    then null else sample_value(${s}.mantissa, ${s}.scale, ${s}.value) end`;
