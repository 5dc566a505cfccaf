import { describe, expect, it } from 'vitest';
import { copyTextField } from './copy-text.js';

describe('copyTextField', () => {
  it('returns plain text as it is', () => {
    expect(copyTextField('cpu_usage')).toBe('cpu_usage');
  });

  it('escapes backslash, tab, newline and carriage return', () => {
    expect(copyTextField('a\\b\tc\nd\re')).toBe('a\\\\b\\tc\\nd\\re');
  });

  it('doubles the backslashes of JSON text', () => {
    expect(copyTextField(JSON.stringify({ name: 'a\t"b"' }))).toBe('{"name":"a\\\\t\\\\"b\\\\""}');
  });
});
