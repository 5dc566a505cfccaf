import { describe, expect, it } from 'vitest';
import { problemBody } from '@monitor/testkit/builders';
import { DatabaseUnavailableError } from '@monitor/db';
import { createApiRouter } from './api-router.js';
import { expectAnswersDocumented } from './testing/documented-answers.js';
import { createRouterDeps, nowMs, otherServiceId, serviceId } from './testing/router-fixtures.js';
import { serveRouter } from './testing/serve-router.js';

const { fakes, deps } = createRouterDeps();
const { call, exchanges } = serveRouter(() => createApiRouter({ ...deps, nowMs: () => nowMs }));

describe('serviceRoutes, served', () => {
  describe('GET /api/v1/services', () => {
    it('lists the key’s organization with filters and pagination', async () => {
      const result = await call('/api/v1/services?limit=1&offset=1&status=critical&tag.env=prod', {
        key: 'read-key',
      });
      expect(result).toEqual({
        status: 200,
        headers: expect.anything(),
        body: {
          services: [
            {
              id: serviceId,
              name: 'web-1',
              status: 'critical',
              last_seen: '2026-11-22T10:29:00.000Z',
              metrics: { cpu_percent: 97 },
              tags: { env: 'prod' },
            },
          ],
          pagination: { limit: 1, offset: 1, total: 3, has_more: true },
        },
      });
      expect(fakes.services.calls.list.at(-1)).toEqual({
        orgId: 'org_a',
        status: 'critical',
        tags: { env: 'prod' },
        limit: 1,
        offset: 1,
        now: new Date(nowMs),
      });
    });

    it('answers 422 naming the parameter and its bounds', async () => {
      const result = await call('/api/v1/services?limit=101&status=down', { key: 'read-key' });
      expect(result).toMatchObject({
        status: 422,
        body: {
          detail: expect.stringContaining('limit: must be an integer from 1 to 100'),
          errors: [
            { path: 'limit', message: 'must be an integer from 1 to 100' },
            { path: 'status', message: 'must be one of healthy, warning, critical, stale' },
          ],
        },
      });
    });

    it('answers 503 with Retry-After when the database is unreachable', async () => {
      fakes.services.failWith(new DatabaseUnavailableError(new Error('connect ECONNREFUSED')));
      try {
        const result = await call('/api/v1/services', { key: 'read-key' });
        expect(result).toMatchObject({ status: 503, body: problemBody(503) });
        expect(result.headers.get('retry-after')).toBe('2');
      } finally {
        fakes.services.failWith(undefined);
      }
    });
  });

  describe('GET /api/v1/services/:id', () => {
    it('answers the detail with snapshot and active alerts', async () => {
      const result = await call(`/api/v1/services/${serviceId}`, { key: 'read-key' });
      expect(result).toMatchObject({
        status: 200,
        body: {
          id: serviceId,
          snapshot_at: '2026-11-22T10:29:00.000Z',
          docker_containers: [{ name: 'api' }],
          processes: [{ name: 'node', pid: 7 }],
          active_alerts: [
            {
              id: 'alr_01JDQ4ZK8X3N7Q9V5R2T6W8Y0C',
              rule_name: 'cpu high',
              severity: 'critical',
              fired_at: '2026-11-22T10:25:00.000Z',
              resolved_at: null,
            },
          ],
        },
      });
    });

    it('answers 404 for an unknown or malformed id', async () => {
      expect(await call(`/api/v1/services/${otherServiceId}`, { key: 'read-key' })).toMatchObject({
        status: 404,
        body: problemBody(404),
      });
      expect((await call('/api/v1/services/not-an-id', { key: 'read-key' })).status).toBe(404);
      expect(
        (await call('/api/v1/services/svc_01jdq4zk8x3n7q9v5r2t6w8y0a', { key: 'read-key' })).status,
      ).toBe(404);
    });
  });

  describe('GET /api/v1/services/:id/metrics', () => {
    it('reads the series with the defaults applied', async () => {
      const result = await call(`/api/v1/services/${serviceId}/metrics?metric=cpu_percent`, {
        key: 'read-key',
      });
      expect(result).toMatchObject({
        status: 200,
        body: {
          metric: 'cpu_percent',
          step: '1m',
          from: '2026-11-22T09:30:00.000Z',
          to: '2026-11-22T10:30:00.000Z',
          points: [{ time: '2026-11-22T10:00:00.000Z', avg: 2, min: 1, max: 3, count: 2 }],
        },
      });
      expect(fakes.services.calls.series.at(-1)).toEqual({
        orgId: 'org_a',
        serviceId,
        metric: 'cpu_percent',
        step: '1m',
        from: new Date('2026-11-22T09:30:00.000Z'),
        to: new Date('2026-11-22T10:30:00.000Z'),
      });
    });

    it('answers 422 for a missing metric or a bad range, and 404 for another service', async () => {
      const missing = await call(`/api/v1/services/${serviceId}/metrics`, { key: 'read-key' });
      expect(missing).toMatchObject({
        status: 422,
        body: { errors: [{ path: 'metric', message: 'is required' }] },
      });
      const tooLong = await call(
        `/api/v1/services/${serviceId}/metrics?metric=m&step=1m&from=2026-11-01T00:00:00Z`,
        { key: 'read-key' },
      );
      expect(tooLong).toMatchObject({ status: 422, body: { errors: [{ path: 'step' }] } });
      expect(
        (await call(`/api/v1/services/${otherServiceId}/metrics?metric=m`, { key: 'read-key' }))
          .status,
      ).toBe(404);
    });
  });

  it('answers as the OpenAPI document says', () => {
    expect(exchanges.length).toBeGreaterThan(5);
    expectAnswersDocumented(exchanges);
  });
});
