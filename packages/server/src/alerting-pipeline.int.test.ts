// @services postgres kafka
import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { HttpReceiver, SmtpReceiver } from '@monitor/testkit';
import { startHttpReceiver, startSmtpReceiver } from '@monitor/testkit';
import type { ApiExchange, ApiRequest } from '@monitor/testkit/builders';
import {
  buildAlertResponse,
  buildAlertRuleCreateRequest,
  createApiCall,
  waitFor,
} from '@monitor/testkit/builders';
import { postIngest } from './testing/ingest-client.js';
import type { MonitorStack } from './testing/monitor-stack.js';
import { createMonitorStack, evaluatorRulesLoaded } from './testing/monitor-stack.js';
import type { RoleProcess } from './testing/role-process.js';
import { expectExchangesDocumented } from './testing/openapi-conformance.js';

const minuteMs = 60_000;
const key = `mon_test_${randomBytes(16).toString('hex')}`;
const webhookSecret = 'whsec-0123456789abcdef';

const stacks: MonitorStack[] = [];
const receivers: { close(): Promise<void> }[] = [];

type AlertItem = {
  id: string;
  rule_id: string;
  rule_name: string;
  service_id: string;
  host: string;
  metric: string;
  condition: string;
  threshold: number;
  severity: string;
  status: string;
  value: number;
  started_at: string;
  fired_at: string;
  resolved_at: string | null;
  investigation_id: string | null;
};

/** Every API answer of the test, checked against the OpenAPI document at the end. */
const exchanges: ApiExchange[] = [];

const call = <T>(baseUrl: string, path: string, request?: ApiRequest) =>
  createApiCall({ baseUrl, key, exchanges })<T>(path, request);

