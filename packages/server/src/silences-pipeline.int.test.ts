// @services postgres
import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import type { HttpReceiver } from '@monitor/testkit';
import { startHttpReceiver } from '@monitor/testkit';
import type { ApiExchange } from '@monitor/testkit/builders';
import { buildAlertRuleCreateRequest, createApiCall, waitFor } from '@monitor/testkit/builders';
import { postIngest } from './testing/ingest-client.js';
import type { MonitorStack } from './testing/monitor-stack.js';
import { createMonitorStack } from './testing/monitor-stack.js';
import { expectExchangesDocumented } from './testing/openapi-conformance.js';

/**
 * Silences act on notifications, not on truth, end to end in the embedded service (`monitor
 * all`: every role in one process, real PostgreSQL): a silenced alert still fires and opens its
 * investigation, its message is recorded `suppressed` and never reaches the receiver, and
 * expiring the silence on the still-active alert notifies it then.
 */

const key = `mon_test_${randomBytes(16).toString('hex')}`;
const minuteMs = 60_000;
const exchanges: ApiExchange[] = [];
let stack: MonitorStack | undefined;
let webhook: HttpReceiver | undefined;

afterAll(async () => {
  await stack?.stop();
  await webhook?.close();
});

it('fires a silenced alert without sending it, and notifies it once the silence is expired', async () => {
  webhook = await startHttpReceiver();
  stack = await createMonitorStack(
    'silences_pipeline',
    { MONITOR_BOOTSTRAP_API_KEY: key },
    {
      bus: 'in-process',
    },
  );
  const monitor = await stack.start('all');
  const call = createApiCall({ baseUrl: monitor.baseUrl, key, exchanges });

  expect(
    (
      await call('/api/v1/notification-channels/webhook', {
        method: 'PUT',
        body: { url: webhook.url, secret: 'whsec-0123456789abcdef' },
      })
    ).status,
  ).toBe(200);
  const rule = await call<{ id: string }>('/api/v1/alerts/rules', {
    method: 'POST',
    body: buildAlertRuleCreateRequest({ channels: ['webhook'] }),
  });
  expect(rule.status).toBe(201);
  const silence = await call<{ id: string; state: string }>('/api/v1/silences', {
    method: 'POST',
    body: {
      matchers: { host: 'db-7', rule_id: rule.body.id },
      starts_at: new Date(Date.now() - minuteMs).toISOString(),
      ends_at: new Date(Date.now() + 60 * minuteMs).toISOString(),
      comment: 'failover drill',
    },
  });
  expect(silence.body.state).toBe('active');

  const ingest = await postIngest(
    monitor.baseUrl,
    { host: 'db-7', metrics: { cpu_percent: 99 } },
    { key },
  );
  expect(ingest.status).toBe(200);

  type AlertItem = { id: string; status: string; silenced: boolean; investigation_id: string };
  const [alert] = await waitFor(
    async () => {
      const list = await call<{ alerts: AlertItem[] }>('/api/v1/alerts');
      return list.body.alerts.length > 0 ? list.body.alerts : undefined;
    },
    20_000,
    'the silenced alert to fire',
  );
  // The truth is untouched: it fired, it is active, its investigation is open.
  expect(alert).toMatchObject({ status: 'active', silenced: true });
  expect(alert!.investigation_id).toMatch(/^inv_/);

  type Outbox = { notifications: { transition: string; status: string }[] };
  const suppressed = await waitFor(
    async () => {
      const outbox = await call<Outbox>(`/api/v1/alerts/${alert!.id}/notifications`);
      const statuses = outbox.body.notifications.map((n) => `${n.transition}:${n.status}`);
      return statuses.includes('fired:suppressed') ? statuses : undefined;
    },
    20_000,
    'the fired message to be recorded suppressed',
  );
  expect(suppressed).toEqual(['fired:suppressed']);
  expect(webhook.accepted()).toEqual([]);

  // Expired: the still-active alert is notified now, once.
  expect((await call(`/api/v1/silences/${silence.body.id}`, { method: 'DELETE' })).status).toBe(
    204,
  );
  await waitFor(
    () => Promise.resolve(webhook!.accepted().length > 0 ? true : undefined),
    20_000,
    'the alert to be notified once its silence ended',
  );
  const [message] = webhook.accepted();
  expect(JSON.parse(message!.body.toString('utf8'))).toMatchObject({
    transition: 'unsilenced',
    alert: { id: alert!.id, status: 'active', silenced: false },
  });
  expect(message!.headers['idempotency-key']).toBe(`${alert!.id}:unsilenced:1`);
  const listed = await call<{ silences: { id: string; state: string }[] }>(
    '/api/v1/silences?state=expired',
  );
  expect(listed.body.silences.map((s) => [s.id, s.state])).toEqual([[silence.body.id, 'expired']]);

  const served = await fetch(`${monitor.baseUrl}/api/v1/openapi.json`);
  expectExchangesDocumented(exchanges, (await served.json()) as never);
});
