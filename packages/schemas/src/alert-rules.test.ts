import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  alertRuleCreateSchema,
  alertRuleSchema,
  alertRuleUpdateSchema,
  recoveryThresholdProblem,
} from './alert-rules.js';
import { alertConditions, conditionHolds, parseBody } from './api.js';

const minimal = {
  name: 'cpu high',
  metric: 'cpu_percent',
  condition: 'greater_than',
  threshold: 90,
  severity: 'critical',
};

/** The rule options as a rule that does not set them has them. */
const optionDefaults = {
  recovery_threshold: null,
  keep_firing_for_minutes: 0,
  no_data_minutes: null,
  no_data_state: 'alerting',
  renotify_minutes: null,
  message_template: null,
  flapping: null,
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
      ...optionDefaults,
    });
  });

  it('keeps every optional field it is given', () => {
    const full = {
      ...minimal,
      duration_minutes: 1440,
      channels: ['slack', 'email', 'webhook'],
      scope: { environment: 'prod' },
      enabled: false,
      recovery_threshold: 80,
      keep_firing_for_minutes: 1440,
      no_data_minutes: 1440,
      no_data_state: 'keep',
      renotify_minutes: 10080,
      message_template: '{{ host }}: {{metric}} {{value}} {{tags.env}}',
      flapping: { window_minutes: 1440, max_transitions: 100 },
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
      { path: 'channels.1', message: 'must be one of slack, email, webhook, alertmanager' },
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
      ...optionDefaults,
      created_at: '2026-11-22T10:00:00.000Z',
      updated_at: '2026-11-22T10:00:00.000Z',
    };
    expect(alertRuleSchema.parse(rule)).toEqual(rule);
    expect(alertRuleSchema.safeParse({ ...rule, updated_at: undefined }).success).toBe(false);
  });
});

describe('the rule options', () => {
  it.each([
    ['keep_firing_for_minutes', -1, 'must be an integer from 0 to 1440'],
    ['keep_firing_for_minutes', 1441, 'must be an integer from 0 to 1440'],
    ['keep_firing_for_minutes', null, 'must be an integer'],
    ['no_data_minutes', 0, 'must be an integer from 1 to 1440'],
    ['no_data_minutes', 1441, 'must be an integer from 1 to 1440'],
    ['no_data_minutes', 1.5, 'must be an integer from 1 to 1440'],
    ['no_data_state', 'silent', 'must be one of alerting, ok, keep'],
    ['renotify_minutes', 0, 'must be an integer from 1 to 10080'],
    ['renotify_minutes', 10081, 'must be an integer from 1 to 10080'],
    ['renotify_minutes', '60', 'must be an integer'],
    ['message_template', 'x'.repeat(2001), 'must be at most 2000 characters'],
    ['message_template', 42, 'must be a string or null'],
    ['recovery_threshold', '80', 'must be a finite number or null'],
    ['flapping', 5, 'must be an object or null'],
  ])('refuses %s %j, naming it', (field, value, message) => {
    expect(createIssues({ ...minimal, [field]: value })).toEqual([{ path: field, message }]);
    expect(updateIssues({ [field]: value })).toEqual([{ path: field, message }]);
  });

  it('refuses flapping bounds at their own path, and unknown flapping fields', () => {
    expect(
      createIssues({ ...minimal, flapping: { window_minutes: 0, max_transitions: 1 } }),
    ).toEqual([
      { path: 'flapping.window_minutes', message: 'must be an integer from 1 to 1440' },
      { path: 'flapping.max_transitions', message: 'must be an integer from 2 to 100' },
    ]);
    expect(
      createIssues({
        ...minimal,
        flapping: { window_minutes: 1441, max_transitions: 101, every: 1 },
      }),
    ).toEqual([
      { path: 'flapping.window_minutes', message: 'must be an integer from 1 to 1440' },
      { path: 'flapping.max_transitions', message: 'must be an integer from 2 to 100' },
      { path: 'flapping.every', message: 'is not a field of flapping' },
    ]);
    expect(createIssues({ ...minimal, flapping: { window_minutes: 10 } })).toEqual([
      { path: 'flapping.max_transitions', message: 'is required' },
    ]);
  });

  it('refuses an unknown placeholder at save, naming message_template', () => {
    const [issue, ...rest] = createIssues({ ...minimal, message_template: '{{hostname}} down' });
    expect(rest).toEqual([]);
    expect(issue?.path).toBe('message_template');
    expect(issue?.message).toMatch(/^has an unknown placeholder \{\{hostname\}\}/);
    expect(updateIssues({ message_template: 'a {{ host ' })).toEqual([
      { path: 'message_template', message: 'has an unclosed placeholder at character 3' },
    ]);
  });

  it('takes null to switch an option off in a PATCH', () => {
    expect(
      alertRuleUpdateSchema.parse({
        recovery_threshold: null,
        no_data_minutes: null,
        renotify_minutes: null,
        message_template: null,
        flapping: null,
      }),
    ).toEqual({
      recovery_threshold: null,
      no_data_minutes: null,
      renotify_minutes: null,
      message_template: null,
      flapping: null,
    });
  });

  it.each([
    ['greater_than', 80, []],
    ['greater_than', 90, []],
    ['greater_than_or_equal', 90, []],
    ['less_than', 95, []],
    ['less_than_or_equal', 90, []],
    ['greater_than', 95, ['must be at most threshold (90) with condition greater_than']],
    [
      'greater_than_or_equal',
      90.5,
      ['must be at most threshold (90) with condition greater_than_or_equal'],
    ],
    ['less_than', 85, ['must be at least threshold (90) with condition less_than']],
    [
      'less_than_or_equal',
      89,
      ['must be at least threshold (90) with condition less_than_or_equal'],
    ],
    ['equal', 90, ['is not allowed with condition equal']],
    ['not_equal', 1, ['is not allowed with condition not_equal']],
  ] as const)('with %s 90, recovery_threshold %j: %j', (condition, recovery, messages) => {
    expect(createIssues({ ...minimal, condition, recovery_threshold: recovery })).toEqual(
      messages.map((message) => ({ path: 'recovery_threshold', message })),
    );
  });

  it('allows recovery_threshold null with every condition', () => {
    for (const condition of alertConditions) {
      expect(createIssues({ ...minimal, condition, recovery_threshold: null })).toEqual([]);
    }
  });

  it('accepts exactly the recovery thresholds that leave a band where an alert stays up', () => {
    // Property: an accepted recovery threshold never resolves a sample that still breaches,
    // i.e. whatever breaches the threshold also "holds" against the recovery threshold.
    const ordered = [
      'greater_than',
      'greater_than_or_equal',
      'less_than',
      'less_than_or_equal',
    ] as const;
    fc.assert(
      fc.property(
        fc.constantFrom(...ordered),
        fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
        fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
        fc.double({ noNaN: true, noDefaultInfinity: true, min: -2e6, max: 2e6 }),
        (condition, threshold, recovery, sample) => {
          const accepted =
            recoveryThresholdProblem({ condition, threshold, recoveryThreshold: recovery }) ===
            undefined;
          if (accepted && conditionHolds(condition, sample, threshold)) {
            expect(conditionHolds(condition, sample, recovery)).toBe(true);
          }
          // Refused only when some sample would breach yet count as recovered: the recovery
          // threshold itself, or for the inclusive conditions the threshold.
          if (!accepted) {
            const witness = condition.endsWith('or_equal') ? threshold : recovery;
            expect(conditionHolds(condition, witness, threshold)).toBe(true);
            expect(conditionHolds(condition, witness, recovery)).toBe(false);
          }
        },
      ),
    );
  });
});
