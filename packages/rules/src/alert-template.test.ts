import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AlertTemplateData, TemplateEnvironment } from './index.js';
import { checkAlertTemplate, expandAlertTemplate } from './index.js';

const data: AlertTemplateData = {
  labels: { instance: 'db-1.example.com:9100', job: 'node' },
  externalLabels: { dc: 'eu1' },
  externalUrl: 'https://monitor.example.com/prom',
  value: 1234567.5,
};

const expand = (text: string, value = data.value): Promise<string> =>
  expandAlertTemplate('HostDown', text, { ...data, value });

describe('expandAlertTemplate', () => {
  it("expands Prometheus' variables and functions", async () => {
    expect(await expand('{{ $labels.instance }} is {{ $value }}')).toBe(
      'db-1.example.com:9100 is 1.2345675e+06',
    );
    expect(await expand('{{ $value | humanize }}')).toBe('1.235M');
    expect(await expand('{{ humanize1024 $value }}')).toBe('1.177Mi');
    expect(await expand('{{ humanizeDuration $value }}', 3661.5)).toBe('1h 1m 1s');
    expect(await expand('{{ humanizeDuration $value }}', 0.25)).toBe('250ms');
    expect(await expand('{{ humanizePercentage $value }}', 0.1234)).toBe('12.34%');
    // 1700000000.123 is 1700000000.12299990… as a float: Go truncates to .122 as well.
    expect(await expand('{{ humanizeTimestamp $value }}', 1700000000.123)).toBe(
      '2023-11-14 22:13:20.122 +0000 UTC',
    );
    expect(await expand('{{ $externalLabels.dc }} {{ $externalURL }} {{ pathPrefix }}')).toBe(
      'eu1 https://monitor.example.com/prom /prom',
    );
    expect(
      await expand('{{ $labels.instance | stripPort }} {{ $labels.instance | stripDomain }}'),
    ).toBe('db-1.example.com db-1:9100');
    expect(await expand('{{ reReplaceAll "(.*)-(\\\\d)" "$2/$1" "db-1" }}')).toBe('1/db');
    expect(await expand('{{ title "disk full" }} {{ toUpper "a" }} {{ toLower "B" }}')).toBe(
      'Disk Full A b',
    );
    expect(await expand('{{ if match "^db" $labels.instance }}db{{ end }}')).toBe('db');
    expect(await expand('{{ graphLink "up == 0" }}')).toBe('/graph?g0.expr=up+%3D%3D+0&g0.tab=0');
    expect(await expand('{{ parseDuration "1m30s" }}')).toBe('90');
  });

  it('runs control structures, variables and printf', async () => {
    expect(
      await expand(
        '{{ if gt $value 10.0 }}big{{ else if gt $value 1.0 }}mid{{ else }}small{{ end }}',
        5,
      ),
    ).toBe('mid');
    expect(await expand('{{ range $k, $v := $labels }}{{ $k }}={{ $v }};{{ end }}')).toBe(
      'instance=db-1.example.com:9100;job=node;',
    );
    expect(await expand('{{ with $labels.nope }}x{{ else }}none{{ end }}')).toBe('none');
    expect(await expand('{{ $x := 1 }}{{ $x = 2 }}{{ $x }}')).toBe('2');
    expect(await expand('{{ printf "%.2f %s" $value "x" }}')).toBe('1234567.50 x');
    expect(await expand('{{- "a" }}  {{- "b" -}}  c')).toBe('abc');
    expect(await expand('{{ define "t" }}[{{ . }}]{{ end }}{{ template "t" $labels.job }}')).toBe(
      '[node]',
    );
  });

  it('runs queries through the function the caller passes', async () => {
    const text =
      '{{ with query "up" }}{{ . | first | label "job" }}={{ . | first | value }}{{ end }}';
    const environment: TemplateEnvironment = {
      query: (q) => Promise.resolve(q === 'up' ? [{ labels: { job: 'node' }, value: 1 }] : []),
    };
    const result = await expandAlertTemplate('A', text, data, environment);
    expect(result).toBe('node=1');
  });

  it('answers an error expanding the template rather than throwing', async () => {
    expect(await expand('{{ .Nope }}')).toMatch(
      /^<error expanding template: error executing template __alert_HostDown: /,
    );
    expect(await expand('{{ humanize "x" }}')).toMatch(
      /error calling humanize: strconv.ParseFloat/,
    );
    expect(await expand('{{ gt $value 1 }}')).toMatch(/incompatible types for comparison/);
  });
});

describe('checkAlertTemplate', () => {
  it("refuses with Go's message what Go's parser refuses", () => {
    expect(checkAlertTemplate('A', '{{ nosuch }}')).toBe(
      'template: __alert_A:1: function "nosuch" not defined',
    );
    expect(checkAlertTemplate('A', '{{ $nope }}')).toBe(
      'template: __alert_A:1: undefined variable "$nope"',
    );
    expect(checkAlertTemplate('A', '{{ end }}')).toBe('template: __alert_A:1: unexpected {{end}}');
    expect(checkAlertTemplate('A', '{{ break }}')).toBe(
      'template: __alert_A:1: {{break}} outside {{range}}',
    );
    expect(checkAlertTemplate('A', '{{ $value | 1 }}')).toBe(
      'template: __alert_A:1: non executable command in pipeline stage 2',
    );
    expect(checkAlertTemplate('A', '{{ if true }}x')).toBe('template: __alert_A:1: unexpected EOF');
    expect(checkAlertTemplate('A', '{{ $labels.job }}')).toBeNull();
  });

  it('never throws, whatever the text', () => {
    const pieces = fc.constantFrom(
      '{{',
      '}}',
      '{{-',
      '-}}',
      ' ',
      '$x',
      '$labels',
      '.',
      'if',
      'end',
      'else',
      'range',
      '"s"',
      '`r`',
      '(',
      ')',
      '|',
      ':=',
      '=',
      '1',
      '1.5',
      'humanize',
      '/*',
      '*/',
      'x',
      '\n',
      "'a'",
      ',',
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 20 }), (parts) => {
        const result = checkAlertTemplate('A', parts.join(''));
        expect(result === null || result.startsWith('template: __alert_A:')).toBe(true);
      }),
    );
  });

  it('leaves text without actions as it is', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string().filter((s) => !s.includes('{{')),
        async (text) => {
          expect(checkAlertTemplate('A', text)).toBeNull();
          expect(await expand(text)).toBe(text);
        },
      ),
    );
  });
});
