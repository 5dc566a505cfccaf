import { describe, expect, it } from 'vitest';
import { builtinFunctionNames, builtinFunctions } from './builtin-functions.js';
import { executeGoTemplate } from './execute-go-template.js';
import type { GoValue } from './go-values.js';
import { GoStruct, stringMap } from './go-values.js';
import { parseGoTemplate } from './parse-go-template.js';

const data = new GoStruct(
  {
    Labels: stringMap({ job: 'node', instance: 'db-1' }),
    Values: [1n, 2n, 3n],
    Empty: [],
    Value: 2.5,
  },
  'struct { Labels map[string]string; Values []int; Empty []int; Value float64 }',
);

function run(text: string, dot: GoValue = data): Promise<string> {
  const template = parseGoTemplate('t', text, new Set(builtinFunctionNames));
  return executeGoTemplate('t', template, dot, builtinFunctions());
}

describe('executeGoTemplate', () => {
  it('prints fields, map keys in order, and a missing key as its zero value', async () => {
    expect(await run('{{ .Labels.job }}|{{ .Labels.nope }}|{{ .Value }}')).toBe('node||2.5');
    expect(await run('{{ range $k, $v := .Labels }}{{ $k }}={{ $v }} {{ end }}')).toBe(
      'instance=db-1 job=node ',
    );
  });

  it('ranges with break, continue and else', async () => {
    expect(
      await run(
        '{{ range .Values }}{{ if eq . 2 }}{{ continue }}{{ end }}{{ . }}{{ if eq . 3 }}{{ break }}{{ end }}{{ end }}',
      ),
    ).toBe('13');
    expect(await run('{{ range .Empty }}x{{ else }}empty{{ end }}')).toBe('empty');
  });

  it('evaluates and/or only as far as needed and returns the deciding operand', async () => {
    expect(await run('{{ or "" "b" (index .Values 9) }}')).toBe('b');
    expect(await run('{{ and 1 0 (index .Values 9) }}')).toBe('0');
  });

  it('runs the builtins: comparisons, len, index, slice, printf, escapes', async () => {
    expect(await run('{{ lt 1 2 }} {{ ge 2.5 .Value }} {{ ne "a" "b" }}')).toBe('true true true');
    expect(await run('{{ len .Values }} {{ index .Values 1 }} {{ slice "hello" 1 3 }}')).toBe(
      '3 2 el',
    );
    expect(await run('{{ printf "%05.1f|%q|%d" .Value "x" 42 }}')).toBe('002.5|"x"|42');
    expect(await run('{{ html "<a&b>" }} {{ urlquery "a b&c" }} {{ js "it\'s" }}')).toBe(
      "&lt;a&amp;b&gt; a+b%26c it\\'s",
    );
  });

  it('runs defined templates with their own dot', async () => {
    expect(await run('{{ define "x" }}<{{ . }}>{{ end }}{{ template "x" .Labels.job }}')).toBe(
      '<node>',
    );
  });

  it('fails as Go does, naming the line, the byte and the node it ran', async () => {
    await expect(run('a\n {{ index .Values 5 }}')).rejects.toThrow(
      'template: t:2:4: executing "t" at <index .Values 5>: error calling index: index out of range: 5',
    );
    await expect(run('{{ lt 1 2.5 }}')).rejects.toThrow(
      'error calling lt: incompatible types for comparison',
    );
    await expect(run('{{ .Value.Field }}')).rejects.toThrow(
      "can't evaluate field Field in type float64",
    );
  });
});
