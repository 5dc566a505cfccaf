import { describe, expect, it } from 'vitest';
import { alertmanagerConfig } from './alertmanager.js';

describe('alertmanagerConfig', () => {
  it('routes every alert to the webhook, resolutions included, grouped by alertname', () => {
    expect(alertmanagerConfig({ webhookUrl: 'http://127.0.0.1:9/hook' })).toEqual({
      route: {
        receiver: 'test',
        group_by: ['alertname'],
        group_wait: '1s',
        group_interval: '1s',
        repeat_interval: '1h',
      },
      receivers: [
        {
          name: 'test',
          webhook_configs: [{ url: 'http://127.0.0.1:9/hook', send_resolved: true, max_alerts: 0 }],
        },
      ],
    });
  });

  it('takes the grouping labels and the wait', () => {
    const config = alertmanagerConfig({
      webhookUrl: 'http://127.0.0.1:9/hook',
      groupBy: ['host'],
      groupWaitSeconds: 3,
    });
    expect(config['route']).toMatchObject({ group_by: ['host'], group_wait: '3s' });
  });
});
