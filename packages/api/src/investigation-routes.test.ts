import { describe, expect, it } from 'vitest';
import { problemBody } from '@monitor/testkit/builders';
import { createApiRouter } from './api-router.js';
import { expectAnswersDocumented } from './testing/documented-answers.js';
import {
  alertRow,
  completedInvestigation,
  createRouterDeps,
  nowMs,
  otherServiceId,
  resolvedAlertRow,
  serviceId,
} from './testing/router-fixtures.js';
import { serveRouter } from './testing/serve-router.js';

const { fakes, deps } = createRouterDeps();
const { call, exchanges } = serveRouter(() => createApiRouter({ ...deps, nowMs: () => nowMs }));

describe('investigationRoutes, served', () => {
  describe('investigations', () => {
    const investigationsPath = '/api/v1/investigations';

    it('lists with findings, passing the filters on', async () => {
      const result = await call(
        `${investigationsPath}?status=completed&alert_id=${resolvedAlertRow.id}&service_id=${serviceId}`,
        { key: 'read-key' },
      );
      expect(result).toMatchObject({
        status: 200,
        body: {
          investigations: [
            {
              id: completedInvestigation.id,
              alert_id: resolvedAlertRow.id,
              service_id: serviceId,
              title: 'cpu high on web-1',
              status: 'completed',
              findings: completedInvestigation.findings,
              created_at: '2026-11-22T10:25:00.000Z',
              updated_at: '2026-11-22T10:26:00.000Z',
              completed_at: '2026-11-22T10:26:00.000Z',
            },
          ],
        },
      });
      expect((result.body as { investigations: object[] }).investigations[0]).not.toHaveProperty(
        'analysis',
      );
      expect(fakes.investigations.calls.at(-1)).toEqual({
        orgId: 'org_a',
        status: 'completed',
        alertId: resolvedAlertRow.id,
        serviceId,
        limit: 50,
        offset: 0,
      });
      expect(
        await call(`${investigationsPath}?status=done&alert_id=x`, { key: 'read-key' }),
      ).toMatchObject({
        status: 422,
        body: {
          errors: [
            { path: 'status', message: 'must be one of queued, running, completed, failed' },
            { path: 'alert_id', message: 'must be an id of the form alr_<ULID>' },
          ],
        },
      });
    });

    it('reads the detail with analysis, timeline and recommendations', async () => {
      const result = await call(`${investigationsPath}/${completedInvestigation.id}`, {
        key: 'read-key',
      });
      expect(result).toMatchObject({
        status: 200,
        body: {
          id: completedInvestigation.id,
          analysis: completedInvestigation.analysis,
          timeline: completedInvestigation.timeline,
          recommendations: completedInvestigation.recommendations,
        },
      });
      for (const [path, key] of [
        [`${investigationsPath}/${completedInvestigation.id}`, 'other-key'],
        [`${investigationsPath}/inv_01JDQ4ZK8X3N7Q9V5R2T6W8Y0Z`, 'read-key'],
        [`${investigationsPath}/nope`, 'read-key'],
      ] as const) {
        expect(await call(path, { key })).toMatchObject({ status: 404, body: problemBody(404) });
      }
    });

    it('opens one for an alert: 202 and Location; asking again answers the same one', async () => {
      const first = await call(investigationsPath, {
        method: 'POST',
        key: 'write-key',
        body: { alert_id: alertRow.id },
      });
      expect(first).toMatchObject({
        status: 202,
        body: {
          id: expect.stringMatching(/^inv_/),
          alert_id: alertRow.id,
          status: 'queued',
          analysis: null,
          findings: [],
          timeline: [],
          recommendations: [],
          completed_at: null,
        },
      });
      const { id } = first.body as { id: string };
      expect(first.headers.get('location')).toBe(`${investigationsPath}/${id}`);
      const again = await call(investigationsPath, {
        method: 'POST',
        key: 'write-key',
        body: { alert_id: alertRow.id },
      });
      expect(again).toMatchObject({ status: 202, body: { id } });
      const investigated = await call(investigationsPath, {
        method: 'POST',
        key: 'write-key',
        body: { alert_id: resolvedAlertRow.id },
      });
      expect(investigated).toMatchObject({
        status: 202,
        body: { id: completedInvestigation.id, status: 'completed' },
      });
    });

    it('opens one for a service over a range', async () => {
      const result = await call(investigationsPath, {
        method: 'POST',
        key: 'write-key',
        body: { service_id: serviceId, from: '2026-11-22T08:00:00Z', to: '2026-11-22T10:00:00Z' },
      });
      expect(result).toMatchObject({ status: 202, body: { alert_id: null, status: 'queued' } });
      expect(fakes.investigations.serviceCalls.at(-1)).toEqual({
        orgId: 'org_a',
        serviceId,
        from: new Date('2026-11-22T08:00:00Z'),
        to: new Date('2026-11-22T10:00:00Z'),
      });
    });

    it('answers 422 for an alert or service the organization does not have', async () => {
      expect(
        await call(investigationsPath, {
          method: 'POST',
          key: 'other-key',
          body: { alert_id: alertRow.id },
        }),
      ).toMatchObject({
        status: 422,
        body: { errors: [{ path: 'alert_id', message: 'names no alert of this organization' }] },
      });
      expect(
        await call(investigationsPath, {
          method: 'POST',
          key: 'write-key',
          body: {
            service_id: otherServiceId,
            from: '2026-11-22T08:00:00Z',
            to: '2026-11-22T09:00:00Z',
          },
        }),
      ).toMatchObject({
        status: 422,
        body: {
          errors: [{ path: 'service_id', message: 'names no service of this organization' }],
        },
      });
    });

    it('answers 422 for an invalid body and 403 without the write scope', async () => {
      const invalid = async (body: unknown) =>
        (await call(investigationsPath, { method: 'POST', key: 'write-key', body })).body;
      expect(await invalid({ alert_id: alertRow.id, service_id: serviceId })).toMatchObject({
        status: 422,
        errors: [{ path: 'service_id', message: 'is not allowed with alert_id' }],
      });
      expect(await invalid({ service_id: serviceId, from: '2026-11-22T08:00:00Z' })).toMatchObject({
        errors: [{ path: 'to', message: 'is required' }],
      });
      expect(
        await invalid({
          service_id: serviceId,
          from: '2026-11-01T00:00:00Z',
          to: '2026-11-22T00:00:00Z',
        }),
      ).toMatchObject({ errors: [{ path: 'to', message: 'must be at most 7 days after from' }] });
      expect(await invalid([])).toMatchObject({
        errors: [{ path: '', message: 'must be a JSON object' }],
      });
      expect(
        await call(investigationsPath, {
          method: 'POST',
          key: 'read-key',
          body: { alert_id: alertRow.id },
        }),
      ).toMatchObject({ status: 403 });
    });
  });

  it('answers as the OpenAPI document says', () => {
    expect(exchanges.length).toBeGreaterThan(10);
    expectAnswersDocumented(exchanges);
  });
});
