// @services postgres
import { afterAll, beforeAll, describe } from 'vitest';
import type { LocalApiTarget } from './testing/monitor-stack.js';
import { startLocalApiTarget } from './testing/monitor-stack.js';
import { describeAlertingApi } from './testing/http-api/alerting.suite.js';

/**
 * The alerting API suite against the embedded default (role `all`). The same suite runs against
 * the compose stack in `compose-stack.container.test.ts`.
 */
describe('alerting API in embedded mode', () => {
  let target: LocalApiTarget | undefined;

  beforeAll(async () => {
    target = await startLocalApiTarget('alerting_api', 'embedded');
  });

  afterAll(async () => {
    await target?.stop();
  });

  describeAlertingApi(() => target!, []);
});
