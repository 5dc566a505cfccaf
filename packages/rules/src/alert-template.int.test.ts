import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPromtool } from '@monitor/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { expandAlertTemplate } from './alert-template.js';

const dir = mkdtempSync(join(tmpdir(), 'alert-templates-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Sample values as promtool's series notation writes them, and as numbers. */
const values: [string, number][] = [
  ['0', 0],
  ['1', 1],
  ['-1', -1],
  ['0.5', 0.5],
  ['-0.25', -0.25],
  ['999.95', 999.95],
  ['1234567.5', 1234567.5],
  ['123456789012', 123456789012],
  ['1e21', 1e21],
  ['1e300', 1e300],
  ['0.000123', 0.000123],
  ['1e-9', 1e-9],
  ['1.5e-25', 1.5e-25],
  ['2.5e-30', 2.5e-30],
  ['1023', 1023],
  ['1048576', 1048576],
  ['3661.5', 3661.5],
  ['262800', 262800],
  ['-90061', -90061],
  ['0.0015', 0.0015],
  ['1700000000.123', 1700000000.123],
  ['12345', 12345],
  ['NaN', NaN],
  ['Inf', Infinity],
  ['-Inf', -Infinity],
];

/** Templates as people write them, over every function that renders without a query. */
const templates = [
  '{{ $value }}',
  '{{ $value | humanize }}',
  '{{ humanize1024 $value }}',
  '{{ humanizeDuration $value }}',
  '{{ humanizePercentage $value }}',
  '{{ if and (lt $value 1e15) (gt $value -1e15) }}{{ humanizeTimestamp $value }}{{ end }}',
  '{{ printf "%.2f" $value }}',
  '{{ printf "%g|%e|%v|%8.3f|%-6.1f|%+.0f" $value $value $value $value $value $value }}',
  '{{ printf "%d %s %q %x %5s|%-5s|%t" 42 "s" "q" "hi" "r" "l" true }}',
  '{{ $labels.instance }} of {{ $labels.job }} is {{ $value }}',
  '{{ $labels.instance | stripPort }} {{ stripDomain $labels.instance }} {{ stripDomain "10.0.0.1:80" }}',
  '{{ reReplaceAll "^([^.]+)\\\\..*$" "$1" $labels.instance }} {{ reReplaceAll "(?P<h>[a-z]+)" "<${h}>" "ab-cd" }}',
  '{{ if match "^db-[0-9]" $labels.instance }}database{{ else }}other{{ end }}',
  '{{ title "disk is full" }} {{ toUpper $labels.job }} {{ toLower "MiXeD" }}',
  '{{ if gt $value 100.0 }}high{{ else if gt $value 0.0 }}low{{ else }}none{{ end }}',
  '{{ if eq $labels.job "node" }}n{{ end }}{{ if ne $value 1.0 }}!{{ end }}{{ if le $value 1.0 }}le{{ end }}{{ if ge $value 1.0 }}ge{{ end }}',
  '{{ range $k, $v := $labels }}{{ $k }}={{ $v }};{{ end }}',
  '{{ range $i, $v := $labels }}{{ if eq $i "job" }}{{ break }}{{ end }}{{ $i }} {{ end }}',
  '{{ with $labels.missing }}has{{ else }}missing{{ end }} [{{ $labels.missing }}]',
  '{{ $labels.__name__ }} {{ $x := "a" }}{{ if true }}{{ $x = "b" }}{{ end }}{{ $x }}',
  '{{- " trimmed " -}}   | {{ len $labels }} {{ index $labels "job" }} {{ slice "abcdef" 1 3 }}',
  '{{ print 1 2 "a" "b" 3.5 }}|{{ println "x" 1 }}|{{ html "<a href=\'x\'>" }}|{{ js "it\'s \\"q\\"" }}|{{ urlquery "a b&c" }}',
  '{{ graphLink "rate(x[5m]) > 0" }} {{ tableLink "up" }}',
  '{{ parseDuration "1h30m" }} {{ parseDuration "90s" | humanizeDuration }}',
  "{{ 1e6 }} {{ 0.1 }} {{ 1 }} {{ -7 }} {{ 0x1F }} {{ 'a' }} {{ 1_000 }} {{ 2.5e-7 }}",
  '{{ define "sev" }}[{{ . }}]{{ end }}{{ template "sev" $labels.job }}{{ block "b" $value }}({{ . | humanize }}){{ end }}',
  '{{ not true }} {{ and 1 0 }} {{ or 0 "" "x" }} {{ and "a" "b" }}',
  '{{ $labels }}',
  '{{/* a comment */}}text {{- /* trimmed */ -}} more',
  'plain text with {braces} and $value',
  // Errors, which Prometheus writes into the annotation with Go's position and node.
  '{{ humanize "not a number" }}',
  'x\n  {{ .Nope }}',
  '{{ if gt $value 1 }}int{{ end }}',
  '{{ title 5 }}',
  '{{ $labels.job | printf "%s" | humanizeDuration }}',
];

const labels = { instance: 'db-1.example.com:9100', job: 'node' };

function quoted(text: string): string {
  return JSON.stringify(text);
}

/**
 * A rule file with one alert per template over `v`, and a promtool unit test expecting, for
 * every series (one per value), the annotations and labels we render.
 */
async function ruleTest(corrupt: boolean): Promise<{ rules: string; test: string }> {
  const ruleLines = ['groups:', '- name: templates', '  rules:'];
  const testLines = [
    'rule_files: [rules.yml]',
    'evaluation_interval: 1m',
    'tests:',
    '- interval: 1m',
    '  input_series:',
    ...values.flatMap(([text], i) => [
      `  - series: 'v{case="${i}", instance="${labels.instance}", job="${labels.job}"}'`,
      `    values: '${text}'`,
    ]),
    '  alert_rule_test:',
  ];
  const labelTemplate = '{{ if gt $value 1.0 }}big{{ end }}';
  for (const [t, template] of templates.entries()) {
    const alert = `T${t}`;
    ruleLines.push(
      `  - alert: ${alert}`,
      '    expr: v',
      `    labels: {size: ${quoted(labelTemplate)}}`,
      `    annotations: {a: ${quoted(template)}}`,
    );
    testLines.push('  - eval_time: 0m', `    alertname: ${alert}`, '    exp_alerts:');
    for (const [i, [, value]] of values.entries()) {
      const data = {
        labels: { __name__: 'v', ...labels, case: String(i) },
        externalLabels: {},
        externalUrl: '',
        value,
      };
      let annotation = await expandAlertTemplate(alert, template, data);
      if (corrupt && t === 1 && i === 6) annotation += ' (wrong)';
      const size = await expandAlertTemplate(alert, labelTemplate, data);
      // Prometheus drops a label whose template renders empty.
      const sizeLabel = size === '' ? '' : `, size: ${quoted(size)}`;
      testLines.push(
        `    - exp_labels: {case: "${i}", instance: ${quoted(labels.instance)}, job: node${sizeLabel}}`,
        `      exp_annotations: {a: ${quoted(annotation)}}`,
      );
    }
  }
  return { rules: `${ruleLines.join('\n')}\n`, test: `${testLines.join('\n')}\n` };
}

async function promtoolTestRules(corrupt: boolean): Promise<{ exitCode: number; output: string }> {
  const { rules, test } = await ruleTest(corrupt);
  writeFileSync(join(dir, 'rules.yml'), rules);
  writeFileSync(join(dir, 'test.yml'), test);
  const result = await runPromtool(['test', 'rules', 'test.yml'], dir);
  return { exitCode: result.exitCode, output: `${result.stdout}${result.stderr}` };
}

describe('expandAlertTemplate against promtool test rules (Prometheus 2.42)', () => {
  it(`renders ${templates.length} templates over ${values.length} values as Prometheus does`, async () => {
    const { exitCode, output } = await promtoolTestRules(false);
    expect(output).toContain('SUCCESS');
    expect(exitCode).toBe(0);
  });

  it('is a test that fails when one rendering is wrong', async () => {
    const { exitCode, output } = await promtoolTestRules(true);
    expect(exitCode).toBe(1);
    expect(output).toContain('alertname: T1');
  });
});
