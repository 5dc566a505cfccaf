import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ingestPath } from '@monitor/schemas';
import type { ProbeAlert, ProbeDeps } from './alert-probe.js';

/** The alert probe's reach into the gateway and the API over HTTP; any answer but success throws. */
export function createAlertProbeDeps(
  gatewayBaseUrl: string,
  apiBaseUrl: string,
  headers: Record<string, string>,
): ProbeDeps {
  return {
    async ingest(sample) {
      const response = await fetch(new URL(ingestPath, gatewayBaseUrl), {
        method: 'POST',
        headers,
        body: JSON.stringify(sample),
      });
      const text = await response.text();
      if (response.status !== 200)
        throw new Error(`probe ingest answered ${response.status}: ${text.slice(0, 300)}`);
    },
    async listAlerts(ruleId) {
      const url = new URL('/api/v1/alerts', apiBaseUrl);
      url.search = new URLSearchParams({ rule_id: ruleId, status: 'all', limit: '5' }).toString();
      const response = await fetch(url, { headers });
      const text = await response.text();
      if (response.status !== 200)
        throw new Error(`GET /api/v1/alerts answered ${response.status}: ${text.slice(0, 300)}`);
      return (JSON.parse(text) as { alerts: ProbeAlert[] }).alerts;
    },
    async investigationStatus(id) {
      const response = await fetch(new URL(`/api/v1/investigations/${id}`, apiBaseUrl), {
        headers,
      });
      const text = await response.text();
      if (response.status !== 200)
        throw new Error(
          `GET /api/v1/investigations/:id answered ${response.status}: ${text.slice(0, 300)}`,
        );
      return (JSON.parse(text) as { status: string }).status;
    },
    now: () => performance.now(),
    sleep,
  };
}
