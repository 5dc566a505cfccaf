/**
 * A metric value in a sample message's JSON text. JSON numbers carry every value but NaN, ±Inf
 * and −0 (`JSON.stringify` writes null, null and 0): those go as the strings below, Prometheus'
 * own spellings (and `-0`). A reader older than them refuses the message (its schema wants
 * numbers) instead of storing another value.
 */
const specialValues: Readonly<Record<string, number>> = {
  NaN: Number.NaN,
  '+Inf': Number.POSITIVE_INFINITY,
  '-Inf': Number.NEGATIVE_INFINITY,
  '-0': -0,
};

/** The spellings a message's JSON uses for values JSON numbers cannot carry. */
export const specialValueNames = ['NaN', '+Inf', '-Inf', '-0'] as const;

/** Whether JSON text carries `value` as a number (finite, and not −0). */
function isPlainJsonNumber(value: number): boolean {
  return Number.isFinite(value) && !Object.is(value, -0);
}

function specialValueName(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return '-0';
}

/**
 * `metrics` as a message's JSON writes them: the same object when every value is a plain JSON
 * number (the usual case, no copy), else a copy with the special values spelled out.
 */
export function metricsToJson(
  metrics: Readonly<Record<string, number>>,
): Readonly<Record<string, number | string>> {
  let copy: Record<string, number | string> | undefined;
  for (const name in metrics) {
    const value = metrics[name]!;
    if (isPlainJsonNumber(value)) continue;
    copy ??= { ...metrics };
    Object.defineProperty(copy, name, {
      value: specialValueName(value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy ?? metrics;
}

/** A value as a message's JSON carries it, read back; undefined when it is none. */
export function metricValueFromJson(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && Object.hasOwn(specialValues, value)) return specialValues[value];
  return undefined;
}
