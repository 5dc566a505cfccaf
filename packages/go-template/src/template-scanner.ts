/** What a token is; `error` ends the tokens with Go's message as its value. */
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

/** Where a lexer is in `text`: every token so far, the offset and line of the next. */
export type Scanner = {
  readonly text: string;
  readonly tokens: Token[];
  pos: number;
  line: number;
  /** Adds a token of `value` found at `start`, counting the lines it holds. */
  emit(type: TokenType, start: number, value: string): void;
  /** Ends the tokens with an `error` token at `pos`; false, for the caller to return. */
  fail(message: string): false;
};

export function createScanner(text: string): Scanner {
  const s: Scanner = {
    text,
    tokens: [],
    pos: 0,
    line: 1,
    emit(type, start, value) {
      s.tokens.push({ type, value, pos: start, line: s.line });
      for (const c of value) if (c === '\n') s.line++;
    },
    fail(message) {
      s.tokens.push({ type: 'error', value: message, pos: s.pos, line: s.line });
      return false;
    },
  };
  return s;
}

export const isSpace = (c: string | undefined): boolean =>
  c === ' ' || c === '\t' || c === '\r' || c === '\n';

/** Emits `}}` at `s.pos`, and returns where the text after it starts (past a ` -}}`'s trim). */
export function closeDelim(s: Scanner, trimRight: boolean): number {
  s.emit('rightDelim', s.pos, '}}');
  let next = s.pos + (trimRight ? 3 : 2);
  if (trimRight) {
    while (isSpace(s.text[next])) {
      if (s.text[next] === '\n') s.line++;
      next++;
    }
  }
  return next;
}
