/** POSIX classes RE2 accepts inside brackets, as JavaScript ranges. */
const posixClasses: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/**
 * A Go (RE2) regular expression as Prometheus compiles it for a matcher or label_replace:
 * `^(?:re)$`; unanchored (as Go's regexp.Compile leaves it) when `anchored` is false. RE2's syntax is mostly JavaScript's; the differences handled are leading flag
 * groups (`(?i)`, `(?s)`, `(?is)`), POSIX bracket classes, named groups `(?P<name>…)`, `\z`
 * and `\A`. RE2 has no
 * backreferences or lookaround: they are refused as RE2 refuses them.
 */
export function compileRe2Regexp(source: string, anchored = true): RegExp {
  let body = source;
  let flags = '';
  const leading = /^\(\?([imsU]+)\)/.exec(body);
  if (leading !== null) {
    const given = leading[1]!;
    if (given.includes('U')) throw new Error('the U flag is not supported');
    if (given.includes('i')) flags += 'i';
    if (given.includes('s')) flags += 's';
    if (given.includes('m')) flags += 'm';
    body = body.slice(leading[0].length);
  }
  if (/\\[1-9]|\(\?[=!<]/.test(body)) throw new Error('invalid or unsupported Perl syntax');
  body = body
    .replace(/\[:(\^?)([a-z]+):\]/g, (whole, negated: string, name: string) => {
      const range = posixClasses[name];
      if (range === undefined) throw new Error(`invalid character class range: ${whole}`);
      if (negated !== '') throw new Error('negated POSIX classes are not supported');
      return range;
    })
    .replace(/\(\?P</g, '(?<')
    .replace(/\\z/g, '$')
    .replace(/\\A/g, '^');
  return new RegExp(anchored ? `^(?:${body})$` : body, flags);
}
