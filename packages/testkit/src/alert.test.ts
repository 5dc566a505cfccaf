import { describe, expect, it } from 'vitest';
import { toAlertResponse } from '@monitor/schemas';
import { buildAlert, buildAlertResponse } from './alert.js';

describe('buildAlert and buildAlertResponse', () => {
  it('build one alert in its two forms, every field as the API maps it', () => {
    expect(toAlertResponse(buildAlert())).toEqual(buildAlertResponse());
    const acknowledged = buildAlert({
      status: 'resolved',
      resolvedAt: new Date('2026-11-22T10:40:00.000Z'),
      investigationId: 'inv_01JDQ4ZK8X3N7Q9V5R2T6W8Y0F',
      acknowledgedAt: new Date('2026-11-22T10:30:00.000Z'),
      acknowledgedBy: 'key_ops',
      acknowledgementComment: 'on it',
      labels: { alertname: 'cpu high' },
      annotations: { summary: 'busy' },
    });
    expect(toAlertResponse(acknowledged)).toEqual(
      buildAlertResponse({
        status: 'resolved',
        resolved_at: '2026-11-22T10:40:00.000Z',
        investigation_id: 'inv_01JDQ4ZK8X3N7Q9V5R2T6W8Y0F',
        acknowledged_at: '2026-11-22T10:30:00.000Z',
        acknowledged_by: 'key_ops',
        acknowledgement_comment: 'on it',
        labels: { alertname: 'cpu high' },
        annotations: { summary: 'busy' },
      }),
    );
  });
});
