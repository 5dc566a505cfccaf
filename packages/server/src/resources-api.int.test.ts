// @services postgres
import { afterAll, beforeAll, describe } from 'vitest';
import { describeResourcesApi } from './testing/http-api/resources.suite.js';
import type { LocalApiTarget } from './testing/monitor-stack.js';
import { startLocalApiTarget } from './testing/monitor-stack.js';
import type { Exchange } from './testing/openapi-conformance.js';

/**
 * The resources suite (alert rules, alerts, notification channels, investigations) against the
 * embedded default: role `all`, every role in one process over the in-process bus, so the
 * notifier and the investigator work behind the API as they do in production.
 */
describe('role all', () => {
  let target: LocalApiTarget;
  const exchanges: Exchange[] = [];

  beforeAll(async () => {
    target = await startLocalApiTarget('resources_api', 'embedded');
  });

  afterAll(async () => {
    await target?.stop();
  });

  describeResourcesApi(() => target, exchanges);
});
