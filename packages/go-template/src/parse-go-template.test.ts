import { describe, expect, it } from 'vitest';
import { builtinFunctionNames } from './builtin-functions.js';
import { parseGoTemplate } from './parse-go-template.js';
import { TemplateParseError } from './parse-state.js';

const functions = new Set(builtinFunctionNames);
const parse = (text: string) => parseGoTemplate('t', text, functions);

describe('parseGoTemplate', () => {
  it('parses text, actions, control structures and definitions', () => {
    const parsed = parse(
      'a{{ $x := 1 }}{{ if $x }}b{{ else if not $x }}c{{ end }}{{ define "d" }}e{{ end }}',
    );
    expect(parsed.root.map((node) => node.kind)).toEqual(['text', 'action', 'if']);
    expect([...parsed.definitions.keys()]).toEqual(['d']);
  });

  it.each([
    ['{{ nope }}', 'template: t:1: function "nope" not defined'],
    ['{{ $x }}', 'template: t:1: undefined variable "$x"'],
    ['{{ if 1 }}', 'template: t:1: unexpected EOF'],
    ['\n{{ end }}', 'template: t:2: unexpected {{end}}'],
    ['{{ break }}', 'template: t:1: {{break}} outside {{range}}'],
    ['{{ 1 | 2 }}', 'template: t:1: non executable command in pipeline stage 2'],
    ['{{ "a\\q" }}', 'template: t:1: invalid syntax: "a\\q"'],
    ['{{ 0x }}', 'template: t:1: illegal number syntax: "0x"'],
    ['{{ if $x := 1 }}{{ end }}{{ $x }}', 'template: t:1: undefined variable "$x"'],
  ])('refuses %j as Go does', (text, message) => {
    expect(() => parse(text)).toThrow(new TemplateParseError(message));
  });
});
