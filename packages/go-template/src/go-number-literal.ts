/** A Go number literal's value (decimal, 0x, 0o, 0b, legacy octal, `_` separators), or null. */
export function parseGoNumberLiteral(literal: string): number | null {
  const negative = literal.startsWith('-');
  const body = literal.replace(/^[+-]/, '');
  if (/(^_|_$|__)/.test(body.replace(/^0[xXoObB]/, ''))) return null;
  const text = body.replace(/_/g, '');
  let value: number;
  if (/^0[xX][0-9a-fA-F]+$/.test(text)) value = parseInt(text.slice(2), 16);
  else if (/^0[oO][0-7]+$/.test(text)) value = parseInt(text.slice(2), 8);
  else if (/^0[bB][01]+$/.test(text)) value = parseInt(text.slice(2), 2);
  else if (/^0[0-7]+$/.test(text)) value = parseInt(text.slice(1), 8);
  else if (/^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) value = Number(text);
  else if (/^0[xX]([0-9a-fA-F]*\.?[0-9a-fA-F]*)[pP][+-]?\d+$/.test(text)) {
    const [mantissa, exponent] = text.slice(2).split(/[pP]/) as [string, string];
    const [whole, fraction = ''] = mantissa.split('.');
    value =
      (parseInt(`${whole}${fraction}` || '0', 16) / 16 ** fraction.length) * 2 ** Number(exponent);
  } else return null;
  return negative ? -value : value;
}
