import { describe, expect, it } from 'vitest';
import { alertRuleCreateSchema, alertRuleSchema, alertRuleUpdateSchema } from './alert-rules.js';
import { parseBody } from './api.js';

const minimal = {
  name: 'cpu high',
  metric: 'cpu_percent',
  condition: 'greater_than',
  threshold: 90,
  severity: 'critical',
};

/** The issues of a create body, as `{ path, message }` with dotted paths. */
function createIssues(body: unknown) {
  const result = parseBody(alertRuleCreateSchema, body);
  return result.success
    ? []
    : result.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
}

function updateIssues(body: unknown) {
  const result = parseBody(alertRuleUpdateSchema, body);
  return result.success
    ? []
    : result.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
}

describe('alertRuleCreateSchema', () => {
  it('applies the defaults to the required fields', () => {
    expect(alertRuleCreateSchema.parse(minimal)).toEqual({
      ...minimal,
      duration_minutes: 0,
      channels: [],
      scope: {},
      enabled: true,
    });
  });

  it('keeps every optional field it is given', () => {
    const full = {
      ...minimal,
      duration_minutes: 1440,
      channels: ['slack', 'email', 'webhook'],
      scope: { environment: 'prod' },
      enabled: false,
    };
    expect(alertRuleCreateSchema.parse(full)).toEqual(full);
  });

  it('requires name, metric, condition, threshold and severity', () => {
    expect(createIssues({})).toEqual(
      ['name', 'metric', 'condition', 'threshold', 'severity'].map((path) => ({
        path,
        message: expect.stringMatching(/^(is required|must be one of .*)$/),
      })),
    );
    expect(createIssues({ ...minimal, name: undefined })).toEqual([
      { path: 'name', message: 'is required' },
    ]);
    expect(createIssues({ ...minimal, threshold: undefined })).toEqual([
      { path: 'threshold', message: 'is required' },
    ]);
  });

  it.each([
    ['', 'must not be blank'],
    ['   ', 'must not be blank'],
    ['x'.repeat(201), 'must be at most 200 characters'],
    [42, 'must be a string'],
  ])('refuses the name %j', (name, message) => {
    expect(createIssues({ ...minimal, name })).toEqual([{ path: 'name', message }]);
  });

  it('accepts a name of 200 characters', () => {
    expect(createIssues({ ...minimal, name: 'x'.repeat(200) })).toEqual([]);
  });

  it.each(['cpu percent', '1cpu', '', 'x'.repeat(129), 'cpu/percent'])(
    'refuses the metric name %j like ingest does',
    (metric) => {
      expect(createIssues({ ...minimal, metric })).toEqual([
        { path: 'metric', message: 'must be a metric name such as cpu_percent' },
      ]);
    },
  );

  it.each(['disk.used:root-1', '_x', 'x'.repeat(128)])('accepts the metric name %j', (metric) => {
    expect(createIssues({ ...minimal, metric })).toEqual([]);
  });

  it('accepts every condition and refuses others', () => {
    for (const condition of [
      'greater_than',
      'greater_than_or_equal',
      'less_than',
      'less_than_or_equal',
      'equal',
      'not_equal',
    ]) {
      expect(createIssues({ ...minimal, condition })).toEqual([]);
    }
    expect(createIssues({ ...minimal, condition: 'above' })).toEqual([
      {
        path: 'condition',
        message:
          'must be one of greater_than, greater_than_or_equal, less_than, less_than_or_equal, equal, not_equal',
      },
    ]);
  });

  it.each([['90'], [null], [true]])('refuses the threshold %j', (threshold) => {
    expect(createIssues({ ...minimal, threshold })).toEqual([
      { path: 'threshold', message: 'must be a finite number' },
    ]);
  });

  it.each([[-1], [1441], [2.5]])('refuses duration_minutes %j', (duration) => {
    expect(createIssues({ ...minimal, duration_minutes: duration })).toEqual([
      { path: 'duration_minutes', message: 'must be an integer from 0 to 1440' },
    ]);
  });

  it('refuses an unknown severity', () => {
    expect(createIssues({ ...minimal, severity: 'fatal' })).toEqual([
      { path: 'severity', message: 'must be one of critical, warning, info' },
    ]);
  });

  it('refuses unknown and repeated channels', () => {
    expect(createIssues({ ...minimal, channels: ['slack', 'pager'] })).toEqual([
      { path: 'channels.1', message: 'must be one of slack, email, webhook' },
    ]);
    expect(createIssues({ ...minimal, channels: ['email', 'email'] })).toEqual([
      { path: 'channels', message: 'must not name a channel twice' },
    ]);
    expect(createIssues({ ...minimal, channels: 'slack' })).toEqual([
      { path: 'channels', message: 'must be an array' },
    ]);
  });

  it('refuses a scope that is not a map of strings within the tag bounds', () => {
    expect(createIssues({ ...minimal, scope: { env: 1 } })).toEqual([
      { path: 'scope.env', message: 'must be a string' },
    ]);
    expect(createIssues({ ...minimal, scope: ['env'] })).toEqual([
      { path: 'scope', message: 'must be an object of strings' },
    ]);
    expect(createIssues({ ...minimal, scope: { ['k'.repeat(65)]: 'v', '': 'v' } })).toEqual([
      { path: `scope.${'k'.repeat(65)}`, message: 'keys must be 1 to 64 characters' },
      { path: 'scope.', message: 'keys must be 1 to 64 characters' },
    ]);
    expect(createIssues({ ...minimal, scope: { env: 'v'.repeat(257) } })).toEqual([
      { path: 'scope.env', message: 'must be at most 256 characters' },
    ]);
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
    expect(createIssues({ ...minimal, scope: many })).toEqual([
      { path: 'scope', message: 'must have at most 64 pairs' },
    ]);
  });

  it('refuses enabled that is not a boolean', () => {
    expect(createIssues({ ...minimal, enabled: 'false' })).toEqual([
      { path: 'enabled', message: 'must be true or false' },
    ]);
  });

  it('names each unknown or read-only field, and refuses a body that is not an object', () => {
    expect(createIssues({ ...minimal, id: 'rul_x', duration: 5 })).toEqual([
      { path: 'id', message: 'is not a writable field of a rule' },
      { path: 'duration', message: 'is not a writable field of a rule' },
    ]);
    expect(createIssues([minimal])).toEqual([{ path: '', message: 'must be a JSON object' }]);
    expect(createIssues(undefined)).toEqual([{ path: '', message: 'must be a JSON object' }]);
  });
});

