import { describe, expect, it } from 'vitest';
import { createApiRouter } from './api-router.js';
import type { OpenApiDocument } from './openapi-document.js';
import { createOpenApiDocument, toOpenApiPath } from './openapi-document.js';
import { responseSchema } from './testing/documented-answers.js';
import { createRouterDeps, serviceId } from './testing/router-fixtures.js';

// That the router answers as the document says is checked by each routes' test file, on every
// exchange it made (`expectAnswersDocumented`).
describe('the OpenAPI document', () => {
  const document: OpenApiDocument = createOpenApiDocument();

  it('documents every route the router serves', () => {
    const router = createApiRouter(createRouterDeps().deps);
    const served = router.stack.flatMap((layer) => {
      const route = layer.route as { path: string; methods: Record<string, boolean> } | undefined;
      if (route === undefined) return [];
      return Object.keys(route.methods)
        .filter((method) => method !== '_all')
        .map((method) => `${method} ${toOpenApiPath(route.path)}`);
    });
    expect(served.length).toBeGreaterThan(0);
    const documented = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      Object.keys(item as object).map((method) => `${method} ${path}`),
    );
    expect(documented).toEqual(expect.arrayContaining(served));
  });

  it('refuses a body that drifted from it', () => {
    const validate = responseSchema('/api/v1/services', 'get', 200, 'application/json');
    const service = {
      id: serviceId,
      name: 'web-1',
      status: 'healthy',
      last_seen: '2026-11-22T10:29:00.000Z',
      metrics: {},
      tags: {},
    };
    const pagination = { limit: 50, offset: 0, total: 1, has_more: false };
    expect(validate!({ services: [service], pagination })).toBe(true);
    expect(validate!({ services: [{ ...service, status: 'down' }], pagination })).toBe(false);
    expect(validate!({ services: [{ ...service, last_seen: undefined }], pagination })).toBe(false);
    expect(validate!({ services: [service] })).toBe(false);
  });
});
