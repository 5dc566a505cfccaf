// @services postgres
import { afterAll, beforeAll, describe } from 'vitest';
import type { LocalApiTarget } from './testing/monitor-stack.js';
import { startLocalApiTarget } from './testing/monitor-stack.js';
import { describeAlertRulesApi } from './testing/http-api/alert-rules.suite.js';
import { describeAlertsApi } from './testing/http-api/alerts.suite.js';
import { describeInvestigationsApi } from './testing/http-api/investigations.suite.js';
import { describeNotificationChannelsApi } from './testing/http-api/notification-channels.suite.js';
import { describeSilencesApi } from './testing/http-api/silences.suite.js';

/**
 * The suites of the resources around alerting (alert rules, alerts, silences, notification
 * channels, investigations) against the embedded default: role `all`, every role in one process
 * over the in-process bus, so the notifier and the investigator work behind the API as they do
 * in production. Each suite works in organizations of its own. The same suites run against the
 * compose stack in `compose-stack.container.test.ts`.
 */
describe('alerting API in embedded mode', () => {
  let target: LocalApiTarget | undefined;

  beforeAll(async () => {
    target = await startLocalApiTarget('alerting_api', 'embedded');
  });

  afterAll(async () => {
    await target?.stop();
  });

  describeAlertRulesApi(() => target!, []);
  describeAlertsApi(() => target!, []);
  describeSilencesApi(() => target!, []);
  describeNotificationChannelsApi(() => target!, []);
  describeInvestigationsApi(() => target!, []);
});
