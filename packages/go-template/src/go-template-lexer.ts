/**
 * The tokens of Go's text/template (Go 1.19, what Prometheus 2.42 is built with), lexed as its
 * lex.go does: text, `{{`/`}}` with the `{{- ` / ` -}}` trim markers, comments, and inside
 * actions identifiers, keywords, fields, variables, literals and punctuation. A lexing error is
 * the last token, of type `error`, with Go's message.
 */
export type TokenType =
  | 'text'
  | 'leftDelim'
  | 'rightDelim'
  | 'comment'
  | 'space'
  | 'identifier'
  | 'keyword'
  | 'bool'
  | 'nil'
  | 'dot'
  | 'field'
  | 'variable'
  | 'string'
  | 'rawString'
  | 'charConstant'
  | 'number'
  | 'declare'
  | 'assign'
  | 'pipe'
  | 'char'
  | 'leftParen'
  | 'rightParen'
  | 'eof'
  | 'error';

export type Token = { type: TokenType; value: string; pos: number; line: number };

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

const isSpace = (c: string | undefined): boolean =>
  c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isAlphaNumeric = (c: string | undefined): boolean =>
  c !== undefined && (c === '_' || /[\p{L}\p{Nd}]/u.test(c));

/** Every token of `text`, ending in `eof` or `error`. */
export function lexGoTemplate(text: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  let line = 1;
  const emit = (type: TokenType, start: number, value: string): void => {
    tokens.push({ type, value, pos: start, line });
    for (const c of value) if (c === '\n') line++;
  };
  const fail = (message: string): Token[] => {
    tokens.push({ type: 'error', value: message, pos, line });
    return tokens;
  };

  while (pos < text.length) {
    const open = text.indexOf('{{', pos);
    if (open === -1) {
      emit('text', pos, text.slice(pos));
      pos = text.length;
      break;
    }
    let textEnd = open;
    const trimLeft = text[open + 2] === '-' && isSpace(text[open + 3]);
    if (trimLeft) while (textEnd > pos && isSpace(text[textEnd - 1])) textEnd--;
    if (textEnd > pos) emit('text', pos, text.slice(pos, textEnd));
    // The trimmed space still counts for line numbers.
    for (const c of text.slice(textEnd, open)) if (c === '\n') line++;
    pos = open;
    emit('leftDelim', pos, '{{');
    pos += 2;
    if (trimLeft) pos += 2;
    // A comment is the whole action: `{{/* … */}}`.
    if (text.startsWith('/*', pos)) {
      const close = text.indexOf('*/', pos + 2);
      if (close === -1) return fail('unclosed comment');
      const comment = text.slice(pos, close + 2);
      emit('comment', pos, comment);
      pos = close + 2;
      const trimRight =
        text.startsWith(' -}}', pos) || (isSpace(text[pos]) && text.startsWith('-}}', pos + 1));
      if (!text.startsWith('}}', pos) && !trimRight) {
        return fail('comment ends before closing delimiter');
      }
      if (trimRight) pos++;
      pos = closeDelim(trimRight);
      continue;
    }
    let parenDepth = 0;
    for (;;) {
      if (text.startsWith('}}', pos) || (isSpace(text[pos]) && text.startsWith('-}}', pos + 1))) {
        const trimRight = !text.startsWith('}}', pos);
        if (trimRight) pos++;
        if (parenDepth > 0) return fail('unclosed left paren');
        pos = closeDelim(trimRight);
        break;
      }
      const c = text[pos];
      if (c === undefined) return fail('unclosed action');
      const start = pos;
      if (isSpace(c)) {
        while (isSpace(text[pos]) && !text.startsWith('-}}', pos + 1)) pos++;
        emit('space', start, text.slice(start, pos));
      } else if (c === ':') {
        if (text[pos + 1] !== '=') return fail('expected :=');
        pos += 2;
        emit('declare', start, ':=');
      } else if (c === '=') {
        pos++;
        emit('assign', start, '=');
      } else if (c === '|') {
        pos++;
        emit('pipe', start, '|');
      } else if (c === '"') {
        const error = lexQuoted('"', 'unterminated quoted string');
        if (error !== null) return fail(error);
        emit('string', start, text.slice(start, pos));
      } else if (c === '`') {
        const close = text.indexOf('`', pos + 1);
        if (close === -1) return fail('unterminated raw quoted string');
        pos = close + 1;
        emit('rawString', start, text.slice(start, pos));
      } else if (c === "'") {
        const error = lexQuoted("'", 'unterminated character constant');
        if (error !== null) return fail(error);
        emit('charConstant', start, text.slice(start, pos));
      } else if (c === '$') {
        pos++;
        while (isAlphaNumeric(text[pos])) pos++;
        if (!isTerminator(text[pos], pos)) return fail(`bad character ${goQuoteRune(text[pos]!)}`);
        emit('variable', start, text.slice(start, pos));
      } else if (c === '.') {
        const next = text[pos + 1];
        if (next !== undefined && next >= '0' && next <= '9') {
          const error = lexNumber();
          if (error !== null) return fail(error);
        } else {
          pos++;
          while (isAlphaNumeric(text[pos])) pos++;
          if (!isTerminator(text[pos], pos)) {
            return fail(`bad character ${goQuoteRune(text[pos]!)}`);
          }
          emit(pos === start + 1 ? 'dot' : 'field', start, text.slice(start, pos));
        }
      } else if (c === '+' || c === '-' || (c >= '0' && c <= '9')) {
        const error = lexNumber();
        if (error !== null) return fail(error);
      } else if (isAlphaNumeric(c)) {
        while (isAlphaNumeric(text[pos])) pos++;
        const word = text.slice(start, pos);
        const after = text[pos];
        if (!isTerminator(after, pos)) return fail(`bad character ${goQuoteRune(after ?? '')}`);
        if (keywords.has(word)) emit('keyword', start, word);
        else if (word === 'true' || word === 'false') emit('bool', start, word);
        else if (word === 'nil') emit('nil', start, word);
        else emit('identifier', start, word);
      } else if (c === '(') {
        pos++;
        parenDepth++;
        emit('leftParen', start, c);
      } else if (c === ')') {
        pos++;
        parenDepth--;
        if (parenDepth < 0) return fail('unexpected right paren');
        emit('rightParen', start, c);
      } else if (c.charCodeAt(0) <= 0x7f && /[!-~]/.test(c)) {
        pos++;
        emit('char', start, c);
      } else {
        return fail(`unrecognized character in action: ${goQuoteRune(c)}`);
      }
    }
  }
  tokens.push({ type: 'eof', value: '', pos, line });
  return tokens;

  function closeDelim(trimRight: boolean): number {
    emit('rightDelim', pos, '}}');
    let next = pos + (trimRight ? 3 : 2);
    if (trimRight) {
      while (isSpace(text[next])) {
        if (text[next] === '\n') line++;
        next++;
      }
    }
    return next;
  }

  function isTerminator(c: string | undefined, at: number): boolean {
    if (c === undefined || isSpace(c)) return true;
    if (text.startsWith('}}', at)) return true;
    return c === '.' || c === ',' || c === '|' || c === ':' || c === ')' || c === '(';
  }

  /** Go's scanNumber: a superset of numbers; the parser decides what it means. */
  /** From an opening quote past its closing one, as Go's lexQuote and lexChar: a backslash
   * escapes the next character, and a newline or the end of the text ends it unterminated. */
  function lexQuoted(quote: '"' | "'", unterminated: string): string | null {
    pos++;
    for (;;) {
      const d = text[pos];
      if (d === '\\') {
        pos++;
        if (text[pos] === undefined || text[pos] === '\n') return unterminated;
      } else if (d === undefined || d === '\n') {
        return unterminated;
      } else if (d === quote) {
        break;
      }
      pos++;
    }
    pos++;
    return null;
  }

  function lexNumber(): string | null {
    const start = pos;
    if (text[pos] === '+' || text[pos] === '-') pos++;
    let digits = '0123456789_';
    if (text[pos] === '0' && /[xXoObB]/.test(text[pos + 1] ?? '')) {
      const base = text[pos + 1]!.toLowerCase();
      pos += 2;
      digits = base === 'x' ? '0123456789abcdefABCDEF_' : base === 'o' ? '01234567_' : '01_';
    }
    const run = (set: string): void => {
      while (text[pos] !== undefined && set.includes(text[pos]!)) pos++;
    };
    run(digits);
    if (text[pos] === '.') {
      pos++;
      run(digits);
    }
    if (digits.length > 11 && /[pP]/.test(text[pos] ?? '')) {
      pos++;
      if (text[pos] === '+' || text[pos] === '-') pos++;
      run('0123456789_');
    } else if (digits.length === 11 && /[eE]/.test(text[pos] ?? '')) {
      pos++;
      if (text[pos] === '+' || text[pos] === '-') pos++;
      run('0123456789_');
    }
    if (text[pos] === 'i') pos++;
    if (isAlphaNumeric(text[pos])) {
      pos++;
      return `bad number syntax: "${text.slice(start, pos)}"`;
    }
    emit('number', start, text.slice(start, pos));
    return null;
  }
}

/** A rune as Go's %#U would not, but as its lexer's %#U errors read closely enough: `U+0023 '#'`. */
function goQuoteRune(c: string): string {
  const code = c.codePointAt(0) ?? 0;
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')} '${c}'`;
}
