/**
 * Go values as templates see them. Go's float64 is a JS number and its int a bigint, since
 * templates print, compare and format the two differently (`1` vs `1e+06`, `%d`).
 */
export type GoValue =
  | string
  | number
  | bigint
  | boolean
  | null
  | GoMap
  | GoStruct
  | GoHtml
  | GoTime
  | readonly GoValue[];

/** A Go map; a missing key reads as `zero` (templates run with missingkey=zero). */
export class GoMap {
  constructor(
    readonly entries: ReadonlyMap<string, GoValue>,
    readonly zero: GoValue,
    readonly typeName: string,
  ) {}
}

/** A Go struct (or pointer to one): named fields only. */
export class GoStruct {
  constructor(
    readonly fields: Readonly<Record<string, GoValue>>,
    readonly typeName: string,
  ) {}
}

/** html/template's HTML: a string that `safeHtml` marks. */
export class GoHtml {
  constructor(readonly value: string) {}
}

/** A time.Time in UTC, to the nanosecond. */
export class GoTime {
  constructor(readonly unixNanos: bigint) {}
}

/** A Go map[string]string from labels. */
export function stringMap(record: Readonly<Record<string, string>>): GoMap {
  return new GoMap(new Map(Object.entries(record)), '', 'map[string]string');
}

/** The Go type name `%T` and error messages print. */
export function goTypeName(value: GoValue): string {
  if (value === null) return '<nil>';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return 'float64';
  if (typeof value === 'bigint') return 'int';
  if (typeof value === 'boolean') return 'bool';
  if (value instanceof GoMap || value instanceof GoStruct) return value.typeName;
  if (value instanceof GoHtml) return 'template.HTML';
  if (value instanceof GoTime) return '*time.Time';
  return '[]interface {}';
}

/** Go's truth for `if`, `with`, `and`, `or`, `not`: zero values and empty collections are false. */
export function isTrue(value: GoValue): boolean {
  if (value === null) return false;
  if (typeof value === 'string') return value !== '';
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'bigint') return value !== 0n;
  if (typeof value === 'boolean') return value;
  if (value instanceof GoMap) return value.entries.size > 0;
  if (value instanceof GoHtml) return value.value !== '';
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

/** `fmt.Sprint(value)` for one value: how a template prints an action's result. */
export function formatGoValue(value: GoValue): string {
  if (value === null) return '<nil>';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return formatGoFloat(value, 'g', -1);
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value instanceof GoHtml) return value.value;
  if (value instanceof GoTime) return formatGoTime(value);
  if (value instanceof GoMap) {
    const keys = [...value.entries.keys()].sort();
    return `map[${keys.map((k) => `${k}:${formatGoValue(value.entries.get(k)!)}`).join(' ')}]`;
  }
  if (value instanceof GoStruct) {
    return `{${Object.values(value.fields).map(formatGoValue).join(' ')}}`;
  }
  return `[${value.map(formatGoValue).join(' ')}]`;
}

/** `fmt.Sprint(t)` of a UTC time: `2006-01-02 15:04:05.999999999 +0000 UTC`. */
function formatGoTime(time: GoTime): string {
  const nanos = time.unixNanos;
  let seconds = nanos / 1_000_000_000n;
  let fraction = nanos % 1_000_000_000n;
  if (fraction < 0n) {
    fraction += 1_000_000_000n;
    seconds -= 1n;
  }
  const date = new Date(Number(seconds) * 1000);
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  const year = date.getUTCFullYear();
  const fractionText =
    fraction === 0n ? '' : `.${fraction.toString().padStart(9, '0').replace(/0+$/, '')}`;
  return (
    `${year < 0 ? '-' : ''}${pad(Math.abs(year), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}${fractionText} +0000 UTC`
  );
}

/**
 * Go's strconv.FormatFloat(v, fmt, prec, 64) for 'e', 'f' and 'g' (prec −1: shortest that
 * reads back), with fmt's spelling of the specials (`NaN`, `+Inf`, `-Inf`).
 */
export function formatGoFloat(value: number, verb: 'e' | 'f' | 'g', prec: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  const negative = value < 0 || Object.is(value, -0);
  const digits = decimalDigits(Math.abs(value), verb, prec);
  return (negative ? '-' : '') + layout(digits, verb, prec);
}

