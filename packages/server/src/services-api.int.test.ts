// @services postgres kafka
import { afterAll, beforeAll, describe } from 'vitest';
import type { LocalApiTarget } from './testing/monitor-stack.js';
import { startLocalApiTarget } from './testing/monitor-stack.js';
import { describeServicesApi } from './testing/http-api/services.suite.js';

/**
 * The services API suite against this checkout's processes, three times: separate gateway,
 * writer and api processes over Kafka, the same over three sample shards (the control database
 * and two others, partitions placed round-robin), and the embedded default (role `all`, the
 * in-process bus). The same suite runs against the compose stack in
 * `compose-stack.container.test.ts`.
 */
describe.each(['kafka', 'sharded', 'embedded'] as const)('services API in %s mode', (mode) => {
  let target: LocalApiTarget | undefined;

  beforeAll(async () => {
    target = await startLocalApiTarget('services_api', mode);
  });

  afterAll(async () => {
    await target?.stop();
  });

  describeServicesApi(() => target!, []);
});
