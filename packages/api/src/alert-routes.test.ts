import { describe, expect, it } from 'vitest';
import { buildAlertResponse } from '@monitor/testkit/builders';
import { createApiRouter } from './api-router.js';
import { expectAnswersDocumented } from './testing/documented-answers.js';
import {
  alertRow,
  createRouterDeps,
  nowMs,
  resolvedAlertRow,
  serviceId,
} from './testing/router-fixtures.js';
import { serveRouter } from './testing/serve-router.js';

const { fakes, deps } = createRouterDeps();
const { call, exchanges } = serveRouter(() => createApiRouter({ ...deps, nowMs: () => nowMs }));

describe('alertRoutes, served', () => {
  describe('alerts', () => {
    it('lists active alerts by default with every field', async () => {
      const result = await call('/api/v1/alerts', { key: 'read-key' });
      expect(result).toMatchObject({
        status: 200,
        body: {
          alerts: [
            buildAlertResponse({
              id: resolvedAlertRow.id,
              service_id: serviceId,
              status: 'resolved',
              resolved_at: '2026-11-22T10:28:00.000Z',
              investigation_id: 'inv_01JDQ4ZK8X3N7Q9V5R2T6W8Y0F',
            }),
            buildAlertResponse({ id: alertRow.id, service_id: serviceId }),
          ],
          pagination: { limit: 50, offset: 0, total: 12, has_more: true },
        },
      });
      expect(fakes.alerts.calls.at(-1)).toEqual({
        orgId: 'org_a',
        status: 'active',
        severity: undefined,
        serviceId: undefined,
        ruleId: undefined,
        acknowledged: undefined,
        silenced: undefined,
        reason: undefined,
        now: new Date(nowMs),
        limit: 50,
        offset: 0,
      });
    });

    it('passes every filter on', async () => {
      await call(
        `/api/v1/alerts?status=all&severity=warning&service_id=${serviceId}&rule_id=${alertRow.ruleId}&limit=5&offset=10&acknowledged=false&silenced=true&reason=no_data`,
        { key: 'read-key' },
      );
      expect(fakes.alerts.calls.at(-1)).toEqual({
        orgId: 'org_a',
        status: 'all',
        severity: 'warning',
        serviceId,
        ruleId: alertRow.ruleId,
        acknowledged: false,
        silenced: true,
        reason: 'no_data',
        now: new Date(nowMs),
        limit: 5,
        offset: 10,
      });
    });

    it('answers 422 naming each unknown filter value', async () => {
      const result = await call(
        '/api/v1/alerts?status=open&severity=fatal&service_id=web-1&rule_id=rul_1' +
          '&acknowledged=yes&silenced=1&reason=quiet',
        { key: 'read-key' },
      );
      expect(result).toMatchObject({
        status: 422,
        body: {
          errors: [
            { path: 'status', message: 'must be one of active, resolved, all' },
            { path: 'severity', message: 'must be one of critical, warning, info' },
            { path: 'service_id', message: 'must be an id of the form svc_<ULID>' },
            { path: 'rule_id', message: 'must be an id of the form rul_<ULID>' },
            { path: 'acknowledged', message: 'must be true or false' },
            { path: 'silenced', message: 'must be true or false' },
            { path: 'reason', message: 'must be one of threshold, no_data' },
          ],
        },
      });
    });

    it('reads one alert; another organization’s or a malformed id is 404', async () => {
      expect(await call(`/api/v1/alerts/${alertRow.id}`, { key: 'read-key' })).toMatchObject({
        status: 200,
        body: { id: alertRow.id, rule_name: 'cpu high' },
      });
      expect((await call(`/api/v1/alerts/${alertRow.id}`, { key: 'other-key' })).status).toBe(404);
      expect((await call('/api/v1/alerts/alr_nope', { key: 'read-key' })).status).toBe(404);
    });

    it('routes /api/v1/alerts/rules to the rules, not to an alert id', async () => {
      expect(await call('/api/v1/alerts/rules', { key: 'read-key' })).toMatchObject({
        status: 200,
        body: { rules: expect.any(Array) },
      });
    });
  });

  it('answers as the OpenAPI document says', () => {
    expect(exchanges.length).toBeGreaterThan(5);
    expectAnswersDocumented(exchanges);
  });
});
