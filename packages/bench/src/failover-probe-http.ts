import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { partitionForKey } from '@monitor/bus';
import { defaultOrganizationId } from '@monitor/db';
import { ingestPath } from '@monitor/schemas';
import type { PartitionProbeDeps } from './failover-probe.js';
import {
  failoverProbeMetric,
  failoverProbeTag,
  failoverProbeThreshold,
  failoverSeqMetric,
} from './failover-probe.js';
import { createRules } from './rules-api.js';

/**
 * What the failover scenarios share: the probe hosts (one per partition), their rules, and the
 * probe's reach into the gateway and the API over HTTP.
 */

/** One host name per partition of the samples topic (key `org:host`, as the gateway keys it). */
export function probeHosts(partitions: number): string[] {
  const hosts: string[] = new Array<string>(partitions);
  let found = 0;
  for (let i = 0; found < partitions; i++) {
    const host = `failover-probe-${i}`;
    const partition = partitionForKey(`${defaultOrganizationId}:${host}`, partitions);
    if (hosts[partition] === undefined) {
      hosts[partition] = host;
      found += 1;
    }
  }
  return hosts;
}

/** One rule per probe host: fires on a breaching sample of its host (duration 0, info). */
export function createProbeRules(
  apiBaseUrl: string,
  headers: Record<string, string>,
  hosts: readonly string[],
): Promise<string[]> {
  const rules = hosts.map((host) => ({
    name: `failover probe ${host}`,
    metric: failoverProbeMetric,
    condition: 'greater_than',
    threshold: failoverProbeThreshold,
    duration_minutes: 0,
    // info: no investigation is opened for it, so the probe measures the evaluator alone.
    severity: 'info',
    scope: { [failoverProbeTag]: host },
  }));
  return createRules(apiBaseUrl, headers, rules);
}

/**
 * How a probe reads a host's stored step: `services`, the services list filtered by its tag (it
 * asks every shard, so it fails while one is away); `promql-partial`, PromQL with
 * `partial_response=true` (a shard that is away leaves out its own hosts only).
 */
export type StoredVia = 'services' | 'promql-partial';

export function createProbeDeps(
  gatewayBaseUrl: string,
  apiBaseUrl: string,
  headers: Record<string, string>,
  storedVia: StoredVia,
): PartitionProbeDeps {
  /**
   * The body of a 200; undefined on a 503 or no answer within 10 s (no database for now: the
   * probe polls on, and a sample's latency counts the wait).
   */
  const get = async (url: URL): Promise<unknown> => {
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
      text = await response.text();
    } catch (err) {
      if (err instanceof DOMException && err.name === 'TimeoutError') return undefined;
      throw err;
    }
    if (response.status === 503) return undefined;
    if (response.status !== 200)
      throw new Error(`GET ${url.pathname} answered ${response.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  return {
    async ingest(sample) {
      // A 503 (the bus busy, a dependency away for a moment) is retried for up to 10 s: the
      // probe measures from the 200.
      for (let attempt = 1; ; attempt++) {
        const response = await fetch(new URL(ingestPath, gatewayBaseUrl), {
          method: 'POST',
          headers,
          body: JSON.stringify(sample),
        });
        const text = await response.text();
        if (response.status === 200) return;
        if (attempt >= 50 || response.status !== 503)
          throw new Error(`probe ingest answered ${response.status}: ${text.slice(0, 300)}`);
        await sleep(200);
      }
    },
    async listAlerts(ruleId) {
      const url = new URL('/api/v1/alerts', apiBaseUrl);
      url.search = new URLSearchParams({ rule_id: ruleId, status: 'all', limit: '3' }).toString();
      const body = (await get(url)) as
        { alerts: { status: string; fired_at: string }[] } | undefined;
      return body?.alerts ?? [];
    },
    async storedSeq(host) {
      if (storedVia === 'promql-partial') {
        const url = new URL('/prometheus/api/v1/query', apiBaseUrl);
        // The probe's steps are an hour back in event time: past the lookback of an instant read.
        url.search = new URLSearchParams({
          query: `max_over_time(${failoverSeqMetric}{host=${JSON.stringify(host)}}[2h])`,
          partial_response: 'true',
        }).toString();
        const body = (await get(url)) as
          { data: { result: { value: [number, string] }[] } } | undefined;
        const value = body?.data.result[0]?.value[1];
        return value === undefined ? undefined : Number(value);
      }
      const url = new URL('/api/v1/services', apiBaseUrl);
      url.search = new URLSearchParams({ [`tag.${failoverProbeTag}`]: host }).toString();
      const body = (await get(url)) as
        { services: { metrics: Record<string, number> }[] } | undefined;
      return body?.services[0]?.metrics[failoverSeqMetric];
    },
    now: () => performance.now(),
    sleep: (ms) => sleep(ms),
  };
}
