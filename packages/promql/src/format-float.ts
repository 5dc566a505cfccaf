/**
 * A float as Go's `strconv.FormatFloat(v, 'f', -1, 64)` writes it, which is how Prometheus puts
 * sample values in JSON and in `count_values` labels: the shortest decimal that reads back as
 * the same float, never in exponent form; `NaN`, `+Inf`, `-Inf`.
 */
export function formatFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  if (Object.is(value, -0)) return '-0';
  const text = String(value);
  const e = text.indexOf('e');
  if (e === -1) return text;
  const negative = text.startsWith('-');
  const mantissa = text.slice(negative ? 1 : 0, e);
  const exponent = Number(text.slice(e + 1));
  const dot = mantissa.indexOf('.');
  const digits = mantissa.replace('.', '');
  const pointAt = (dot === -1 ? mantissa.length : dot) + exponent;
  let out: string;
  if (pointAt <= 0) out = `0.${'0'.repeat(-pointAt)}${digits}`;
  else if (pointAt >= digits.length) out = digits + '0'.repeat(pointAt - digits.length);
  else out = `${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`;
  return negative ? `-${out}` : out;
}
