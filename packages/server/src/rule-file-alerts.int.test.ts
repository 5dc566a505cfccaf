// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertResponse } from '@monitor/schemas';
import type { HttpReceiver, RunningAlertmanager } from '@monitor/testkit';
import { alertmanagerMessages, startAlertmanager, startHttpReceiver } from '@monitor/testkit';
import { createApiCall, waitFor } from '@monitor/testkit/builders';
import { newOrganization } from './testing/api-target.js';
import { postIngest } from './testing/ingest-client.js';
import type { LocalApiTarget } from './testing/monitor-stack.js';
import { startLocalApiTarget } from './testing/monitor-stack.js';

const publicUrl = 'http://monitor.example';
const group = [
  'name: heat',
  'interval: 1s',
  'rules:',
  '- alert: Hot',
  '  expr: temp > 50',
  '  labels: { severity: critical, team: "{{ $labels.host }}-team" }',
  '  annotations: { summary: "{{ $labels.host }} at {{ $value }}" }',
].join('\n');

describe('alerts of Prometheus rule files', () => {
  let receiver: HttpReceiver;
  let alertmanager: RunningAlertmanager;
  let target: LocalApiTarget;
  let key: string;

  const messages = () => alertmanagerMessages(receiver);

  const api = createApiCall({ baseUrl: () => `${target.apiUrl}/api/v1`, key: () => key });
  const rules = createApiCall({ baseUrl: () => `${target.apiUrl}/prometheus/config/v1/rules` });
  const alertmanagerApi = createApiCall({ baseUrl: () => alertmanager.url });

  async function activeAlerts(): Promise<AlertResponse[]> {
    return (await api<{ alerts: AlertResponse[] }>('/alerts?status=active')).body.alerts;
  }

  async function ingest(values: Record<string, number>): Promise<void> {
    const result = await postIngest(
      target.ingestUrl,
      Object.entries(values).map(([host, temp]) => ({
        host,
        timestamp: new Date().toISOString(),
        metrics: { temp },
      })),
      { key },
    );
    expect(result.status).toBe(200);
  }

  /** What Alertmanager holds now (its own API). */
  async function inAlertmanager(): Promise<{ labels: Record<string, string> }[]> {
    const { body } = await alertmanagerApi<{ labels: Record<string, string> }[]>(
      '/api/v2/alerts?filter=alertname="Hot"',
    );
    return body;
  }

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    alertmanager = await startAlertmanager({ webhookUrl: receiver.url, groupWaitSeconds: 1 });
    target = await startLocalApiTarget('rule_file_alerts', 'embedded', {
      RULE_EVALUATION_INTERVAL_SECONDS: '1',
      NOTIFIER_ALERTMANAGER_RESEND_MS: '2000',
      PUBLIC_URL: publicUrl,
    });
    ({ key } = await newOrganization(target.db));
  }, 60_000);

  afterAll(async () => {
    await target?.stop();
    await alertmanager?.stop();
    await receiver?.close();
  });

  it('lists, notifies through Alertmanager, re-sends, resolves, acknowledges and silences them', async () => {
    const channel = await api('/notification-channels/alertmanager', {
      method: 'PUT',
      body: { urls: [alertmanager.url], timeout_seconds: 5 },
    });
    expect(channel.status).toBe(200);
    await ingest({ 'web-1': 99, 'web-2': 98 });
    const posted = await rules('/thermal', {
      method: 'POST',
      bearer: key,
      raw: { data: group, contentType: 'application/yaml' },
    });
    expect(posted.status).toBe(202);

    // Two alerts of one rule, each an alert of /api/v1/alerts with the rule's id and name.
    const fired = await waitFor(
      async () => {
        const alerts = await activeAlerts();
        return alerts.length === 2 ? alerts : undefined;
      },
      30_000,
      'two active alerts',
    );
    const byHost = new Map(fired.map((alert) => [alert.host, alert]));
    const web1 = byHost.get('web-1')!;
    expect(web1).toMatchObject({
      rule_id: expect.stringMatching(/^rul_/) as unknown,
      rule_name: 'Hot',
      metric: 'Hot',
      condition: null,
      threshold: null,
      severity: 'critical',
      status: 'active',
      value: 99,
      labels: { alertname: 'Hot', host: 'web-1', severity: 'critical', team: 'web-1-team' },
      annotations: { summary: 'web-1 at 99' },
      investigation_id: expect.stringMatching(/^inv_/) as unknown,
    });
    expect(byHost.get('web-2')?.rule_id).toBe(web1.rule_id);
    expect(
      (await api<{ alerts: AlertResponse[] }>(`/alerts?rule_id=${web1.rule_id}`)).body.alerts,
    ).toHaveLength(2);

    // Alertmanager groups both into one notification, with exactly their labels and annotations.
    const firing = await waitFor(
      () =>
        Promise.resolve(
          messages().find(
            (message) =>
              message.status === 'firing' &&
              message.alerts.filter((alert) => alert.status === 'firing').length === 2,
          ),
        ),
      30_000,
      'both alerts in one group notification',
    );
    for (const received of firing.alerts) {
      const alert = byHost.get(received.labels['host']!)!;
      expect(received.labels).toEqual(alert.labels);
      expect(received.annotations).toEqual(alert.annotations);
      // Alertmanager writes times as Go does, without a fraction's trailing zeros (.99Z).
      expect(Date.parse(received.startsAt)).toBe(Date.parse(alert.fired_at));
      expect(received.generatorURL).toBe(`${publicUrl}/alerts?rule_id=${alert.rule_id}&status=all`);
    }
    const notified = await api<{ notifications: { transition: string; status: string }[] }>(
      `/alerts/${web1.id}/notifications`,
    );
    expect(notified.body.notifications).toEqual([
      expect.objectContaining({ transition: 'fired', status: 'delivered' }),
    ]);

    // A restarted Alertmanager knows no alert; the evaluations' re-sends give both back.
    await alertmanager.stop();
    alertmanager = await startAlertmanager({
      webhookUrl: receiver.url,
      groupWaitSeconds: 1,
      port: alertmanager.port,
    });
    await waitFor(
      async () => ((await inAlertmanager()).length === 2 ? true : undefined),
      30_000,
      'both alerts back in the restarted Alertmanager',
    );

    // web-2 cools down: its alert resolves, and Alertmanager hears it resolved at that time.
    await ingest({ 'web-2': 20 });
    const resolved = await waitFor(
      async () => {
        const { body } = await api<AlertResponse>(`/alerts/${byHost.get('web-2')!.id}`);
        return body.status === 'resolved' ? body : undefined;
      },
      30_000,
      'the alert of web-2 resolved',
    );
    const resolution = await waitFor(
      () =>
        Promise.resolve(
          messages()
            .flatMap((message) => message.alerts)
            .find((alert) => alert.status === 'resolved' && alert.labels['host'] === 'web-2'),
        ),
      30_000,
      'the resolution in Alertmanager',
    );
    expect(Date.parse(resolution.endsAt)).toBe(Date.parse(resolved.resolved_at!));
    expect((await activeAlerts()).map((alert) => alert.host)).toEqual(['web-1']);

    // Acknowledged and silenced like any other alert.
    const acknowledged = await api<AlertResponse>(`/alerts/${web1.id}/acknowledge`, {
      method: 'POST',
      body: { comment: 'on it' },
    });
    expect(acknowledged.status).toBe(200);
    expect(acknowledged.body.acknowledgement_comment).toBe('on it');
    const now = Date.now();
    const silence = await api('/silences', {
      method: 'POST',
      body: {
        matchers: { rule_id: web1.rule_id },
        starts_at: new Date(now - 60_000).toISOString(),
        ends_at: new Date(now + 3_600_000).toISOString(),
        comment: 'maintenance',
      },
    });
    expect(silence.status).toBe(201);
    const silenced = await api<{ alerts: AlertResponse[] }>('/alerts?silenced=true');
    expect(silenced.body.alerts.map((alert) => alert.id)).toEqual([web1.id]);
  }, 180_000);
});
