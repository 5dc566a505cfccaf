import { describe, expect, it } from 'vitest';
import {
  investigationDetailSchema,
  parseInvestigationListQuery,
  parseInvestigationRequest,
} from './investigations.js';

const alertId = 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0A';
const serviceId = 'svc_01JDQ4ZK8X3N7Q9V5R2T6W8Y0B';
const nowMs = Date.parse('2026-11-22T10:30:00.000Z');

function issues(body: unknown) {
  const result = parseInvestigationRequest(body, nowMs);
  return result.success
    ? []
    : result.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
}

describe('parseInvestigationRequest', () => {
  it('reads an alert', () => {
    expect(parseInvestigationRequest({ alert_id: alertId }, nowMs)).toEqual({
      success: true,
      data: { kind: 'alert', alertId },
    });
  });

  it('reads a service and a range, offsets normalised to UTC', () => {
    expect(
      parseInvestigationRequest(
        { service_id: serviceId, from: '2026-11-22T09:00:00+01:00', to: '2026-11-22T10:00:00Z' },
        nowMs,
      ),
    ).toEqual({
      success: true,
      data: {
        kind: 'service',
        serviceId,
        from: new Date('2026-11-22T08:00:00.000Z'),
        to: new Date('2026-11-22T10:00:00.000Z'),
      },
    });
  });

  it('accepts a range of exactly 7 days ending up to 10 minutes ahead', () => {
    expect(
      issues({ service_id: serviceId, from: '2026-11-15T10:40:00Z', to: '2026-11-22T10:40:00Z' }),
    ).toEqual([]);
  });

  it('refuses a range that is empty, reversed, too long or in the future', () => {
    const range = (from: string, to: string) => issues({ service_id: serviceId, from, to });
    expect(range('2026-11-22T10:00:00Z', '2026-11-22T10:00:00Z')).toEqual([
      { path: 'to', message: 'must be after from' },
    ]);
    expect(range('2026-11-22T10:00:00Z', '2026-11-22T09:00:00Z')).toEqual([
      { path: 'to', message: 'must be after from' },
    ]);
    expect(range('2026-11-15T09:59:59Z', '2026-11-22T10:00:00Z')).toEqual([
      { path: 'to', message: 'must be at most 7 days after from' },
    ]);
    expect(range('2026-11-22T10:00:00Z', '2026-11-22T10:41:00Z')).toEqual([
      { path: 'to', message: 'must not be in the future' },
    ]);
  });

  it('refuses malformed ids and times at their paths', () => {
    expect(issues({ alert_id: 'alr_1' })).toEqual([
      { path: 'alert_id', message: 'must be an id of the form alr_<ULID>' },
    ]);
    expect(issues({ service_id: alertId, from: 'yesterday', to: 5 })).toEqual([
      { path: 'service_id', message: 'must be an id of the form svc_<ULID>' },
      { path: 'from', message: 'must be an ISO 8601 date-time such as 2026-11-22T10:00:00Z' },
      { path: 'to', message: 'must be an ISO 8601 date-time such as 2026-11-22T10:00:00Z' },
    ]);
  });

  it('refuses a mix of both forms, a missing field, unknown fields and a non-object', () => {
    expect(
      issues({ alert_id: alertId, service_id: serviceId, from: '2026-11-22T10:00:00Z' }),
    ).toEqual([
      { path: 'service_id', message: 'is not allowed with alert_id' },
      { path: 'from', message: 'is not allowed with alert_id' },
    ]);
    expect(issues({ service_id: serviceId, to: '2026-11-22T10:00:00Z' })).toEqual([
      { path: 'from', message: 'is required' },
    ]);
    expect(issues({})).toEqual([
      { path: '', message: 'must give alert_id, or service_id with from and to' },
    ]);
    expect(issues({ alert_id: alertId, reason: 'x' })).toEqual([
      { path: 'reason', message: 'is not a field of this body' },
    ]);
    expect(issues('alr')).toEqual([{ path: '', message: 'must be a JSON object' }]);
  });
});

describe('parseInvestigationListQuery', () => {
  it('reads the filters, all optional', () => {
    expect(parseInvestigationListQuery({})).toEqual({
      success: true,
      data: { limit: 50, offset: 0 },
    });
    expect(
      parseInvestigationListQuery({ status: 'running', alert_id: alertId, service_id: serviceId }),
    ).toMatchObject({ data: { status: 'running', alert_id: alertId, service_id: serviceId } });
  });

  it('refuses bad values, naming each parameter', () => {
    expect(
      parseInvestigationListQuery({ status: 'done', alert_id: serviceId, service_id: '' }),
    ).toEqual({
      success: false,
      issues: [
        { parameter: 'status', message: 'must be one of queued, running, completed, failed' },
        { parameter: 'alert_id', message: 'must be an id of the form alr_<ULID>' },
        { parameter: 'service_id', message: 'must be an id of the form svc_<ULID>' },
      ],
    });
  });
});

describe('investigationDetailSchema', () => {
  const detail = {
    id: 'inv_01JDQ4ZK8X3N7Q9V5R2T6W8Y0C',
    alert_id: alertId,
    service_id: serviceId,
    title: 'cpu high on web-1',
    status: 'completed',
    findings: [{ title: 't', detail: 'd', evidence: { cpu_percent: 97 } }],
    created_at: '2026-11-22T10:00:00.000Z',
    updated_at: '2026-11-22T10:01:00.000Z',
    completed_at: '2026-11-22T10:01:00.000Z',
    analysis: { summary: 's', root_cause: 'inconclusive', confidence: 0.2, method: 'statistical' },
    timeline: [{ at: '2026-11-22T10:00:00.000Z', type: 'alert_fired', description: 'd', data: {} }],
    recommendations: [{ title: 't', detail: 'd', priority: 'high' }],
  };

  it('accepts the contract’s shapes, and a null analysis before completion', () => {
    expect(investigationDetailSchema.parse(detail)).toEqual(detail);
    expect(
      investigationDetailSchema.safeParse({ ...detail, status: 'queued', analysis: null }).success,
    ).toBe(true);
  });

  it('refuses a confidence outside 0..1 and an unknown priority', () => {
    expect(
      investigationDetailSchema.safeParse({
        ...detail,
        analysis: { ...detail.analysis, confidence: 1.5 },
      }).success,
    ).toBe(false);
    expect(
      investigationDetailSchema.safeParse({
        ...detail,
        recommendations: [{ title: 't', detail: 'd', priority: 'urgent' }],
      }).success,
    ).toBe(false);
  });
});
