import { describe, expect, it } from 'vitest';
import type { AlertCondition } from './api.js';
import {
  alertSchema,
  conditionHolds,
  parseServiceListQuery,
  parseServiceMetricsQuery,
  problemSchema,
  serviceDetailSchema,
  serviceListResponseSchema,
  serviceMetricsResponseSchema,
} from './api.js';

const now = Date.parse('2026-11-22T10:30:20.000Z');
const hourMs = 3_600_000;
const dayMs = 24 * hourMs;

function issuesOf(result: { success: boolean; issues?: unknown }): unknown {
  return result.success ? [] : result.issues;
}

describe('parseServiceListQuery', () => {
  it('defaults to the first page of 50 without filters', () => {
    expect(parseServiceListQuery({})).toEqual({
      success: true,
      data: { limit: 50, offset: 0, tags: {} },
    });
  });

  it('reads limit, offset, status and any number of tag filters', () => {
    expect(
      parseServiceListQuery({
        limit: '100',
        offset: '20',
        status: 'stale',
        'tag.environment': 'prod',
        'tag.region': 'eu-west-1',
        unrelated: 'ignored',
      }),
    ).toEqual({
      success: true,
      data: {
        limit: 100,
        offset: 20,
        status: 'stale',
        tags: { environment: 'prod', region: 'eu-west-1' },
      },
    });
  });

  it.each([
    ['0', 'must be an integer from 1 to 100'],
    ['101', 'must be an integer from 1 to 100'],
    ['2.5', 'must be an integer from 1 to 100'],
    ['ten', 'must be an integer from 1 to 100'],
    ['1e1', 'must be an integer from 1 to 100'],
    ['', 'must be an integer from 1 to 100'],
    [['1', '2'], 'must be an integer from 1 to 100'],
  ])('refuses limit=%j, naming the parameter and its bounds', (limit, message) => {
    expect(issuesOf(parseServiceListQuery({ limit }))).toEqual([{ parameter: 'limit', message }]);
  });

  it.each(['-1', '0.5', 'x', '0x10'])('refuses offset=%s', (offset) => {
    expect(issuesOf(parseServiceListQuery({ offset }))).toEqual([
      { parameter: 'offset', message: 'must be an integer from 0 to 9007199254740991' },
    ]);
  });

  it('refuses an unknown status, listing the allowed ones', () => {
    expect(issuesOf(parseServiceListQuery({ status: 'down' }))).toEqual([
      { parameter: 'status', message: 'must be one of healthy, warning, critical, stale' },
    ]);
  });

  it('names the tag parameter that is repeated or too long', () => {
    expect(
      issuesOf(parseServiceListQuery({ 'tag.env': ['a', 'b'], 'tag.x': 'v'.repeat(257) })),
    ).toEqual([
      { parameter: 'tag.env', message: 'must be given once' },
      { parameter: 'tag.x', message: 'must be at most 256 characters' },
    ]);
    expect(issuesOf(parseServiceListQuery({ 'tag.': 'x' }))).toEqual([
      expect.objectContaining({ parameter: 'tag.' }),
    ]);
  });
});

describe('parseServiceMetricsQuery', () => {
  it('defaults to the last hour in 1-minute steps, rounded outwards to whole minutes', () => {
    expect(parseServiceMetricsQuery({ metric: 'cpu_percent' }, now)).toEqual({
      success: true,
      data: {
        metric: 'cpu_percent',
        step: '1m',
        from: new Date('2026-11-22T09:30:00.000Z'),
        to: new Date('2026-11-22T10:31:00.000Z'),
      },
    });
  });

  it('uses 1m steps up to 6 hours and 1h steps above', () => {
    const at = (fromMs: number) =>
      parseServiceMetricsQuery(
        { metric: 'm', from: new Date(fromMs).toISOString(), to: new Date(now).toISOString() },
        now,
      );
    expect(at(now - 6 * hourMs)).toMatchObject({ data: { step: '1m' } });
    expect(at(now - 6 * hourMs - 1)).toMatchObject({
      data: {
        step: '1h',
        from: new Date('2026-11-22T04:00:00.000Z'),
        to: new Date('2026-11-22T11:00:00.000Z'),
      },
    });
  });

  it('accepts offsets and an explicit step', () => {
    expect(
      parseServiceMetricsQuery(
        { metric: 'm', from: '2026-11-22T11:00:00+02:00', to: '2026-11-22T12:00:00+02:00' },
        now,
      ),
    ).toMatchObject({ data: { from: new Date('2026-11-22T09:00:00Z'), step: '1m' } });
    expect(
      parseServiceMetricsQuery({ metric: 'm', step: '1h', from: '2026-11-22T09:10:00Z' }, now),
    ).toMatchObject({ data: { step: '1h', from: new Date('2026-11-22T09:00:00Z') } });
  });

  it('requires a well-formed metric and date-times', () => {
    expect(issuesOf(parseServiceMetricsQuery({}, now))).toEqual([
      { parameter: 'metric', message: 'is required' },
    ]);
    expect(
      issuesOf(parseServiceMetricsQuery({ metric: '9x', from: 'yesterday', step: '5m' }, now)),
    ).toEqual([
      { parameter: 'metric', message: 'must be a metric name such as cpu_percent' },
      {
        parameter: 'from',
        message: 'must be an ISO 8601 date-time such as 2026-11-22T10:00:00Z',
      },
      { parameter: 'step', message: 'must be 1m or 1h' },
    ]);
  });

  it('refuses an empty or reversed range, 1m steps over 7 days and ranges over 366 days', () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    const query = (fromMs: number, step?: string) =>
      issuesOf(
        parseServiceMetricsQuery(
          { metric: 'm', from: iso(fromMs), to: iso(now), ...(step ? { step } : {}) },
          now,
        ),
      );
    expect(query(now)).toEqual([{ parameter: 'from', message: 'must be before to' }]);
    expect(query(now - 7 * dayMs, '1m')).toEqual([]);
    expect(query(now - 7 * dayMs - 1, '1m')).toEqual([
      { parameter: 'step', message: 'must be 1h for ranges over 7 days' },
    ]);
    expect(query(now - 366 * dayMs)).toEqual([]);
    expect(query(now - 366 * dayMs - 1)).toEqual([
      { parameter: 'from', message: 'must be at most 366 days before to' },
    ]);
  });
});

