/**
 * Hand-written Prometheus rule files, one per error class `promtool check rules` (2.42) knows and
 * the shapes it accepts. Each carries promtool's decision, recorded from it and re-checked against it
 * by rule-file.int.test.ts.
 */
export const ruleFileCases: readonly { name: string; text: string; accepted: boolean }[] = [
  {
    name: 'alert and expr empty',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: ""\n',
    accepted: false,
  },
  {
    name: 'alert bad name',
    text: 'groups:\n- name: g\n  rules:\n  - alert: "bad name!"\n    expr: up\n',
    accepted: true,
  },
  {
    name: 'alert empty name',
    text: 'groups:\n- name: g\n  rules:\n  - alert: ""\n    expr: up\n',
    accepted: false,
  },
  {
    name: 'anchors',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    labels: &l {a: b}\n  - alert: B\n    expr: up\n    labels: *l\n',
    accepted: true,
  },
  {
    name: 'ann name bad',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    annotations: {"a-b": x}\n',
    accepted: false,
  },
  {
    name: 'dup group',
    text: 'groups:\n- name: g\n  rules: []\n- name: g\n  rules: []\n',
    accepted: false,
  },
  { name: 'dup key', text: 'groups:\n- name: g\n  name: h\n  rules: []\n', accepted: false },
  { name: 'empty', text: '\n', accepted: true },
  {
    name: 'expr int',
    text: 'groups:\n- name: g\n  rules:\n  - record: r\n    expr: 1\n',
    accepted: true,
  },
  {
    name: 'expr matrix',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: "up[5m]"\n',
    accepted: true,
  },
  {
    name: 'expr str type',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: "foo"\n',
    accepted: true,
  },
  {
    name: 'expr string lit',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: "\\"foo\\""\n',
    accepted: true,
  },
  {
    name: 'for big',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    for: 1y2w3d4h5m6s7ms\n',
    accepted: true,
  },
  {
    name: 'for int',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    for: 300\n',
    accepted: false,
  },
  {
    name: 'for neg',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    for: -1m\n',
    accepted: false,
  },
  {
    name: 'for order',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    for: 5m1h\n',
    accepted: false,
  },
  { name: 'groups null', text: 'groups:\n', accepted: true },
  {
    name: 'interval 0s',
    text: 'groups:\n- name: g\n  interval: 0s\n  rules: []\n',
    accepted: true,
  },
  {
    name: 'interval zero',
    text: 'groups:\n- name: g\n  interval: 0\n  rules: []\n',
    accepted: true,
  },
  {
    name: 'label int',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    labels: {a: 1, b: true, c: 1.5}\n',
    accepted: true,
  },
  {
    name: 'label null',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    labels: {a: null}\n',
    accepted: true,
  },
  {
    name: 'label value bad utf8',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    labels: {"a-b": x}\n',
    accepted: false,
  },
  { name: 'limit float', text: 'groups:\n- name: g\n  limit: 5.0\n  rules: []\n', accepted: true },
  { name: 'limit neg', text: 'groups:\n- name: g\n  limit: -1\n  rules: []\n', accepted: true },
  { name: 'limit str', text: 'groups:\n- name: g\n  limit: "5"\n  rules: []\n', accepted: false },
  {
    name: 'merge',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    labels: &l {a: b}\n  - alert: B\n    expr: up\n    labels:\n      <<: *l\n      c: d\n',
    accepted: true,
  },
  { name: 'name bool', text: 'groups:\n- name: true\n  rules: []\n', accepted: true },
  { name: 'name int', text: 'groups:\n- name: 123\n  rules: []\n', accepted: true },
  { name: 'name null', text: 'groups:\n- name: ~\n  rules: []\n', accepted: false },
  { name: 'no rules', text: 'groups:\n- name: g\n', accepted: true },
  { name: 'only comment', text: '# nothing\n', accepted: true },
  {
    name: 'record ann',
    text: 'groups:\n- name: g\n  rules:\n  - record: r\n    expr: up\n    annotations: {a: x}\n',
    accepted: false,
  },
  {
    name: 'record bad',
    text: 'groups:\n- name: g\n  rules:\n  - record: "1job"\n    expr: up\n',
    accepted: false,
  },
  {
    name: 'record colon',
    text: 'groups:\n- name: g\n  rules:\n  - record: "job:up:sum"\n    expr: up\n',
    accepted: true,
  },
  {
    name: 'record for',
    text: 'groups:\n- name: g\n  rules:\n  - record: r\n    expr: up\n    for: 1m\n',
    accepted: false,
  },
  {
    name: 'record kff',
    text: 'groups:\n- name: g\n  rules:\n  - record: r\n    expr: up\n    keep_firing_for: 0s\n',
    accepted: true,
  },
  {
    name: 'record label metric',
    text: 'groups:\n- name: g\n  rules:\n  - record: r\n    expr: up\n    labels: {__name__: x}\n',
    accepted: false,
  },
  {
    name: 'record tmpl label',
    text: 'groups:\n- name: g\n  rules:\n  - record: r\n    expr: up\n    labels: {a: "{{ nosuch }}"}\n',
    accepted: true,
  },
  { name: 'rules map', text: 'groups:\n- name: g\n  rules: {a: 1}\n', accepted: false },
  { name: 'tag str', text: 'groups:\n- name: !!str 5\n  rules: []\n', accepted: true },
  { name: 'top list', text: '- a\n', accepted: false },
  {
    name: 'two docs',
    text: 'groups:\n- name: g\n  rules: []\n---\ngroups:\n- name: g\n  rules: [{bad: 1}]\n',
    accepted: true,
  },
  { name: 'unknown top', text: 'groups: []\nfoo: 1\n', accepted: false },
  {
    name: 'template labels value in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ $labels.instance }} {{ $value }}"\n',
    accepted: true,
  },
  {
    name: 'template humanize pipeline in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ $value | humanize }}"\n',
    accepted: true,
  },
  {
    name: 'template printf in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ printf \\"%.2f\\" $value }}"\n',
    accepted: true,
  },
  {
    name: 'template if else in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ if gt $value 1.0 }}big{{ else if lt $value 0.0 }}neg{{ else }}small{{ end }}"\n',
    accepted: true,
  },
  {
    name: 'template range in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ range $k, $v := $labels }}{{ $k }}={{ $v }} {{ end }}"\n',
    accepted: true,
  },
  {
    name: 'template with in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ with $labels.job }}{{ . }}{{ end }}"\n',
    accepted: true,
  },
  {
    name: 'template query in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ with query \\"up\\" }}{{ . | first | value }}{{ end }}"\n',
    accepted: true,
  },
  {
    name: 'template trim markers in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{- $value -}} x {{- 1 }}"\n',
    accepted: true,
  },
  {
    name: 'template comment in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{/* note */}}x{{- /* trimmed */ -}}"\n',
    accepted: true,
  },
  {
    name: 'template define in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ define \\"x\\" }}X{{ end }}{{ template \\"x\\" }}"\n',
    accepted: true,
  },
  {
    name: 'template break in range in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ range $labels }}{{ break }}{{ end }}"\n',
    accepted: true,
  },
  {
    name: 'template external in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ $externalLabels.dc }} {{ $externalURL }}"\n',
    accepted: true,
  },
  {
    name: 'template unknown function in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ nosuch $value }}"\n',
    accepted: false,
  },
  {
    name: 'template undefined variable in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ $nope }}"\n',
    accepted: false,
  },
  {
    name: 'template unclosed action in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ $value "\n',
    accepted: false,
  },
  {
    name: 'template unexpected end in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ end }}"\n',
    accepted: false,
  },
  {
    name: 'template else outside in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ else }}"\n',
    accepted: false,
  },
  {
    name: 'template if without end in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ if true }}x"\n',
    accepted: false,
  },
  {
    name: 'template break outside range in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ break }}"\n',
    accepted: false,
  },
  {
    name: 'template bad number in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ 3x }}"\n',
    accepted: false,
  },
  {
    name: 'template unterminated string in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ \\"abc }}"\n',
    accepted: false,
  },
  {
    name: 'template non executable stage in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ $value | 1 }}"\n',
    accepted: false,
  },
  {
    name: 'template missing value for if in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ if }}x{{ end }}"\n',
    accepted: false,
  },
  {
    name: 'template empty action in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ }}"\n',
    accepted: false,
  },
  {
    name: 'template unclosed comment in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{/* x }}"\n',
    accepted: false,
  },
  {
    name: 'template comment before text in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{/* x */ y }}"\n',
    accepted: false,
  },
  {
    name: 'template scoped variable gone in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ if true }}{{ $x := 1 }}{{ end }}{{ $x }}"\n',
    accepted: false,
  },
  {
    name: 'template bad character in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ $value # }}"\n',
    accepted: false,
  },
  {
    name: 'template unclosed paren in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ (humanize $value }}"\n',
    accepted: false,
  },
  {
    name: 'template extra right paren in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ humanize $value) }}"\n',
    accepted: false,
  },
  {
    name: 'template range too many vars in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ range $a, $b, $c := $labels }}{{ end }}"\n',
    accepted: false,
  },
  {
    name: 'template else with in with in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ with $value }}{{ else with 1 }}{{ end }}"\n',
    accepted: false,
  },
  {
    name: 'template else twice in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ if true }}a{{ else }}b{{ else }}c{{ end }}"\n',
    accepted: false,
  },
  {
    name: 'template dot after literal in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ \\"a\\".b }}"\n',
    accepted: false,
  },
  {
    name: 'template assign existing in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ $x := 1 }}{{ $x = 2 }}{{ $x }}"\n',
    accepted: true,
  },
  {
    name: 'template char constant in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ printf \\"%c\\" \'a\' }}"\n',
    accepted: true,
  },
  {
    name: 'template nil command in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ nil }}"\n',
    accepted: true,
  },
  {
    name: 'template define nested in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ if true }}{{ define \\"x\\" }}{{ end }}{{ end }}"\n',
    accepted: false,
  },
  {
    name: 'template block in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ block \\"b\\" . }}B{{ end }}"\n',
    accepted: true,
  },
  {
    name: 'template raw string in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ `raw` }}"\n',
    accepted: true,
  },
  {
    name: 'template colon alone in annotation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    annotations:\n      a: "{{ $x : 1 }}"\n',
    accepted: false,
  },
  {
    name: 'template unknown function in label',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    labels:\n      l: "{{ nosuch }}"\n',
    accepted: false,
  },
  {
    name: 'template in recording rule label is not checked',
    text: "groups:\n- name: g\n  rules:\n  - record: r\n    expr: up\n    labels: {a: '{{ end }}'}\n",
    accepted: true,
  },
  {
    name: 'expr syntax error',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: "up =="\n',
    accepted: false,
  },
  {
    name: 'expr unclosed brace',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: "foo{"\n',
    accepted: false,
  },
  {
    name: 'expr unknown function',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: "nosuch(up)"\n',
    accepted: false,
  },
  {
    name: 'expr wrong arg type',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: "rate(up)"\n',
    accepted: false,
  },
  {
    name: 'expr aggregation',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: "sum by (job) (rate(http_requests_total[5m]))"\n',
    accepted: true,
  },
  {
    name: 'expr subquery',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: "max_over_time(up[10m:1m])"\n',
    accepted: true,
  },
  {
    name: 'expr bad duration',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: "up[5x]"\n',
    accepted: false,
  },
  {
    name: 'expr string',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: "\\"s\\""\n',
    accepted: true,
  },
  {
    name: 'expr offset',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: "up offset 5m"\n',
    accepted: true,
  },
  {
    name: 'expr at',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: "up @ 100"\n',
    accepted: true,
  },
  {
    name: 'expr binary bool',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: "up > bool 1"\n',
    accepted: true,
  },
  {
    name: 'expr comparison on scalars without bool',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: "1 > 2"\n',
    accepted: false,
  },
  {
    name: 'keep firing for on alert',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    for: 5m\n    keep_firing_for: 10m\n',
    accepted: true,
  },
  {
    name: 'keep firing for bad',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    keep_firing_for: 10\n',
    accepted: false,
  },
  {
    name: 'interval fractional',
    text: 'groups:\n- name: g\n  interval: 1.5m\n  rules: []\n',
    accepted: false,
  },
  {
    name: 'interval ms',
    text: 'groups:\n- name: g\n  interval: 500ms\n  rules: []\n',
    accepted: true,
  },
  { name: 'limit hex', text: 'groups:\n- name: g\n  limit: 0x10\n  rules: []\n', accepted: true },
  { name: 'limit text', text: 'groups:\n- name: g\n  limit: many\n  rules: []\n', accepted: false },
  { name: 'yaml syntax error', text: 'groups:\n- name: g\n  rules: [\n', accepted: false },
  { name: 'yaml tab indent', text: 'groups:\n\t- name: g\n', accepted: false },
  {
    name: 'unknown rule field',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    severity: page\n',
    accepted: false,
  },
  {
    name: 'unknown group field',
    text: 'groups:\n- name: g\n  evaluation_delay: 1m\n  rules: []\n',
    accepted: false,
  },
  {
    name: 'record and alert both',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    record: r\n    expr: up\n',
    accepted: false,
  },
  { name: 'expr missing', text: 'groups:\n- name: g\n  rules:\n  - alert: A\n', accepted: false },
  {
    name: 'expr as list',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: [up]\n',
    accepted: false,
  },
  {
    name: 'labels as list',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    labels: [a]\n',
    accepted: false,
  },
  {
    name: 'label value as map',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    labels: {a: {b: c}}\n',
    accepted: false,
  },
  { name: 'rule null', text: 'groups:\n- name: g\n  rules:\n  - ~\n', accepted: true },
  { name: 'groups as map', text: 'groups: {a: 1}\n', accepted: false },
  { name: 'top scalar', text: 'hello\n', accepted: false },
  {
    name: 'for null',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    for: ~\n',
    accepted: true,
  },
  {
    name: 'two groups ok',
    text: 'groups:\n- name: a\n  rules:\n  - record: a:up\n    expr: up\n- name: b\n  interval: 30s\n  rules:\n  - alert: B\n    expr: a:up == 0\n    for: 1m\n',
    accepted: true,
  },
  {
    name: 'label name digit',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    labels: {1a: x}\n',
    accepted: false,
  },
  {
    name: 'label name utf8',
    text: 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    labels: {"\u00e9": x}\n',
    accepted: false,
  },
  {
    name: 'group name unicode',
    text: 'groups:\n- name: "groupe \u00e9"\n  rules: []\n',
    accepted: true,
  },
  {
    name: 'alert numeric name',
    text: 'groups:\n- name: g\n  rules:\n  - alert: 5\n    expr: up\n',
    accepted: true,
  },
  {
    name: 'record numeric name',
    text: 'groups:\n- name: g\n  rules:\n  - record: 5\n    expr: up\n',
    accepted: false,
  },
];
