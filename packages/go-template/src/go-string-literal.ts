/**
 * A Go string literal's value, as Go's strconv.Unquote reads a template's strings: "…" with
 * Go's escapes, `…` raw. Throws an Error with the reason on a malformed literal. promql has the
 * same reading with single quotes added (Prometheus' util/strutil copy); a test there keeps the
 * two alike, since libraries on one floor do not import each other.
 */
export function unquoteGoString(literal: string): string {
  const quote = literal[0];
  if (literal.length < 2 || literal[literal.length - 1] !== quote) {
    throw new Error('unterminated quoted string');
  }
  const body = literal.slice(1, -1);
  if (quote === '`') return body;
  if (quote !== '"') throw new Error('invalid quoted string');
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
      case '"':
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
