import { describe, expect, it } from 'vitest';
import { alertListResponseSchema, parseAlertListQuery } from './alerts.js';

const serviceId = 'svc_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A';
const ruleId = 'rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0B';

describe('parseAlertListQuery', () => {
  it('defaults to the active alerts, first page of 50, no filters', () => {
    expect(parseAlertListQuery({ unrelated: 'x' })).toEqual({
      success: true,
      data: { limit: 50, offset: 0, status: 'active' },
    });
  });

  it('reads every filter', () => {
    expect(
      parseAlertListQuery({
        status: 'all',
        severity: 'info',
        service_id: serviceId,
        rule_id: ruleId,
        limit: '10',
        offset: '20',
      }),
    ).toEqual({
      success: true,
      data: {
        status: 'all',
        severity: 'info',
        service_id: serviceId,
        rule_id: ruleId,
        limit: 10,
        offset: 20,
      },
    });
    expect(parseAlertListQuery({ status: 'resolved' })).toMatchObject({
      data: { status: 'resolved' },
    });
  });

  it('refuses unknown enum values and malformed ids, naming each parameter', () => {
    expect(
      parseAlertListQuery({
        status: 'open',
        severity: 'CRITICAL',
        service_id: 'web-1',
        rule_id: serviceId,
        limit: '0',
      }),
    ).toEqual({
      success: false,
      issues: [
        { parameter: 'limit', message: 'must be an integer from 1 to 100' },
        { parameter: 'status', message: 'must be one of active, resolved, all' },
        { parameter: 'severity', message: 'must be one of critical, warning, info' },
        { parameter: 'service_id', message: 'must be an id of the form svc_<ULID>' },
        { parameter: 'rule_id', message: 'must be an id of the form rul_<ULID>' },
      ],
    });
  });

  it('refuses a repeated parameter', () => {
    expect(parseAlertListQuery({ status: ['active', 'resolved'] })).toEqual({
      success: false,
      issues: [{ parameter: 'status', message: 'must be one of active, resolved, all' }],
    });
  });
});

describe('alertListResponseSchema', () => {
  it('requires the alerts and the pagination', () => {
    const pagination = { limit: 50, offset: 0, total: 0, has_more: false };
    expect(alertListResponseSchema.safeParse({ alerts: [], pagination }).success).toBe(true);
    expect(alertListResponseSchema.safeParse({ alerts: [] }).success).toBe(false);
  });
});
