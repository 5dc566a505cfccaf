import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AlertingRule, RecordingRule, Rule, RuleGroup, RuleParseResult } from './index.js';
import { parseRuleFile, parseRuleGroup } from './index.js';
import { ruleFileArbitrary } from './testing/rule-file-arbitrary.js';
import { ruleFileCases } from './testing/rule-file-cases.js';

describe('parseRuleFile', () => {
  it('reads groups and rules with their durations', () => {
    const result = parseRuleFile(`groups:
- name: node
  interval: 30s
  limit: 10
  rules:
  - alert: HostDown
    expr: up == 0
    for: 5m
    keep_firing_for: 10m
    labels: {severity: page}
    annotations: {summary: "{{ $labels.instance }} is down"}
  - record: job:up:sum
    expr: sum by (job) (up)
`);
    const alert: AlertingRule = {
      kind: 'alert',
      alert: 'HostDown',
      expr: 'up == 0',
      forMs: 300_000,
      keepFiringForMs: 600_000,
      labels: { severity: 'page' },
      annotations: { summary: '{{ $labels.instance }} is down' },
    };
    const record: RecordingRule = {
      kind: 'record',
      record: 'job:up:sum',
      expr: 'sum by (job) (up)',
      labels: {},
    };
    const rules: Rule[] = [alert, record];
    const group: RuleGroup = { name: 'node', intervalMs: 30_000, limit: 10, rules };
    const expected: RuleParseResult = { ok: true, groups: [group] };
    expect(result).toEqual(expected);
  });

  it("decides every recorded case as promtool 2.42 did, with Prometheus' text", () => {
    for (const c of ruleFileCases)
      expect({ name: c.name, ok: parseRuleFile(c.text).ok }).toEqual({
        name: c.name,
        ok: c.accepted,
      });
    const errorsOf = (name: string): string[] => {
      const result = parseRuleFile(ruleFileCases.find((c) => c.name === name)!.text);
      return result.ok ? [] : result.errors;
    };
    expect(errorsOf('dup group')).toEqual(['4:3: groupname: "g" is repeated in the same file']);
    expect(errorsOf('record ann')).toEqual([
      `4:13: group "g", rule 1, "r": invalid field 'annotations' in recording rule`,
    ]);
    expect(errorsOf('expr syntax error')).toEqual([
      '5:11: group "g", rule 1, "A": could not parse expression: 1:6: parse error: unexpected end of input',
    ]);
    expect(errorsOf('template unknown function in annotation')).toEqual([
      'group "g", rule 1, "A": annotation "a": template: __alert_A:1: function "nosuch" not defined',
    ]);
    expect(errorsOf('for int')).toEqual(['not a valid duration string: "300"']);
    expect(errorsOf('record and alert both')).toEqual([
      `5:13: 4:12: group "g", rule 1, "A": only one of 'record' and 'alert' must be set`,
    ]);
  });

  it('never throws, and keeps every rule of an accepted file', () => {
    fc.assert(
      fc.property(ruleFileArbitrary, (text) => {
        const result = parseRuleFile(text);
        if (result.ok) {
          const listed = (text.match(/^ {2}- (alert|record):/gm) ?? []).length;
          expect(result.groups.flatMap((g) => g.rules)).toHaveLength(listed);
        } else {
          expect(result.errors.length).toBeGreaterThan(0);
        }
      }),
    );
  });
});

describe('parseRuleGroup', () => {
  it('reads one group as the ruler API receives it', () => {
    const result = parseRuleGroup('name: g\ninterval: 1m\nrules:\n- record: r\n  expr: up\n');
    expect(result.ok && result.groups[0]!.name).toBe('g');
    expect(parseRuleGroup('')).toEqual({ ok: false, errors: ['0:0: Groupname must not be empty'] });
  });
});
