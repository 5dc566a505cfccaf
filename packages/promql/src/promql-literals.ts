/**
 * Go string literals as PromQL writes them: "…" and '…' with Go's escapes, `…` raw.
 * Throws an Error with the reason on a malformed literal. Prometheus reads them with its own copy
 * of Go's strconv.Unquote (util/strutil) that adds the single quotes; go-template keeps Go's own.
 * Both libraries sit on the lowest floor, so neither imports the other:
 * promql-literals.test.ts checks the two read every literal alike.
 */
export function unquotePromqlString(literal: string): string {
  const quote = literal[0];
  if (literal.length < 2 || literal[literal.length - 1] !== quote) {
    throw new Error('unterminated quoted string');
  }
  const body = literal.slice(1, -1);
  if (quote === '`') return body;
  if (quote !== '"' && quote !== "'") throw new Error('invalid quoted string');
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      if (c === quote) throw new Error('invalid syntax');
      out += c;
      continue;
    }
    const e = body[++i];
    switch (e) {
      case 'a':
        out += '\x07';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\v';
        break;
      case '\\':
        out += '\\';
        break;
      case "'":
      case '"':
        if (e !== quote) throw new Error('invalid syntax');
        out += e;
        break;
      case 'x':
      case 'u':
      case 'U': {
        const size = e === 'x' ? 2 : e === 'u' ? 4 : 8;
        const hex = body.slice(i + 1, i + 1 + size);
        if (!new RegExp(`^[0-9a-fA-F]{${size}}$`).test(hex)) throw new Error('invalid syntax');
        out += String.fromCodePoint(parseInt(hex, 16));
        i += size;
        break;
      }
      default: {
        const octal = body.slice(i, i + 3);
        if (!/^[0-7]{3}$/.test(octal)) throw new Error('invalid syntax');
        out += String.fromCharCode(parseInt(octal, 8));
        i += 2;
      }
    }
  }
  return out;
}

const durationUnitsMs: [string, number][] = [
  ['y', 365 * 24 * 3600 * 1000],
  ['w', 7 * 24 * 3600 * 1000],
  ['d', 24 * 3600 * 1000],
  ['h', 3600 * 1000],
  ['m', 60 * 1000],
  ['s', 1000],
  ['ms', 1],
];

const durationPattern =
  /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;

/** A Prometheus duration (`1h30m`, `5m`, `90s`, units in order) in ms; throws on bad input. */
export function parseDurationMs(text: string): number {
  const match = durationPattern.exec(text);
  if (text === '' || match === null) throw new Error(`not a valid duration string: "${text}"`);
  let total = 0;
  for (let i = 0; i < durationUnitsMs.length; i++) {
    const count = match[i + 1];
    if (count !== undefined) total += Number(count) * durationUnitsMs[i]![1];
  }
  return total;
}

/**
 * A number literal as Prometheus' parser reads it: Go's `ParseInt(s, 0, 64)` first (decimal,
 * 0x hex, 0 octal), then `ParseFloat` (which also takes Inf and NaN, any case).
 */
export function parsePromqlNumber(text: string): number {
  if (/^0[xX][0-9a-fA-F]+$/.test(text)) return parseInt(text.slice(2), 16);
  if (/^0[0-7]+$/.test(text)) return parseInt(text.slice(1), 8);
  if (/^[+-]?inf(inity)?$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(text)) return NaN;
  if (/^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return Number(text);
  throw new Error(`error parsing number: ${text}`);
}
