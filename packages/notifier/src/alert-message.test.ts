import { describe, expect, it } from 'vitest';
import type { AlertNotification } from '@monitor/schemas';
import { buildAlertResponse } from '@monitor/testkit/builders';
import {
  escapeSlackText,
  formatAlertMessage,
  formatSlackText,
  renderAlertTemplate,
} from './alert-message.js';
import { firedRuleFileAlert } from './testing/fired-warning.js';

const fired: AlertNotification = {
  transition: 'fired',
  alert: buildAlertResponse({
    condition: 'greater_than_or_equal',
    value: 97.5,
    investigation_id: 'inv_01JDQ4ZK8X3N7Q9V5R2T6W8Y0F',
  }),
};

const resolved: AlertNotification = {
  transition: 'resolved',
  alert: {
    ...fired.alert,
    status: 'resolved',
    resolved_at: '2026-11-22T10:40:00.000Z',
    investigation_id: null,
  },
};

describe('formatAlertMessage', () => {
  it('says what fired, on which host, against which threshold and since when', () => {
    expect(formatAlertMessage(fired)).toEqual({
      subject: '[FIRING] critical: cpu high on web-1',
      text: [
        'cpu_percent is 97.5 (alert when >= 90).',
        'Breaching since 2026-11-22T10:20:00.000Z, fired at 2026-11-22T10:25:00.000Z.',
        'Alert alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0C, rule rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0D, ' +
          'service svc_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A.',
        'Investigation inv_01JDQ4ZK8X3N7Q9V5R2T6W8Y0F.',
      ].join('\n'),
    });
  });

  it('says when a resolved alert fired and resolved, without an investigation line', () => {
    const message = formatAlertMessage(resolved);
    expect(message.subject).toBe('[RESOLVED] critical: cpu high on web-1');
    expect(message.text).toContain('cpu_percent is no longer >= 90.');
    expect(message.text).toContain(
      'Fired at 2026-11-22T10:25:00.000Z with 97.5, resolved at 2026-11-22T10:40:00.000Z.',
    );
    expect(message.text).not.toContain('Investigation');
  });
});

describe("a rule file's alert", () => {
  it('says what its annotations say, having no condition', () => {
    const message = formatAlertMessage(firedRuleFileAlert);
    expect(message.subject).toBe('[FIRING] critical: HostDown on node-1');
    expect(message.text.split('\n')[0]).toBe('node-1:9100 is down');
    const resolvedRuleAlert: AlertNotification = {
      transition: 'resolved',
      alert: { ...firedRuleFileAlert.alert, status: 'resolved', resolved_at: fired.alert.fired_at },
    };
    expect(formatAlertMessage(resolvedRuleAlert).text.split('\n')[0]).toBe(
      'HostDown is no longer firing.',
    );
  });
});

describe('formatSlackText', () => {
  it('escapes Slack markup so a rule name cannot ping a channel', () => {
    const text = formatSlackText({
      ...fired,
      alert: { ...fired.alert, rule_name: '<!channel> cpu & load', condition: 'less_than' },
    });
    expect(text.split('\n')[0]).toBe(
      '*[FIRING] critical: &lt;!channel&gt; cpu &amp; load on web-1*',
    );
    expect(text).toContain('(alert when &lt; 90)');
    expect(text).not.toMatch(/[<>]/);
  });

  it('escapes only &, < and >', () => {
    expect(escapeSlackText('a < b && c > d *bold*')).toBe('a &lt; b &amp;&amp; c &gt; d *bold*');
  });
});

describe('the message with rule options', () => {
  it('labels every transition, and says where a settled alert settled', () => {
    const subjects = (['renotified', 'unsilenced'] as const).map(
      (transition) => formatAlertMessage({ ...fired, transition }).subject,
    );
    expect(subjects).toEqual([
      '[STILL FIRING] critical: cpu high on web-1',
      '[FIRING, SILENCE ENDED] critical: cpu high on web-1',
    ]);
    expect(formatAlertMessage({ ...fired, transition: 'settled' }).subject).toBe(
      '[SETTLED FIRING] critical: cpu high on web-1',
    );
    const settled = formatAlertMessage({ ...resolved, transition: 'settled' });
    expect(settled.subject).toBe('[SETTLED RESOLVED] critical: cpu high on web-1');
    expect(settled.text).toContain('It stopped flapping and settled resolved.');
    expect(formatAlertMessage({ ...fired, transition: 'unsilenced' }).text).toContain(
      'The silence over it has ended.',
    );
  });

  it('says no data for a no-data alert instead of a value', () => {
    const noData = formatAlertMessage({
      ...fired,
      alert: { ...fired.alert, reason: 'no_data', value: null },
    });
    expect(noData.text.split('\n')[0]).toBe(
      'No cpu_percent samples arrived: no data since 2026-11-22T10:20:00.000Z.',
    );
  });

  it('uses the rule’s template as the text, with the service’s tags', () => {
    const message = formatAlertMessage(fired, {
      messageTemplate: '{{host}} {{metric}}={{value}} > {{threshold}} ({{status}}) {{tags.env}}',
      tags: { env: 'prod' },
    });
    expect(message).toEqual({
      subject: '[FIRING] critical: cpu high on web-1',
      text: 'web-1 cpu_percent=97.5 > 90 (active) prod',
    });
    expect(
      renderAlertTemplate(
        { ...fired, alert: { ...fired.alert, value: null } },
        { messageTemplate: '{{value}}' },
      ),
    ).toBe('no data');
  });

  it('escapes a rendered template for Slack too', () => {
    expect(formatSlackText(fired, { messageTemplate: '<!channel> {{host}}' })).toBe(
      '*[FIRING] critical: cpu high on web-1*\n&lt;!channel&gt; web-1',
    );
  });

  it('falls back to the default text without a template or with one that no longer parses', () => {
    const plain = formatAlertMessage(fired);
    expect(formatAlertMessage(fired, { messageTemplate: null })).toEqual(plain);
    expect(formatAlertMessage(fired, { messageTemplate: '{{nope}}' })).toEqual(plain);
  });
});
