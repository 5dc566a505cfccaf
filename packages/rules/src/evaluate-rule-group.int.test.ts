import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatFloat, createMemorySeriesSource } from '@monitor/promql';
import { runPromtool } from '@monitor/testkit';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { RuleGroupState } from './evaluate-rule-group.js';
import { evaluateRuleGroup } from './evaluate-rule-group.js';
import { parseRuleFile } from './parse-rule-file.js';

const dir = mkdtempSync(join(tmpdir(), 'rule-evaluation-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const minute = 60_000;
const steps = 12;

/** A scenario: per series, its value at each minute (null: no sample); per rule, for/keep. */
type Scenario = {
  series: (number | null)[][];
  rules: { forMinutes: number; keepMinutes: number; threshold: number }[];
};

const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  series: fc.array(
    fc.array(
      fc.oneof(
        { arbitrary: fc.constantFrom(0, 1, 2, 5), weight: 8 },
        { arbitrary: fc.constant(null), weight: 1 },
      ),
      {
        minLength: steps,
        maxLength: steps,
      },
    ),
    { minLength: 1, maxLength: 3 },
  ),
  rules: fc.array(
    fc.record({
      forMinutes: fc.integer({ min: 0, max: 3 }),
      keepMinutes: fc.integer({ min: 0, max: 3 }),
      threshold: fc.constantFrom(0, 1, 2),
    }),
    { minLength: 1, maxLength: 3 },
  ),
});

function ruleFile(scenario: Scenario): string {
  const lines = [
    'groups:',
    '- name: scenario',
    '  interval: 1m',
    '  rules:',
    '  - record: c:doubled',
    '    expr: c * 2',
    '    labels: {recorded: "yes"}',
  ];
  scenario.rules.forEach((rule, i) => {
    lines.push(
      `  - alert: A${i}`,
      // Over the recording of the same group, which Prometheus has committed by then.
      `    expr: c:doubled > ${rule.threshold * 2}`,
      `    for: ${rule.forMinutes}m`,
      `    keep_firing_for: ${rule.keepMinutes}m`,
      '    labels: {severity: "{{ if gt $value 4.0 }}high{{ else }}low{{ end }}"}',
      '    annotations: {value: "{{ $value }}", summary: "{{ $labels.s }} at {{ humanize $value }}"}',
    );
  });
  return `${lines.join('\n')}\n`;
}

/** Our evaluation, minute by minute, written as a promtool unit test expecting the same. */
async function unitTest(scenario: Scenario, rules: string): Promise<string> {
  const parsed = parseRuleFile(rules);
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  const group = parsed.groups[0]!;
  const source = createMemorySeriesSource(
    scenario.series.map((values, s) => ({
      labels: { __name__: 'c', s: String(s) },
      samples: values.flatMap((v, i): [number, number][] => (v === null ? [] : [[i * minute, v]])),
    })),
  );
  const lines = [
    'rule_files: [rules.yml]',
    'evaluation_interval: 1m',
    'tests:',
    '- interval: 1m',
    '  input_series:',
    ...scenario.series.flatMap((values, s) => [
      `  - series: 'c{s="${s}"}'`,
      `    values: '${values.map((v) => (v === null ? '_' : String(v))).join(' ')}'`,
    ]),
    '  alert_rule_test:',
  ];
  const exprTests: string[] = ['  promql_expr_test:'];
  let state: RuleGroupState = { rules: {} };
  for (let step = 0; step < steps; step++) {
    const evaluation = await evaluateRuleGroup(group, state, step * minute, {
      source,
      engine: {
        lookbackDeltaMs: 5 * minute,
        maxSamples: 1_000_000,
        maxSeries: 10_000,
        timeoutMs: 10_000,
      },
      externalLabels: {},
      externalUrl: '',
    });
    state = evaluation.state;
    expect(evaluation.health.every((h) => h.health === 'ok')).toBe(true);
    const firing = Object.values(state.rules).flatMap((r) =>
      r.alerts.filter((a) => a.state === 'firing'),
    );
    scenario.rules.forEach((_, i) => {
      lines.push(`  - eval_time: ${step}m`, `    alertname: A${i}`, '    exp_alerts:');
      const mine = firing.filter((a) => a.labels['alertname'] === `A${i}`);
      if (mine.length === 0) lines[lines.length - 1] += ' []';
      for (const a of mine) {
        // promtool adds alertname to the expected labels itself.
        const labels = Object.fromEntries(
          Object.entries(a.labels).filter(([n]) => n !== 'alertname'),
        );
        lines.push(
          `    - exp_labels: ${JSON.stringify(labels)}`,
          `      exp_annotations: ${JSON.stringify(a.annotations)}`,
        );
      }
    });
    const recorded = evaluation.samples.filter((s) => s.labels['__name__'] === 'c:doubled');
    exprTests.push(`  - expr: c:doubled`, `    eval_time: ${step}m`, '    exp_samples:');
    // An empty answer is written as no samples; a series is read back as it was recorded.
    if (recorded.length === 0) exprTests[exprTests.length - 1] += ' []';
    for (const sample of recorded) {
      const labels = Object.entries(sample.labels)
        .filter(([name]) => name !== '__name__')
        .map(([name, value]) => `${name}="${value}"`)
        .join(', ');
      exprTests.push(
        `    - labels: 'c:doubled{${labels}}'`,
        `      value: ${formatFloat(sample.value)}`,
      );
    }
  }
  return `${[...lines, ...exprTests].join('\n')}\n`;
}

describe('evaluateRuleGroup against promtool test rules (Prometheus 2.42)', () => {
  it('fires, keeps firing, resolves and records as Prometheus over generated scenarios', async () => {
    const scenarios = fc.sample(scenarioArbitrary, { numRuns: 40, seed: 41 });
    const failures: string[] = [];
    for (const [i, scenario] of scenarios.entries()) {
      const rules = ruleFile(scenario);
      const test = await unitTest(scenario, rules);
      writeFileSync(join(dir, `rules-${i}.yml`), rules);
      writeFileSync(
        join(dir, `test-${i}.yml`),
        test.replace('rule_files: [rules.yml]', `rule_files: [rules-${i}.yml]`),
      );
      const result = await runPromtool(['test', 'rules', `test-${i}.yml`], dir);
      if (result.exitCode !== 0)
        failures.push(
          `scenario ${i} (${JSON.stringify(scenario)}):\n${result.stdout}${result.stderr}`,
        );
    }
    expect(failures).toEqual([]);
  });
});
