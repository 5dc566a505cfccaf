import type { Scanner } from './template-scanner.js';
import { closeDelim, isSpace } from './template-scanner.js';

const keywords = new Set([
  'block',
  'break',
  'continue',
  'define',
  'else',
  'end',
  'if',
  'range',
  'template',
  'with',
]);

const isAlphaNumeric = (c: string | undefined): boolean =>
  c !== undefined && (c === '_' || /[\p{L}\p{Nd}]/u.test(c));

/**
 * The tokens of one action, from after its `{{` through its `}}`, as Go's lexInsideAction:
 * false when the text ends it with an error (the last token, of type `error`).
 */
export function lexAction(s: Scanner): boolean {
  let parenDepth = 0;
  for (;;) {
    if (
      s.text.startsWith('}}', s.pos) ||
      (isSpace(s.text[s.pos]) && s.text.startsWith('-}}', s.pos + 1))
    ) {
      const trimRight = !s.text.startsWith('}}', s.pos);
      if (trimRight) s.pos++;
      if (parenDepth > 0) return s.fail('unclosed left paren');
      s.pos = closeDelim(s, trimRight);
      return true;
    }
    const c = s.text[s.pos];
    if (c === undefined) return s.fail('unclosed action');
    const start = s.pos;
    if (isSpace(c)) {
      while (isSpace(s.text[s.pos]) && !s.text.startsWith('-}}', s.pos + 1)) s.pos++;
      s.emit('space', start, s.text.slice(start, s.pos));
    } else if (c === ':') {
      if (s.text[s.pos + 1] !== '=') return s.fail('expected :=');
      s.pos += 2;
      s.emit('declare', start, ':=');
    } else if (c === '=') {
      s.pos++;
      s.emit('assign', start, '=');
    } else if (c === '|') {
      s.pos++;
      s.emit('pipe', start, '|');
    } else if (c === '"') {
      const error = lexQuoted(s, '"', 'unterminated quoted string');
      if (error !== null) return s.fail(error);
      s.emit('string', start, s.text.slice(start, s.pos));
    } else if (c === '`') {
      const close = s.text.indexOf('`', s.pos + 1);
      if (close === -1) return s.fail('unterminated raw quoted string');
      s.pos = close + 1;
      s.emit('rawString', start, s.text.slice(start, s.pos));
    } else if (c === "'") {
      const error = lexQuoted(s, "'", 'unterminated character constant');
      if (error !== null) return s.fail(error);
      s.emit('charConstant', start, s.text.slice(start, s.pos));
    } else if (c === '$') {
      s.pos++;
      while (isAlphaNumeric(s.text[s.pos])) s.pos++;
      if (!isTerminator(s, s.text[s.pos], s.pos))
        return s.fail(`bad character ${goQuoteRune(s.text[s.pos]!)}`);
      s.emit('variable', start, s.text.slice(start, s.pos));
    } else if (c === '.') {
      const next = s.text[s.pos + 1];
      if (next !== undefined && next >= '0' && next <= '9') {
        const error = lexNumber(s);
        if (error !== null) return s.fail(error);
      } else {
        s.pos++;
        while (isAlphaNumeric(s.text[s.pos])) s.pos++;
        if (!isTerminator(s, s.text[s.pos], s.pos)) {
          return s.fail(`bad character ${goQuoteRune(s.text[s.pos]!)}`);
        }
        s.emit(s.pos === start + 1 ? 'dot' : 'field', start, s.text.slice(start, s.pos));
      }
    } else if (c === '+' || c === '-' || (c >= '0' && c <= '9')) {
      const error = lexNumber(s);
      if (error !== null) return s.fail(error);
    } else if (isAlphaNumeric(c)) {
      while (isAlphaNumeric(s.text[s.pos])) s.pos++;
      const word = s.text.slice(start, s.pos);
      const after = s.text[s.pos];
      if (!isTerminator(s, after, s.pos))
        return s.fail(`bad character ${goQuoteRune(after ?? '')}`);
      if (keywords.has(word)) s.emit('keyword', start, word);
      else if (word === 'true' || word === 'false') s.emit('bool', start, word);
      else if (word === 'nil') s.emit('nil', start, word);
      else s.emit('identifier', start, word);
    } else if (c === '(') {
      s.pos++;
      parenDepth++;
      s.emit('leftParen', start, c);
    } else if (c === ')') {
      s.pos++;
      parenDepth--;
      if (parenDepth < 0) return s.fail('unexpected right paren');
      s.emit('rightParen', start, c);
    } else if (c.charCodeAt(0) <= 0x7f && /[!-~]/.test(c)) {
      s.pos++;
      s.emit('char', start, c);
    } else {
      return s.fail(`unrecognized character in action: ${goQuoteRune(c)}`);
    }
  }
}

function isTerminator(s: Scanner, c: string | undefined, at: number): boolean {
  if (c === undefined || isSpace(c)) return true;
  if (s.text.startsWith('}}', at)) return true;
  return c === '.' || c === ',' || c === '|' || c === ':' || c === ')' || c === '(';
}

/** From an opening quote past its closing one, as Go's lexQuote and lexChar: a backslash
 * escapes the next character, and a newline or the end of the text ends it unterminated. */
function lexQuoted(s: Scanner, quote: '"' | "'", unterminated: string): string | null {
  s.pos++;
  for (;;) {
    const d = s.text[s.pos];
    if (d === '\\') {
      s.pos++;
      if (s.text[s.pos] === undefined || s.text[s.pos] === '\n') return unterminated;
    } else if (d === undefined || d === '\n') {
      return unterminated;
    } else if (d === quote) {
      break;
    }
    s.pos++;
  }
  s.pos++;
  return null;
}

/** Go's scanNumber: a superset of numbers; the parser decides what it means. */
function lexNumber(s: Scanner): string | null {
  const start = s.pos;
  if (s.text[s.pos] === '+' || s.text[s.pos] === '-') s.pos++;
  let digits = '0123456789_';
  if (s.text[s.pos] === '0' && /[xXoObB]/.test(s.text[s.pos + 1] ?? '')) {
    const base = s.text[s.pos + 1]!.toLowerCase();
    s.pos += 2;
    digits = base === 'x' ? '0123456789abcdefABCDEF_' : base === 'o' ? '01234567_' : '01_';
  }
  const run = (set: string): void => {
    while (s.text[s.pos] !== undefined && set.includes(s.text[s.pos]!)) s.pos++;
  };
  run(digits);
  if (s.text[s.pos] === '.') {
    s.pos++;
    run(digits);
  }
  if (digits.length > 11 && /[pP]/.test(s.text[s.pos] ?? '')) {
    s.pos++;
    if (s.text[s.pos] === '+' || s.text[s.pos] === '-') s.pos++;
    run('0123456789_');
  } else if (digits.length === 11 && /[eE]/.test(s.text[s.pos] ?? '')) {
    s.pos++;
    if (s.text[s.pos] === '+' || s.text[s.pos] === '-') s.pos++;
    run('0123456789_');
  }
  if (s.text[s.pos] === 'i') s.pos++;
  if (isAlphaNumeric(s.text[s.pos])) {
    s.pos++;
    return `bad number syntax: "${s.text.slice(start, s.pos)}"`;
  }
  s.emit('number', start, s.text.slice(start, s.pos));
  return null;
}

/** A rune as Go's %#U would not, but as its lexer's %#U errors read closely enough: `U+0023 '#'`. */
function goQuoteRune(c: string): string {
  const code = c.codePointAt(0) ?? 0;
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')} '${c}'`;
}