describe('response schemas', () => {
  const alert = {
    id: 'alr_1',
    rule_id: 'rul_1',
    rule_name: 'cpu high',
    service_id: 'svc_1',
    host: 'web-1',
    metric: 'cpu_percent',
    condition: 'greater_than',
    threshold: 90,
    severity: 'critical',
    status: 'active',
    value: 97,
    started_at: '2026-11-22T10:00:00.000Z',
    fired_at: '2026-11-22T10:05:00.000Z',
    resolved_at: null,
    investigation_id: null,
    reason: 'threshold',
    acknowledged_at: null,
    acknowledged_by: null,
    acknowledgement_comment: null,
    silenced: false,
    flapping: false,
    labels: {},
    annotations: {},
  };
  const service = {
    id: 'svc_1',
    name: 'web-1',
    status: 'critical',
    last_seen: '2026-11-22T10:05:00.000Z',
    metrics: { cpu_percent: 97 },
    tags: { environment: 'prod' },
  };

  it('accept what the API sends', () => {
    expect(
      serviceListResponseSchema.parse({
        services: [service],
        pagination: { limit: 50, offset: 0, total: 1, has_more: false },
      }),
    ).toBeDefined();
    expect(
      serviceDetailSchema.parse({
        ...service,
        snapshot_at: null,
        docker_containers: [],
        processes: [{ name: 'node', pid: 1 }],
        active_alerts: [alert],
      }),
    ).toBeDefined();
    expect(
      serviceMetricsResponseSchema.parse({
        metric: 'cpu_percent',
        step: '1m',
        from: '2026-11-22T10:00:00.000Z',
        to: '2026-11-22T11:00:00.000Z',
        points: [{ time: '2026-11-22T10:00:00.000Z', avg: 1, min: 0, max: 2, count: 3 }],
      }),
    ).toBeDefined();
    expect(
      problemSchema.parse({
        type: 'https://monitor.dev/problems/validation',
        title: 'Invalid request',
        status: 422,
        detail: 'The request is invalid.',
        errors: [{ path: 'limit', message: 'must be an integer from 1 to 100' }],
      }),
    ).toBeDefined();
  });

  it('insist on UTC timestamps with Z and known enum values', () => {
    expect(alertSchema.safeParse({ ...alert, fired_at: '2026-11-22T10:05:00+01:00' }).success).toBe(
      false,
    );
    expect(alertSchema.safeParse({ ...alert, status: 'pending' }).success).toBe(false);
  });
});

describe('conditionHolds', () => {
  it.each<[AlertCondition, number, boolean, boolean, boolean]>([
    // condition, threshold, below, equal, above
    ['greater_than', 10, false, false, true],
    ['greater_than_or_equal', 10, false, true, true],
    ['less_than', 10, true, false, false],
    ['less_than_or_equal', 10, true, true, false],
    ['equal', 10, false, true, false],
    ['not_equal', 10, true, false, true],
  ])('%s %d compares below, equal and above', (condition, threshold, below, equal, above) => {
    expect(conditionHolds(condition, threshold - 0.5, threshold)).toBe(below);
    expect(conditionHolds(condition, threshold, threshold)).toBe(equal);
    expect(conditionHolds(condition, threshold + 0.5, threshold)).toBe(above);
  });
});