describe('alertRuleUpdateSchema', () => {
  it('takes any subset of the writable fields without applying defaults', () => {
    expect(alertRuleUpdateSchema.parse({ enabled: false })).toEqual({ enabled: false });
    expect(alertRuleUpdateSchema.parse({ threshold: 0, channels: [] })).toEqual({
      threshold: 0,
      channels: [],
    });
  });

  it('validates each field like a create', () => {
    expect(updateIssues({ duration_minutes: 1441, channels: ['slack', 'slack'] })).toEqual([
      { path: 'duration_minutes', message: 'must be an integer from 0 to 1440' },
      { path: 'channels', message: 'must not name a channel twice' },
    ]);
    expect(updateIssues({ name: null })).toEqual([{ path: 'name', message: 'must be a string' }]);
  });

  it('refuses an empty body, and an unknown field without claiming the body is empty', () => {
    expect(updateIssues({})).toEqual([{ path: '', message: 'must set at least one field' }]);
    expect(updateIssues({ colour: 'red' })).toEqual([
      { path: 'colour', message: 'is not a writable field of a rule' },
    ]);
    expect(updateIssues({ created_at: '2026-01-01T00:00:00Z', name: 'x' })).toEqual([
      { path: 'created_at', message: 'is not a writable field of a rule' },
    ]);
  });
});

describe('alertRuleSchema', () => {
  it('describes a stored rule', () => {
    const rule = {
      id: 'rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A',
      ...minimal,
      duration_minutes: 5,
      channels: ['slack'],
      scope: {},
      enabled: true,
      created_at: '2026-11-22T10:00:00.000Z',
      updated_at: '2026-11-22T10:00:00.000Z',
    };
    expect(alertRuleSchema.parse(rule)).toEqual(rule);
    expect(alertRuleSchema.safeParse({ ...rule, updated_at: undefined }).success).toBe(false);
  });
});