afterAll(async () => {
  await Promise.all(stacks.map((stack) => stack.stop()));
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

/** Separate role processes over Kafka, and the embedded default: every role in one process. */
describe.each(['kafka', 'embedded'] as const)('alerting pipeline in %s mode', (mode) => {
  it('fires and resolves from HTTP ingest to the alerts API and Slack, email and webhook messages', async () => {
    const [slack, webhook, smtp]: [HttpReceiver, HttpReceiver, SmtpReceiver] = await Promise.all([
      startHttpReceiver(),
      // Fails the first two requests, so delivery has to retry.
      startHttpReceiver((_request, index) => (index < 2 ? 500 : 200)),
      startSmtpReceiver(),
    ]);
    receivers.push(slack, webhook, smtp);
    const stack = await createMonitorStack(
      `alerting_${mode}`,
      { MONITOR_BOOTSTRAP_API_KEY: key, SMTP_URL: smtp.url },
      { bus: mode === 'kafka' ? 'kafka' : 'in-process' },
    );
    stacks.push(stack);
    let gateway: RoleProcess, api: RoleProcess, evaluator: RoleProcess;
    if (mode === 'kafka') {
      [gateway, api, evaluator] = await Promise.all([
        stack.start('gateway'),
        stack.start('api'),
        stack.start('evaluator'),
        stack.start('writer'),
        stack.start('notifier'),
      ]);
    } else {
      gateway = api = evaluator = await stack.start('all');
    }

    for (const [type, body] of [
      ['slack', { webhook_url: slack.url }],
      ['email', { to: ['oncall@example.com'], from: 'monitor@example.com' }],
      ['webhook', { url: webhook.url, secret: webhookSecret }],
    ] as const) {
      const put = await call(api.baseUrl, `/api/v1/notification-channels/${type}`, {
        method: 'PUT',
        body,
      });
      expect(put.status).toBe(200);
    }
    const created = await call<{ id: string }>(api.baseUrl, '/api/v1/alerts/rules', {
      method: 'POST',
      body: buildAlertRuleCreateRequest({
        duration_minutes: 2,
        channels: ['slack', 'email', 'webhook'],
      }),
    });
    expect(created.status).toBe(201);
    await evaluatorRulesLoaded(evaluator.baseUrl, 1);

    // Event time: the window spans two minutes of sample time, sent within a second.
    const base = Math.floor(Date.now() / minuteMs) * minuteMs - 8 * minuteMs;
    const at = (minutes: number) => new Date(base + minutes * minuteMs).toISOString();
    const send = async (minutes: number, cpu: number) => {
      const result = await postIngest(
        gateway.baseUrl,
        { host: 'web-1', timestamp: at(minutes), metrics: { cpu_percent: cpu } },
        { key },
      );
      expect(result.status).toBe(200);
    };
    await send(0, 95);
    await send(1, 96);
    await send(2, 97);

    const fired = await waitFor(
      async () => {
        const list = await call<{ alerts: AlertItem[] }>(api.baseUrl, '/api/v1/alerts');
        return list.body.alerts.length > 0 ? list.body.alerts : undefined;
      },
      20_000,
      'the alert to fire',
    );
    expect(fired).toHaveLength(1);
    const alert = fired[0]!;
    // The rule builder's rule, fired at 97 by the third breaching minute; a critical alert
    // opens an investigation.
    expect(alert).toEqual(
      buildAlertResponse({
        id: expect.stringMatching(/^alr_/),
        rule_id: created.body.id,
        service_id: expect.stringMatching(/^svc_/),
        started_at: at(0),
        fired_at: at(2),
        investigation_id: expect.stringMatching(/^inv_/),
      }),
    );
    const service = await call<{ status: string }>(
      api.baseUrl,
      `/api/v1/services/${alert.service_id}`,
    );
    expect(service.body.status).toBe('critical');

    await send(3, 40);
    const resolved = await waitFor(
      async () => {
        const one = await call<AlertItem>(api.baseUrl, `/api/v1/alerts/${alert.id}`);
        return one.body.status === 'resolved' ? one.body : undefined;
      },
      20_000,
      'the alert to resolve',
    );
    expect(resolved.resolved_at).toBe(at(3));
    expect(
      (await call<{ alerts: AlertItem[] }>(api.baseUrl, '/api/v1/alerts')).body.alerts,
    ).toEqual([]);

    // One message per channel and transition; the webhook receiver failed twice first.
    await waitFor(
      () =>
        Promise.resolve(
          slack.accepted().length >= 2 &&
            smtp.messages.length >= 2 &&
            webhook.accepted().length >= 2
            ? true
            : undefined,
        ),
      30_000,
      'two messages on each channel',
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(slack.accepted()).toHaveLength(2);
    expect(smtp.messages).toHaveLength(2);
    expect(webhook.accepted()).toHaveLength(2);
    expect(webhook.requests).toHaveLength(4);
    // Delivery order is not promised (a message in backoff lets the next one pass): match by key.
    const keyOf = (request: { headers: Record<string, unknown> }) =>
      request.headers['idempotency-key'];
    for (const transition of ['fired', 'resolved'] as const) {
      const idempotencyKey = `${alert.id}:${transition}`;
      const slackMessage = slack.accepted().find((request) => keyOf(request) === idempotencyKey);
      expect(slackMessage?.body.toString('utf8')).toContain('web-1');
      const webhookMessage = webhook
        .accepted()
        .find((request) => keyOf(request) === idempotencyKey);
      // HMAC-SHA256 under the secret of `<X-Monitor-Timestamp>.<raw body>`, recomputed here.
      const { headers, body } = webhookMessage!;
      const signed = `${String(headers['x-monitor-timestamp'])}.${body.toString('utf8')}`;
      expect(headers['x-monitor-signature']).toBe(
        `sha256=${createHmac('sha256', webhookSecret).update(signed).digest('hex')}`,
      );
      expect(JSON.parse(body.toString('utf8'))).toMatchObject({
        transition,
        alert: { id: alert.id },
      });
      const mail = smtp.messages.find((message) => message.data.includes(idempotencyKey));
      expect(mail?.to).toEqual(['oncall@example.com']);
    }

    // Every attempt is visible under the alert, the two failures included.
    const deliveries = await call<{
      notifications: { channel: string; transition: string; status: string; attempts: number }[];
    }>(api.baseUrl, `/api/v1/alerts/${alert.id}/notifications`);
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.notifications).toHaveLength(6);
    expect(deliveries.body.notifications.every((n) => n.status === 'delivered')).toBe(true);
    const webhookAttempts = deliveries.body.notifications
      .filter((n) => n.channel === 'webhook')
      .reduce((sum, n) => sum + n.attempts, 0);
    expect(webhookAttempts).toBe(4);

    // The rest of the alerting API over the same data: rules, investigations, deletion.
    const ruleId = created.body.id;
    expect((await call(api.baseUrl, '/api/v1/alerts/rules')).status).toBe(200);
    const patched = await call<{ threshold: number }>(
      api.baseUrl,
      `/api/v1/alerts/rules/${ruleId}`,
      {
        method: 'PATCH',
        body: { threshold: 95 },
      },
    );
    expect(patched).toMatchObject({ status: 200, body: { threshold: 95 } });
    const investigation = await waitFor(
      async () => {
        const one = await call<{ status: string; analysis: unknown }>(
          api.baseUrl,
          `/api/v1/investigations/${alert.investigation_id}`,
        );
        return mode === 'kafka' || one.body.status === 'completed' ? one : undefined;
      },
      20_000,
      'the investigation (role all runs the investigator)',
    );
    expect(investigation.status).toBe(200);
    expect((await call(api.baseUrl, '/api/v1/investigations')).status).toBe(200);
    const opened = await call<{ id: string; status: string }>(
      api.baseUrl,
      '/api/v1/investigations',
      {
        method: 'POST',
        body: { service_id: alert.service_id, from: at(-5), to: at(3) },
      },
    );
    expect(opened).toMatchObject({ status: 202, body: { status: 'queued' } });
    expect(opened.headers.get('location')).toBe(`/api/v1/investigations/${opened.body.id}`);
    expect(
      (await call(api.baseUrl, `/api/v1/alerts/rules/${ruleId}`, { method: 'DELETE' })).status,
    ).toBe(204);
    expect((await call(api.baseUrl, `/api/v1/alerts/rules/${ruleId}`)).status).toBe(404);
    expect((await call(api.baseUrl, '/api/v1/notification-channels')).status).toBe(200);

    // Every answer above (rules, channels, alerts, deliveries, services) is as documented.
    const served = await call<Parameters<typeof expectExchangesDocumented>[1]>(
      api.baseUrl,
      '/api/v1/openapi.json',
    );
    expectExchangesDocumented(
      exchanges.filter((exchange) => exchange.path !== '/api/v1/openapi.json'),
      served.body,
    );
  });

  it('applies a rule to every sample accepted after its create answered, and a disabled one to none', async () => {
    // The last test's roles share the consumer groups: they must not take this topic's partitions.
    await Promise.all(stacks.splice(0).map((each) => each.stop()));
    // Rules are polled once in ten minutes here: only the check before each batch can explain
    // an alert on a sample sent right after the rule was created.
    const stack = await createMonitorStack(
      `rule_at_once_${mode}`,
      { MONITOR_BOOTSTRAP_API_KEY: key, EVALUATOR_RULE_POLL_MS: '600000' },
      { bus: mode === 'kafka' ? 'kafka' : 'in-process' },
    );
    stacks.push(stack);
    let gateway: RoleProcess, api: RoleProcess;
    if (mode === 'kafka') {
      [gateway, api] = await Promise.all([
        stack.start('gateway'),
        stack.start('api'),
        stack.start('evaluator'),
        stack.start('writer'),
      ]);
    } else {
      gateway = api = await stack.start('all');
    }
    const rule = async (metric: string) => {
      const created = await call<{ id: string }>(api.baseUrl, '/api/v1/alerts/rules', {
        method: 'POST',
        body: buildAlertRuleCreateRequest({ name: `${metric} high`, metric, severity: 'info' }),
      });
      expect(created.status).toBe(201);
      return created.body.id;
    };
    const ingest = async (host: string, metrics: Record<string, number>, offsetMs: number) => {
      const timestamp = new Date(Date.now() - 60_000 + offsetMs).toISOString();
      expect(
        (await postIngest(gateway.baseUrl, { host, timestamp, metrics }, { key })).status,
      ).toBe(200);
    };
    const alertsOf = async (ruleId: string) =>
      (
        await call<{ alerts: AlertItem[] }>(
          api.baseUrl,
          `/api/v1/alerts?status=all&rule_id=${ruleId}`,
        )
      ).body.alerts;

    const cpuRule = await rule('cpu_percent');
    await ingest('quick-1', { cpu_percent: 95 }, 0);
    const fired = await waitFor(
      async () => ((await alertsOf(cpuRule)).length > 0 ? alertsOf(cpuRule) : undefined),
      30_000,
      'the alert of a rule created just before the sample',
    );
    expect(fired).toMatchObject([{ host: 'quick-1', status: 'active', value: 95 }]);

    const disabled = await call(api.baseUrl, `/api/v1/alerts/rules/${cpuRule}`, {
      method: 'PATCH',
      body: { enabled: false },
    });
    expect(disabled.status).toBe(200);
    await ingest('quick-2', { cpu_percent: 99 }, 1);
    // Same host, later in its partition: once the memory rule created after that sample fired
    // on the next one, the evaluator has passed the cpu sample too.
    const memRule = await rule('memory_percent');
    await ingest('quick-2', { memory_percent: 99 }, 2);
    await waitFor(
      async () => ((await alertsOf(memRule)).length > 0 ? true : undefined),
      30_000,
      'the alert of the rule created after the disable',
    );
    expect((await alertsOf(cpuRule)).map((alert) => alert.host)).toEqual(['quick-1']);
  });
});
