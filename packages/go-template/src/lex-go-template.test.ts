import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lexGoTemplate } from './lex-go-template.js';

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

describe('lexGoTemplate', () => {
  it('lexes text, trim markers, comments and the tokens of an action, counting lines', () => {
    const tokens = lexGoTemplate('a \n{{- /* c */ -}}\n b{{ $x := .F.G | printf "%d" (len 1.5) }}');
    expect(tokens.map(({ type, value, line }) => [type, value, line])).toEqual([
      ['text', 'a', 1],
      ['leftDelim', '{{', 2],
      ['comment', '/* c */', 2],
      ['rightDelim', '}}', 2],
      ['text', 'b', 3],
      ['leftDelim', '{{', 3],
      ['space', ' ', 3],
      ['variable', '$x', 3],
      ['space', ' ', 3],
      ['declare', ':=', 3],
      ['space', ' ', 3],
      ['field', '.F', 3],
      ['field', '.G', 3],
      ['space', ' ', 3],
      ['pipe', '|', 3],
      ['space', ' ', 3],
      ['identifier', 'printf', 3],
      ['space', ' ', 3],
      ['string', '"%d"', 3],
      ['space', ' ', 3],
      ['leftParen', '(', 3],
      ['identifier', 'len', 3],
      ['space', ' ', 3],
      ['number', '1.5', 3],
      ['rightParen', ')', 3],
      ['space', ' ', 3],
      ['rightDelim', '}}', 3],
      ['eof', '', 3],
    ]);
  });

  it('ends with Go’s message on an action it cannot lex', () => {
    for (const [text, message] of [
      ['{{ /* x', 'unclosed action'],
      ['{{/* x', 'unclosed comment'],
      ['{{ (1 }}', 'unclosed left paren'],
      ['{{ 1) }}', 'unexpected right paren'],
      ['{{ 1x }}', 'bad number syntax: "1x"'],
      ['{{ a# }}', "bad character U+0023 '#'"],
      ['{{ € }}', "unrecognized character in action: U+20AC '€'"],
      ['{{ a', 'unclosed action'],
    ]) {
      expect(lexGoTemplate(text!).at(-1)).toMatchObject({ type: 'error', value: message });
    }
  });
});