/** Decimal digits (no leading zeros unless zero) and the exponent of the first digit. */
type Digits = { digits: string; exp: number };

function decimalDigits(value: number, verb: 'e' | 'f' | 'g', prec: number): Digits {
  if (value === 0) {
    const count = prec < 0 ? 1 : verb === 'f' ? 1 : Math.max(verb === 'g' ? prec : prec + 1, 1);
    return { digits: '0'.repeat(count), exp: 0 };
  }
  if (prec < 0) {
    const [mantissa, exponent] = value.toExponential().split('e') as [string, string];
    return { digits: mantissa.replace('.', ''), exp: Number(exponent) };
  }
  if (verb === 'f') {
    const exact = exactDecimal(value);
    const wanted = exact.exp + 1 + prec;
    if (wanted <= 0) {
      // Rounds to zero or to one unit in the last place.
      const roundsUp = wanted === 0 && roundsAwayAt(exact.digits, 0);
      return roundsUp ? { digits: '1', exp: -prec } : { digits: '0', exp: 0 };
    }
    return roundDigits(exact, wanted);
  }
  const significant = verb === 'g' ? Math.max(prec, 1) : prec + 1;
  return roundDigits(exactDecimal(value), significant);
}

/** The exact decimal expansion of a double (JS prints up to 100 exact digits). */
function exactDecimal(value: number): Digits {
  // Past 2^53 every double is an integer, whose digits a bigint writes exactly, all of them.
  if (value >= 2 ** 53) {
    const digits = BigInt(value).toString();
    return { digits: digits.replace(/0+$/, ''), exp: digits.length - 1 };
  }
  const [mantissa, exponent] = value.toExponential(99).split('e') as [string, string];
  return { digits: mantissa.replace('.', '').replace(/0+$/, '') || '0', exp: Number(exponent) };
}

/** Whether digits from `at` on round the kept part away from zero (half to even, as Go). */
function roundsAwayAt(digits: string, at: number): boolean {
  const first = digits[at];
  if (first === undefined || first < '5') return false;
  if (first > '5') return true;
  if (/[1-9]/.test(digits.slice(at + 1))) return true;
  const previous = at > 0 ? Number(digits[at - 1]) : 0;
  return previous % 2 === 1;
}

function roundDigits(exact: Digits, count: number): Digits {
  if (exact.digits.length <= count)
    return { digits: exact.digits.padEnd(count, '0'), exp: exact.exp };
  let kept = exact.digits.slice(0, count);
  let exp = exact.exp;
  if (roundsAwayAt(exact.digits, count)) {
    const incremented = (BigInt(kept) + 1n).toString().padStart(count, '0');
    if (incremented.length > count) {
      kept = incremented.slice(0, count);
      exp++;
    } else {
      kept = incremented;
    }
  }
  return { digits: kept, exp };
}

function layout({ digits, exp }: Digits, verb: 'e' | 'f' | 'g', prec: number): string {
  if (verb === 'e') return layoutE(digits, exp);
  if (verb === 'f') return layoutF(digits, exp, prec);
  // %g (strconv's rule): exponent form when the exponent is < −4 or ≥ the precision, which is
  // 6 when shortest; never trailing zeros.
  const trimmed = digits.replace(/0+$/, '') || '0';
  const nd = trimmed.length;
  const dp = exp + 1;
  const p = prec < 0 ? nd : Math.max(prec, 1);
  let eprec = p;
  if (eprec > nd && nd >= dp) eprec = nd;
  if (prec < 0) eprec = 6;
  if (exp < -4 || exp >= eprec) return layoutE(trimmed.slice(0, Math.min(p, nd)), exp);
  return layoutF(trimmed, exp, Math.max((p > dp ? nd : p) - dp, 0));
}

function layoutE(digits: string, exp: number): string {
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const sign = exp < 0 ? '-' : '+';
  return `${mantissa}e${sign}${String(Math.abs(exp)).padStart(2, '0')}`;
}

function layoutF(digits: string, exp: number, prec: number): string {
  let whole: string;
  let fraction: string;
  if (exp >= 0) {
    whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
    fraction = digits.slice(exp + 1);
  } else {
    whole = '0';
    fraction = '0'.repeat(-exp - 1) + digits;
  }
  fraction = fraction.slice(0, prec).padEnd(prec, '0');
  return prec > 0 ? `${whole}.${fraction}` : whole;
}
