import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { MonitorContainer } from '@monitor/testcontainers';
import type { StartedMonitorContainer } from '@monitor/testcontainers';

let monitor: StartedMonitorContainer;

beforeAll(async () => {
  monitor = await new MonitorContainer().start();
}, 180_000);

afterAll(async () => {
  await monitor.stop();
});

it('lists a host once it has sent samples', async () => {
  const headers = { 'x-api-key': monitor.getApiKey(), 'content-type': 'application/json' };
  const ingest = await fetch(`${monitor.getBaseUrl()}/api/v1/ingest`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ host: 'web-1', metrics: { cpu_percent: 42.5 } }),
  });
  expect(ingest.status).toBe(200);

  await vi.waitFor(
    async () => {
      const res = await fetch(`${monitor.getBaseUrl()}/api/v1/services`, { headers });
      const body = (await res.json()) as { services: { name: string }[] };
      expect(body.services.map((service) => service.name)).toContain('web-1');
    },
    { timeout: 30_000, interval: 500 },
  );
});
