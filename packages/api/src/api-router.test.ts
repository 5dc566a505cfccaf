import { describe, expect, it } from 'vitest';
import { problemBody } from '@monitor/testkit/builders';
import { createApiRouter } from './api-router.js';
import { expectAnswersDocumented } from './testing/documented-answers.js';
import {
  alertRow,
  completedInvestigation,
  createRouterDeps,
  nowMs,
  serviceId,
} from './testing/router-fixtures.js';
import { serveRouter } from './testing/serve-router.js';

const { deps } = createRouterDeps();
const { call, exchanges } = serveRouter(() => createApiRouter({ ...deps, nowMs: () => nowMs }));

describe('createApiRouter', () => {
  describe('authentication', () => {
    it('answers 401 with a problem for a missing or unknown key', async () => {
      const missing = await call('/api/v1/services');
      expect(missing).toMatchObject({ status: 401, body: problemBody(401) });
      expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(missing.headers.get('www-authenticate')).toContain('Bearer');
      expect((await call('/api/v1/services/' + serviceId, { key: 'nope' })).status).toBe(401);
    });

    it('answers 403 for a key without the read scope', async () => {
      const result = await call('/api/v1/services', { key: 'ingest-key' });
      expect(result).toMatchObject({ status: 403, body: problemBody(403) });
    });

    it('accepts the key as a bearer token', async () => {
      expect((await call('/api/v1/services', { bearer: 'read-key' })).status).toBe(200);
    });

    it('serves the OpenAPI document without a key', async () => {
      const result = await call('/api/v1/openapi.json');
      expect(result).toMatchObject({ status: 200, body: { openapi: '3.1.0' } });
    });
  });

  it('answers 405 with Allow for another method on a known path, 404 on an unknown one', async () => {
    for (const path of [
      '/api/v1/services',
      `/api/v1/services/${serviceId}`,
      '/api/v1/openapi.json',
      '/api/v1/alerts',
      `/api/v1/alerts/${alertRow.id}`,
      `/api/v1/investigations/${completedInvestigation.id}`,
    ]) {
      const result = await call(path, { method: 'POST', key: 'read-key' });
      expect(result).toMatchObject({ status: 405, body: problemBody(405) });
      expect(result.headers.get('allow')).toBe('GET, HEAD');
    }
    for (const [path, allow] of [
      ['/api/v1/alerts/rules', 'GET, POST, HEAD'],
      ['/api/v1/alerts/rules/rul_01JDQ4ZK8X3N7Q9V5R2T6W8Y0Z', 'GET, PATCH, DELETE, HEAD'],
      ['/api/v1/investigations', 'GET, POST, HEAD'],
    ]) {
      const result = await call(path!, { method: 'PUT', key: 'write-key' });
      expect(result).toMatchObject({ status: 405, body: problemBody(405) });
      expect(result.headers.get('allow')).toBe(allow);
    }
    expect((await call('/api/v1/nothing', { key: 'read-key' })).status).toBe(404);
  });

  it('answers as the OpenAPI document says', () => {
    expect(exchanges.length).toBeGreaterThan(10);
    expectAnswersDocumented(exchanges);
  });
});
