import fc from 'fast-check';

// Mostly valid pieces with a few of each kind of mistake, so that generated files land on
// both sides of promtool's decision.
const pick = <T>(valid: readonly T[], invalid: readonly T[]): fc.Arbitrary<T> =>
  fc.oneof(
    { arbitrary: fc.constantFrom(...valid), weight: 12 },
    { arbitrary: fc.constantFrom(...invalid), weight: 1 },
  );

const quoted = (text: string): string => JSON.stringify(text);

const groupName = pick(['node', 'api', 'db', 'groupe é'], ['']);
const duration = pick(
  ['1m', '30s', '0s', '1h30m', '2d', '500ms', '0'],
  ['5m1h', '-1m', '1.5m', '300'],
);
const limit = pick(['0', '5', '100'], ["'5'", 'many']);
const expr = pick(
  [
    'up',
    'up == 0',
    'sum by (job) (rate(http_requests_total[5m]))',
    'avg_over_time(up[5m:1m]) > 0.5',
    'up offset 5m',
    'node_load1 > bool 2',
    'histogram_quantile(0.9, sum by (le) (rate(h_bucket[5m])))',
  ],
  ['up ==', 'foo{', 'rate(up)', 'nosuch(up)', '1 > 2', 'up[5x]', ''],
);
const alertName = pick(['HostDown', 'HighLoad', 'A', 'bad name!'], ['']);
const recordName = pick(['job:up:sum', 'r', 'instance:load:avg5m'], ['1job', 'a-b', '']);
const labelName = pick(['severity', 'team', '_x', 'summary'], ['a-b', '__name__', '1x']);
const template = pick(
  [
    'page',
    '{{ $labels.instance }} is down',
    '{{ $value | humanize }}',
    '{{ printf "%.2f" $value }}',
    '{{ if gt $value 1.0 }}big{{ else }}small{{ end }}',
    '{{ range $k, $v := $labels }}{{ $k }}={{ $v }} {{ end }}',
    '{{ with $labels.job }}{{ . }}{{ end }}',
    '{{- humanizeDuration $value -}}',
    '{{/* why */}}{{ $externalLabels.dc }}',
  ],
  [
    '{{ nosuch }}',
    '{{ $nope }}',
    '{{ end }}',
    '{{ if true }}',
    '{{ break }}',
    '{{ "x }}',
    '{{ 1 | 2 }}',
  ],
);

const labels = fc.option(
  fc.uniqueArray(fc.tuple(labelName, template), { maxLength: 3, selector: ([n]) => n }),
  {
    nil: undefined,
    freq: 2,
  },
);

const mapLines = (key: string, entries: readonly [string, string][] | undefined): string[] =>
  entries === undefined
    ? []
    : entries.length === 0
      ? [`    ${key}: {}`]
      : [`    ${key}:`, ...entries.map(([k, v]) => `      ${quoted(k)}: ${quoted(v)}`)];

const alertRule = fc
  .record({
    name: alertName,
    expr,
    for: fc.option(duration, { nil: undefined }),
    keepFiringFor: fc.option(duration, { nil: undefined, freq: 3 }),
    labels,
    annotations: labels,
  })
  .map((r) => [
    `  - alert: ${quoted(r.name)}`,
    `    expr: ${quoted(r.expr)}`,
    ...(r.for === undefined ? [] : [`    for: ${r.for}`]),
    ...(r.keepFiringFor === undefined ? [] : [`    keep_firing_for: ${r.keepFiringFor}`]),
    ...mapLines('labels', r.labels),
    ...mapLines('annotations', r.annotations),
  ]);

const recordRule = fc
  .record({
    name: recordName,
    expr,
    labels,
    // Fields a recording rule must not have, now and then.
    extra: pick(
      [''],
      ['    for: 1m', '    annotations: {a: b}', '    keep_firing_for: 1m', '    severity: x'],
    ),
  })
  .map((r) => [
    `  - record: ${quoted(r.name)}`,
    `    expr: ${quoted(r.expr)}`,
    ...mapLines('labels', r.labels),
    ...(r.extra === '' ? [] : [r.extra]),
  ]);

const group = fc
  .record({
    name: groupName,
    interval: fc.option(duration, { nil: undefined }),
    limit: fc.option(limit, { nil: undefined, freq: 4 }),
    rules: fc.array(fc.oneof(alertRule, recordRule), { maxLength: 4 }),
  })
  .map((g) => [
    `- name: ${quoted(g.name)}`,
    ...(g.interval === undefined ? [] : [`  interval: ${g.interval}`]),
    ...(g.limit === undefined ? [] : [`  limit: ${g.limit}`]),
    ...(g.rules.length === 0 ? ['  rules: []'] : ['  rules:', ...g.rules.flat()]),
  ]);

/** Prometheus rule files, valid or with one or more of the mistakes promtool refuses. */
export const ruleFileArbitrary: fc.Arbitrary<string> = fc
  .array(group, { maxLength: 3 })
  .map((groups) =>
    groups.length === 0 ? 'groups: []\n' : `groups:\n${groups.flat().join('\n')}\n`,
  );
