import { describe, expect, it } from 'vitest';
import { unquoteGoString } from './go-string-literal.js';

describe('unquoteGoString', () => {
  it("reads Go's escapes in an interpreted string and none in a raw one", () => {
    expect(unquoteGoString('"a\\tb\\n\\x41\\u00e9\\U0001F600\\101\\"\\\\"')).toBe('a\tb\nAé😀A"\\');
    expect(unquoteGoString('`a\\tb`')).toBe('a\\tb');
  });

  it('refuses what strconv.Unquote refuses', () => {
    expect(() => unquoteGoString('"a')).toThrow('unterminated quoted string');
    expect(() => unquoteGoString('"\\\'"')).toThrow('invalid syntax');
    expect(() => unquoteGoString('"\\x4"')).toThrow('invalid syntax');
    expect(() => unquoteGoString('"a"b"')).toThrow('invalid syntax');
  });
});
