import { unquoteGoString } from './go-string-literal.js';
import type { Token, TokenType } from './template-scanner.js';
import type { TemplateNode } from './template-nodes.js';

/** A template that Go's parser refuses; the message is Go's (`template: NAME:LINE: …`). */
export class TemplateParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateParseError';
  }
}

/**
 * Where a parse is: a cursor over the tokens, the variables in scope, how deep in `range` it
 * is (for `{{break}}`), the definitions found, and Go's error messages, which name the line
 * they were found on.
 */
export type ParseState = {
  readonly functions: ReadonlySet<string>;
  /** The bodies `define`d (or `block`ed) so far, by name. */
  readonly definitions: Map<string, TemplateNode[]>;
  /** The next token's index. */
  index: number;
  /** Variables in scope, innermost last. */
  vars: string[];
  rangeDepth: number;
  /** The line of the action being parsed (0 outside one), for a lexing error's message. */
  actionLine: number;
  next(): Token;
  backup(): void;
  peek(): Token;
  nextNonSpace(): Token;
  peekNonSpace(): Token;
  fail(message: string, line?: number): never;
  unexpected(token: Token, context: string): never;
  expect(type: TokenType, context: string): Token;
  /** A string token's value, or Go's `invalid syntax` error. */
  unquote(token: Token): string;
};

export function createParseState(
  name: string,
  tokens: readonly Token[],
  functions: ReadonlySet<string>,
): ParseState {
  const describe = (token: Token): string => {
    if (token.type === 'eof') return 'EOF';
    if (token.type === 'error') return token.value;
    if (token.type === 'keyword') return `<${token.value}>`;
    if (token.value.length > 10) return `${JSON.stringify(token.value.slice(0, 10))}...`;
    return JSON.stringify(token.value);
  };
  const state: ParseState = {
    functions,
    definitions: new Map(),
    index: 0,
    vars: ['$'],
    rangeDepth: 0,
    actionLine: 0,
    next: () => tokens[Math.min(state.index++, tokens.length - 1)]!,
    backup() {
      state.index--;
    },
    peek: () => tokens[Math.min(state.index, tokens.length - 1)]!,
    nextNonSpace() {
      let token = state.next();
      while (token.type === 'space') token = state.next();
      return token;
    },
    peekNonSpace() {
      const token = state.nextNonSpace();
      state.backup();
      return token;
    },
    fail(message, line = tokens[Math.max(0, state.index - 1)]?.line ?? 1) {
      throw new TemplateParseError(`template: ${name}:${line}: ${message}`);
    },
    unexpected(token, context) {
      if (token.type === 'error') {
        const extra =
          state.actionLine !== 0 && state.actionLine !== token.line
            ? ` in action started at ${name}:${state.actionLine}`
            : '';
        return state.fail(`${token.value}${extra}`, token.line);
      }
      return state.fail(`unexpected ${describe(token)} in ${context}`, token.line);
    },
    expect(type, context) {
      const token = state.nextNonSpace();
      if (token.type !== type) state.unexpected(token, context);
      return token;
    },
    unquote(token) {
      try {
        return unquoteGoString(token.value);
      } catch {
        return state.fail(`invalid syntax: ${token.value}`, token.line);
      }
    },
  };
  return state;
}
