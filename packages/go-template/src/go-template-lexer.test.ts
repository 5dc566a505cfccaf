import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lexGoTemplate } from './go-template-lexer.js';

const actionTokens = (text: string) =>
  lexGoTemplate(text)
    .filter((token) => !['leftDelim', 'rightDelim', 'space', 'eof'].includes(token.type))
    .map(({ type, value }) => ({ type, value }));

describe('lexGoTemplate quoted strings and character constants', () => {
  it('keeps an escaped quote inside, as Go does', () => {
    expect(actionTokens('{{ "a\\"b" }}')).toEqual([{ type: 'string', value: '"a\\"b"' }]);
    expect(actionTokens("{{ '\\'' }}")).toEqual([{ type: 'charConstant', value: "'\\''" }]);
  });

  it('ends one unterminated at a newline or at the end, with Go’s message', () => {
    for (const [text, message] of [
      ['{{ "abc\n" }}', 'unterminated quoted string'],
      ['{{ "abc', 'unterminated quoted string'],
      ['{{ "abc\\', 'unterminated quoted string'],
      ["{{ 'a\n' }}", 'unterminated character constant'],
      ["{{ 'a\\", 'unterminated character constant'],
    ]) {
      expect(lexGoTemplate(text!).at(-1)).toMatchObject({ type: 'error', value: message });
    }
  });

  it('takes any string without quote, backslash or newline whole, in either quoting', () => {
    const plain = fc.string().filter((s) => !/["'\\\n]/.test(s) && !s.includes('}}'));
    fc.assert(
      fc.property(plain, (body) => {
        expect(actionTokens(`{{ "${body}" }}`)).toEqual([{ type: 'string', value: `"${body}"` }]);
        expect(actionTokens(`{{ '${body}' }}`)).toEqual([
          { type: 'charConstant', value: `'${body}'` },
        ]);
      }),
    );
  });
});
