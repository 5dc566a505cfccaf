/**
 * A 64-bit integer as protobufjs hands it over: a `Long` (two 32-bit halves) when the `long`
 * package is present, as it is here, else a number; ProtoJSON may leave a string.
 */
export type Int64 = number | string | { low: number; high: number; unsigned?: boolean };

const twoTo32 = 4294967296;

/** A signed (int64, sfixed64) value as a number; exact below 2^53, rounded above. */
export function int64ToNumber(value: Int64 | null | undefined): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Number(value);
  const high = value.unsigned === true ? value.high >>> 0 : value.high | 0;
  return high * twoTo32 + (value.low >>> 0);
}

/** A signed value in decimal, exactly (an OTLP integer attribute written as a label). */
export function int64ToDecimal(value: Int64 | null | undefined): string {
  if (value === null || value === undefined) return '0';
  if (typeof value === 'number' || typeof value === 'string') return String(value);
  const high = value.unsigned === true ? value.high >>> 0 : value.high | 0;
  return ((BigInt(high) << 32n) + BigInt(value.low >>> 0)).toString();
}

/**
 * Unsigned nanoseconds (OTLP's fixed64 `time_unix_nano`) as whole milliseconds, floored,
 * exactly: today's nanosecond counts (~1.8e18) exceed 2^53, so converting to a number first
 * could round a time that is exactly on a millisecond into the one before. 2^32 ns is
 * 4294 ms + 967296 ns, and every partial product below stays under 2^53.
 */
export function unixNanosToMs(value: Int64 | null | undefined): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'number') return Math.floor(value / 1e6);
  if (typeof value === 'string') {
    return /^\d{7,}$/.test(value) ? Number(value.slice(0, -6)) : Math.floor(Number(value) / 1e6);
  }
  const high = value.high >>> 0;
  const low = value.low >>> 0;
  return high * 4294 + Math.floor((high * 967296 + low) / 1e6);
}
