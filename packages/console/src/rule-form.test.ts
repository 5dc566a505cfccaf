import { describe, expect, it } from 'vitest';
import type { Rule } from './api-types.js';
import {
  emptyRuleForm,
  fieldErrors,
  parseScope,
  ruleFormOf,
  ruleRequestBody,
} from './rule-form.js';

const stored: Rule = {
  id: 'rul_1',
  name: 'cpu',
  metric: 'cpu_percent',
  condition: 'greater_than',
  threshold: 90,
  duration_minutes: 5,
  severity: 'critical',
  channels: ['slack'],
  scope: { env: 'prod' },
  enabled: true,
  created_at: '2026-11-23T12:00:00.000Z',
  updated_at: '2026-11-23T12:00:00.000Z',
  recovery_threshold: 80,
  keep_firing_for_minutes: 0,
  no_data_minutes: null,
  no_data_state: 'alerting',
  renotify_minutes: null,
  message_template: null,
  flapping: { window_minutes: 30, max_transitions: 4 },
};

describe('ruleRequestBody', () => {
  it('sends the required fields and leaves empty optional ones to the API defaults on create', () => {
    const body = ruleRequestBody({ ...emptyRuleForm, name: 'n', metric: 'm', threshold: '1.5' });
    expect(body).toEqual({
      name: 'n',
      metric: 'm',
      condition: 'greater_than',
      threshold: 1.5,
      duration_minutes: 0,
      severity: 'warning',
      channels: [],
      scope: {},
      enabled: true,
      keep_firing_for_minutes: 0,
    });
  });

  it('sends what the user typed when it is not a number, for the API to name', () => {
    expect(ruleRequestBody({ ...emptyRuleForm, threshold: 'abc' })['threshold']).toBe('abc');
    expect(ruleRequestBody({ ...emptyRuleForm, threshold: '' })['threshold']).toBe('');
  });

  it('patches only what changed, an emptied optional field as null', () => {
    const original = ruleFormOf(stored);
    expect(ruleRequestBody(original, original)).toEqual({});
    expect(
      ruleRequestBody(
        {
          ...original,
          threshold: '95',
          recovery_threshold: '',
          flapping_window_minutes: '',
          flapping_max_transitions: '',
        },
        original,
      ),
    ).toEqual({ threshold: 95, recovery_threshold: null, flapping: null });
    expect(ruleRequestBody({ ...original, scope: 'env=prod, team = db' }, original)).toEqual({
      scope: { env: 'prod', team: 'db' },
    });
  });

  it('reads back a stored rule into the same values', () => {
    const form = ruleFormOf(stored);
    expect(form).toMatchObject({
      threshold: '90',
      scope: 'env=prod',
      flapping_window_minutes: '30',
    });
    expect(parseScope(form.scope)).toEqual(stored.scope);
  });
});

describe('fieldErrors', () => {
  it('puts each issue on the field its path names', () => {
    expect(
      fieldErrors({
        status: 422,
        errors: [
          { path: 'duration_minutes', message: 'must be an integer from 0 to 1440' },
          { path: 'channels[1]', message: 'must be one of slack, email, webhook' },
          { path: 'scope["a.b"]', message: 'must be a string' },
          { path: 'flapping.window_minutes', message: 'must be an integer from 1 to 1440' },
          { path: 'no_data_minutes', message: 'must be an integer from 1 to 1440' },
        ],
      }),
    ).toEqual({
      duration_minutes: 'must be an integer from 0 to 1440',
      channels: 'must be one of slack, email, webhook',
      scope: 'must be a string',
      'flapping.window_minutes': 'must be an integer from 1 to 1440',
      no_data_minutes: 'must be an integer from 1 to 1440',
    });
  });

  it('keeps issues naming no field, or none at all, for the form', () => {
    expect(fieldErrors({ errors: [{ path: '', message: 'malformed JSON' }] })).toEqual({
      form: 'malformed JSON',
    });
    expect(fieldErrors({ errors: [{ path: 'colour', message: 'unknown field' }] })).toEqual({
      form: 'colour: unknown field',
    });
    expect(fieldErrors({ detail: 'The request is invalid.' })).toEqual({
      form: 'The request is invalid.',
    });
  });
});
