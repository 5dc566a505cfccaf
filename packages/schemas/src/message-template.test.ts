import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MessageTemplateValues } from './message-template.js';
import {
  messageTemplatePlaceholders,
  parseMessageTemplate,
  renderMessageTemplate,
} from './message-template.js';

const values: MessageTemplateValues = {
  rule_name: 'cpu high',
  host: 'web-1',
  metric: 'cpu_percent',
  value: '97.5',
  threshold: '90',
  severity: 'critical',
  status: 'active',
  started_at: '2026-11-23T10:00:00.000Z',
  tags: { env: 'prod', 'team.name': 'core' },
};

function render(template: string): string {
  const parsed = parseMessageTemplate(template);
  if (!parsed.success) throw new Error(parsed.message);
  return renderMessageTemplate(parsed.parts, values);
}

describe('parseMessageTemplate', () => {
  it('substitutes every placeholder, with or without white space inside the braces', () => {
    expect(
      render(
        '{{severity}}: {{ rule_name }} on {{host}} ({{metric}} = {{value}}, threshold ' +
          '{{threshold}}) is {{status}} since {{started_at}} [{{tags.env}}/{{tags.team.name}}]',
      ),
    ).toBe(
      'critical: cpu high on web-1 (cpu_percent = 97.5, threshold 90) is active since ' +
        '2026-11-23T10:00:00.000Z [prod/core]',
    );
  });

  it('renders a tag the service does not have as nothing', () => {
    expect(render('[{{tags.region}}]')).toBe('[]');
    expect(render('[{{tags.__proto__}}]')).toBe('[]');
  });

  it('keeps text without placeholders, a lone closing pair included', () => {
    expect(render('')).toBe('');
    expect(render('all good }} {single}')).toBe('all good }} {single}');
  });

  it.each([
    ['{{hostname}}', 'hostname'],
    ['{{}}', ''],
    ['{{ tags. }}', 'tags.'],
    ['{{Host}}', 'Host'],
    [`{{tags.${'k'.repeat(65)}}}`, `tags.${'k'.repeat(65)}`],
  ])('refuses %j, naming the placeholder', (template, name) => {
    const parsed = parseMessageTemplate(template);
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(parsed.message).toContain(`{{${name}}}`);
  });

  it('refuses an unclosed placeholder, saying where it opens', () => {
    expect(parseMessageTemplate('ok {{host')).toEqual({
      success: false,
      message: 'has an unclosed placeholder at character 4',
    });
  });

  it('renders any mix of text and known placeholders as their concatenation', () => {
    // Text pieces never contain `{{`, so the only placeholders are the ones put in.
    const text = fc
      .string({ maxLength: 12 })
      .filter((piece) => !piece.includes('{'))
      .map((piece) => ({ template: piece, expected: piece }));
    const placeholder = fc.constantFrom(...messageTemplatePlaceholders).map((name) => ({
      template: `{{${name}}}`,
      expected: values[name],
    }));
    const tag = fc.constantFrom('env', 'team.name', 'absent').map((key) => ({
      template: `{{ tags.${key} }}`,
      expected: values.tags[key] ?? '',
    }));
    fc.assert(
      fc.property(fc.array(fc.oneof(text, placeholder, tag), { maxLength: 20 }), (pieces) => {
        const template = pieces.map((piece) => piece.template).join('');
        expect(render(template)).toBe(pieces.map((piece) => piece.expected).join(''));
      }),
    );
  });

  it('accepts a template exactly when every {{…}} in it names a known placeholder', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (name) => {
        const template = `a {{${name}}} b`;
        const trimmed = name.trim();
        const known =
          !name.includes('}}') &&
          !name.includes('{{') &&
          ((messageTemplatePlaceholders as readonly string[]).includes(trimmed) ||
            (trimmed.startsWith('tags.') && trimmed.length > 5 && !trimmed.includes('{')));
        expect(parseMessageTemplate(template).success).toBe(known);
      }),
    );
  });
});
